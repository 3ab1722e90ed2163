"""Factories for the Stripe mirror. Rows are written as `subscription_sync` would write them."""

from datetime import timedelta

import factory
from django.utils import timezone

from apps.subscriptions.models import ComplimentaryAccess, Customer, Subscription
from apps.subscriptions.services import entitlement_refresh
from tests.factories import UserFactory


class _RefreshesEntitlement:
    """The services store the reader's access window with every row they write; so do these factories (and the
    reader object passed in sees it, as the next request would). A test that changes a row afterwards calls a
    service, or entitlement_refresh, as the site would."""

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        row = super()._create(model_class, *args, **kwargs)
        user = cls._user(row)
        entitlement_refresh(user_id=user.pk)
        user.refresh_from_db(fields=["access_source", "access_from", "access_until"])
        return row


class CustomerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Customer

    user = factory.SubFactory(UserFactory)
    stripe_id = factory.Sequence(lambda n: f"cus_test{n:06d}")
    email = factory.SelfAttribute("user.email")


class SubscriptionFactory(_RefreshesEntitlement, factory.django.DjangoModelFactory):
    class Meta:
        model = Subscription

    @staticmethod
    def _user(row):
        return row.customer.user

    customer = factory.SubFactory(CustomerFactory)
    stripe_id = factory.Sequence(lambda n: f"sub_test{n:06d}")
    status = Subscription.Status.ACTIVE
    price_id = "price_monthly_test"
    interval = "month"
    unit_amount = 1200
    currency = "eur"
    current_period_start = factory.LazyFunction(lambda: timezone.now() - timedelta(days=3))
    current_period_end = factory.LazyAttribute(lambda o: o.current_period_start + timedelta(days=30))
    stripe_created = factory.LazyAttribute(lambda o: o.current_period_start)


class ComplimentaryAccessFactory(_RefreshesEntitlement, factory.django.DjangoModelFactory):
    class Meta:
        model = ComplimentaryAccess

    @staticmethod
    def _user(row):
        return row.user

    user = factory.SubFactory(UserFactory)
    reason = "review copy"

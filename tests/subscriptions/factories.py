"""Factories for the Stripe mirror. Rows are written as `subscription_sync` would write them."""

from datetime import timedelta

import factory
from django.utils import timezone

from apps.subscriptions.models import ComplimentaryAccess, Customer, Subscription
from tests.factories import UserFactory


class CustomerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Customer

    user = factory.SubFactory(UserFactory)
    stripe_id = factory.Sequence(lambda n: f"cus_test{n:06d}")
    email = factory.SelfAttribute("user.email")


class SubscriptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Subscription

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


class ComplimentaryAccessFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ComplimentaryAccess

    user = factory.SubFactory(UserFactory)
    reason = "review copy"

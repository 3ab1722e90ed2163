"""has_subscriber_access: access from stored state only, per state and at the edges of each period."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone

from apps.reading.policy import has_full_access
from apps.subscriptions.models import Subscription
from apps.subscriptions.selectors import has_subscriber_access
from tests.factories import UserFactory
from tests.subscriptions.factories import ComplimentaryAccessFactory, SubscriptionFactory
from tests.subscriptions.visitors import FULL_ACCESS_KINDS, VISITOR_KINDS, make_visitor

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", VISITOR_KINDS)
def test_each_visitor_kind_has_the_access_its_state_gives(kind):
    visitor = make_visitor(kind)
    assert has_subscriber_access(visitor) is (kind in FULL_ACCESS_KINDS)


@pytest.mark.parametrize(
    "status",
    ["incomplete", "incomplete_expired", "unpaid", "canceled", "paused"],
)
def test_statuses_that_never_give_access(status):
    subscription = SubscriptionFactory(status=status)
    assert not has_subscriber_access(subscription.customer.user)


def test_the_past_due_grace_period_counts_from_when_it_became_past_due():
    became_past_due = timezone.now() - timedelta(days=2)
    subscription = SubscriptionFactory(status=Subscription.Status.PAST_DUE, past_due_since=became_past_due)
    user = subscription.customer.user
    grace_end = became_past_due + timedelta(days=7)

    assert has_subscriber_access(user, now=grace_end - timedelta(seconds=1))
    assert not has_subscriber_access(user, now=grace_end)
    with override_settings(SUBSCRIPTION_PAST_DUE_GRACE_DAYS=1):
        assert not has_subscriber_access(user)
    with override_settings(SUBSCRIPTION_PAST_DUE_GRACE_DAYS=0):
        assert not has_subscriber_access(user, now=became_past_due + timedelta(seconds=1))


def test_cancel_at_period_end_keeps_access_until_the_period_ends_even_without_the_deleted_event():
    subscription = SubscriptionFactory(cancel_at_period_end=True)
    user, period_end = subscription.customer.user, subscription.current_period_end

    assert has_subscriber_access(user, now=period_end - timedelta(seconds=1))
    assert not has_subscriber_access(user, now=period_end)


def test_a_scheduled_cancel_at_ends_access_at_that_time():
    subscription = SubscriptionFactory(cancel_at=timezone.now() + timedelta(days=2))
    user = subscription.customer.user
    assert has_subscriber_access(user)
    assert not has_subscriber_access(user, now=subscription.cancel_at)


def test_one_subscription_giving_access_is_enough():
    user = UserFactory()
    SubscriptionFactory(customer__user=user, status=Subscription.Status.CANCELED)
    assert not has_subscriber_access(user)
    SubscriptionFactory(customer=user.stripe_customer, status=Subscription.Status.ACTIVE)
    assert has_subscriber_access(user)


def test_complimentary_access_has_a_start_an_optional_end_and_can_be_revoked():
    now = timezone.now()
    access = ComplimentaryAccessFactory(starts_at=now + timedelta(days=1), ends_at=now + timedelta(days=3))
    user = access.user

    assert not has_subscriber_access(user, now=now)
    assert has_subscriber_access(user, now=now + timedelta(days=2))
    assert not has_subscriber_access(user, now=now + timedelta(days=3))

    access.ends_at = None
    access.save()
    assert has_subscriber_access(user, now=now + timedelta(days=400))

    access.revoked_at = now
    access.save()
    assert not has_subscriber_access(user, now=now + timedelta(days=2))


def test_access_never_leaks_between_users():
    SubscriptionFactory()
    ComplimentaryAccessFactory()
    assert not has_subscriber_access(UserFactory())


def test_one_query_and_the_reading_policy_asks_once_per_request(rf, django_assert_max_num_queries):
    user = make_visitor("active")
    with django_assert_max_num_queries(1):
        assert has_subscriber_access(user)

    request = rf.get("/")
    request.user = user
    with CaptureQueriesContext(connection) as queries:
        assert has_full_access(request.user)
        assert has_full_access(request.user)
    assert len(queries) == 1


def test_staff_may_read_everything_without_a_subscribers_access():
    staff = make_visitor("staff")
    assert has_full_access(staff) and not has_subscriber_access(staff)


def test_anonymous_and_unsaved_users_have_no_access(django_assert_num_queries):
    from django.contrib.auth.models import AnonymousUser

    with django_assert_num_queries(0):
        assert not has_subscriber_access(AnonymousUser())
        assert not has_subscriber_access(None)

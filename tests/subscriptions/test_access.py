"""has_subscriber_access: access from stored state only, per state and at the edges of each period."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone

from apps.reading.policy import has_full_access
from apps.subscriptions.models import ComplimentaryAccess, Subscription
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


def test_the_one_statement_agrees_with_the_querysets_that_define_access_in_every_state():
    """has_subscriber_access is a hand-written statement (apps/subscriptions/selectors.py) for the querysets
    Subscription.objects.giving_access and ComplimentaryAccess.objects.current: one reader per combination of
    status, scheduled cancellation, period end and past-due age, and per grant, asked at three moments."""
    now = timezone.now()
    day = timedelta(days=1)
    grace = timedelta(days=7)  # SUBSCRIPTION_PAST_DUE_GRACE_DAYS in the test settings
    readers = []
    for status in Subscription.Status.values:
        for cancel_at_period_end in (False, True):
            for period_end in (None, now - day, now + day):
                for cancel_at in (None, now - day, now + day):
                    for past_due_since in (None, now - grace - day, now - grace + day):
                        subscription = SubscriptionFactory(
                            status=status,
                            cancel_at_period_end=cancel_at_period_end,
                            current_period_end=period_end,
                            cancel_at=cancel_at,
                            past_due_since=past_due_since,
                        )
                        readers.append(subscription.customer.user)
    for starts_at in (now - 2 * day, now + day):
        for ends_at in (None, now - day, now + 2 * day):
            if ends_at is not None and ends_at <= starts_at:
                continue  # refused by the table's check constraint
            for revoked_at in (None, now - day):
                grant = ComplimentaryAccessFactory(starts_at=starts_at, ends_at=ends_at, revoked_at=revoked_at)
                readers.append(grant.user)
    readers.append(UserFactory())

    for moment in (now - 2 * day, now, now + 3 * day):
        by_subscription = set(
            Subscription.objects.giving_access(now=moment).values_list("customer__user_id", flat=True)
        )
        by_grant = set(ComplimentaryAccess.objects.current(now=moment).values_list("user_id", flat=True))
        expected = {reader.pk: reader.pk in by_subscription | by_grant for reader in readers}
        answered = {reader.pk: has_subscriber_access(reader, now=moment) for reader in readers}
        assert answered == expected, moment
        assert 0 < sum(expected.values()) < len(readers)

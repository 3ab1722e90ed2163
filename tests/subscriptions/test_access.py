"""The reader's stored entitlement (services.entitlement) and has_subscriber_access, which reads it: access from
stored state only, per state and at the edges of each period."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test.utils import override_settings
from django.utils import timezone

from apps.accounts.models import User
from apps.reading.policy import has_full_access
from apps.subscriptions.models import Subscription
from apps.subscriptions.services import (
    complimentary_access_change,
    complimentary_access_revoke,
    subscription_gives_access,
)
from tests.factories import UserFactory
from tests.subscriptions.factories import ComplimentaryAccessFactory, SubscriptionFactory
from tests.subscriptions.visitors import FULL_ACCESS_KINDS, VISITOR_KINDS, make_visitor, stored_access

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", VISITOR_KINDS)
def test_each_visitor_kind_has_the_access_its_state_gives(kind):
    visitor = make_visitor(kind)
    assert stored_access(visitor) is (kind in FULL_ACCESS_KINDS)


@pytest.mark.parametrize(
    "status",
    ["incomplete", "incomplete_expired", "unpaid", "canceled", "paused"],
)
def test_statuses_that_never_give_access(status):
    subscription = SubscriptionFactory(status=status)
    assert not stored_access(subscription.customer.user)


def test_the_past_due_grace_period_counts_from_when_it_became_past_due():
    became_past_due = timezone.now() - timedelta(days=2)
    subscription = SubscriptionFactory(status=Subscription.Status.PAST_DUE, past_due_since=became_past_due)
    user = subscription.customer.user
    grace_end = became_past_due + timedelta(days=7)

    assert stored_access(user, now=grace_end - timedelta(seconds=1))
    assert not stored_access(user, now=grace_end)
    # The grace is stored in the window: a new setting takes effect when the command recomputes it.
    with override_settings(SUBSCRIPTION_PAST_DUE_GRACE_DAYS=1):
        call_command("entitlements_refresh", stdout=io.StringIO())
        assert not stored_access(user)
    with override_settings(SUBSCRIPTION_PAST_DUE_GRACE_DAYS=10):
        call_command("entitlements_refresh", stdout=io.StringIO())
        assert stored_access(user, now=grace_end)
        assert not stored_access(user, now=became_past_due + timedelta(days=10))


def test_cancel_at_period_end_keeps_access_until_the_period_ends_even_without_the_deleted_event():
    subscription = SubscriptionFactory(cancel_at_period_end=True)
    user, period_end = subscription.customer.user, subscription.current_period_end

    assert stored_access(user, now=period_end - timedelta(seconds=1))
    assert not stored_access(user, now=period_end)


def test_a_scheduled_cancel_at_ends_access_at_that_time():
    subscription = SubscriptionFactory(cancel_at=timezone.now() + timedelta(days=2))
    user = subscription.customer.user
    assert stored_access(user)
    assert not stored_access(user, now=subscription.cancel_at)


def test_one_subscription_giving_access_is_enough():
    user = UserFactory()
    SubscriptionFactory(customer__user=user, status=Subscription.Status.CANCELED)
    assert not stored_access(user)
    SubscriptionFactory(customer=user.stripe_customer, status=Subscription.Status.ACTIVE)
    assert stored_access(user)


def test_complimentary_access_has_a_start_an_optional_end_and_can_be_revoked():
    now = timezone.now()
    access = ComplimentaryAccessFactory(starts_at=now + timedelta(days=1), ends_at=now + timedelta(days=3))
    user = access.user

    assert not stored_access(user, now=now)
    assert stored_access(user, now=now + timedelta(days=2))
    assert not stored_access(user, now=now + timedelta(days=3))

    access.ends_at = None
    complimentary_access_change(access=access)
    assert stored_access(user, now=now + timedelta(days=400))

    complimentary_access_revoke(access=access)
    assert not stored_access(user, now=now + timedelta(days=2))


def test_access_never_leaks_between_users():
    SubscriptionFactory()
    ComplimentaryAccessFactory()
    assert not stored_access(UserFactory())


def test_the_reading_policy_asks_the_loaded_reader_not_the_database(django_assert_num_queries):
    subscriber = User.objects.get(pk=make_visitor("active").pk)
    former = User.objects.get(pk=make_visitor("canceled").pk)
    with django_assert_num_queries(0):
        assert has_full_access(subscriber)
        assert not has_full_access(former)


def test_staff_may_read_everything_without_a_subscribers_access():
    staff = make_visitor("staff")
    assert has_full_access(staff) and not stored_access(staff)


def test_anonymous_and_unsaved_users_have_no_access(django_assert_num_queries):
    from django.contrib.auth.models import AnonymousUser

    with django_assert_num_queries(0):
        assert not stored_access(AnonymousUser())
        assert not stored_access(None)


def test_the_stored_window_agrees_with_each_row_in_every_state():
    """One reader per combination of status, scheduled cancellation, period end and past-due age, and per grant:
    the window stored on the reader answers, from now on, what the row itself gives (subscription_gives_access,
    ComplimentaryAccess.is_current)."""
    now = timezone.now()
    day = timedelta(days=1)
    grace = timedelta(days=7)  # SUBSCRIPTION_PAST_DUE_GRACE_DAYS in the test settings
    rows = []
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
                        rows.append((subscription.customer.user, subscription))
    for starts_at in (now - 2 * day, now + day):
        for ends_at in (None, now - day, now + 2 * day):
            if ends_at is not None and ends_at <= starts_at:
                continue  # refused by the table's check constraint
            for revoked_at in (None, now - day):
                grant = ComplimentaryAccessFactory(starts_at=starts_at, ends_at=ends_at, revoked_at=revoked_at)
                rows.append((grant.user, grant))

    for moment in (timezone.now(), now + day - timedelta(microseconds=1), now + day, now + 3 * day):
        expected = {
            user.pk: (
                subscription_gives_access(row, now=moment)
                if isinstance(row, Subscription)
                else row.is_current(now=moment)
            )
            for user, row in rows
        }
        answered = {user.pk: stored_access(user, now=moment) for user, _ in rows}
        assert answered == expected, moment
        assert 0 < sum(expected.values()) < len(rows)


def test_a_subscription_and_a_grant_that_touch_make_one_window_and_a_gap_is_crossed_later():
    now = timezone.now()
    user = UserFactory()
    SubscriptionFactory(customer__user=user, cancel_at=now + timedelta(days=2))
    ComplimentaryAccessFactory(user=user, starts_at=now + timedelta(days=2), ends_at=now + timedelta(days=5))
    assert stored_access(user, now=now + timedelta(days=4)) and not stored_access(user, now=now + timedelta(days=5))

    later = UserFactory()
    SubscriptionFactory(customer__user=later, cancel_at=now + timedelta(days=1))
    ComplimentaryAccessFactory(user=later, starts_at=now + timedelta(days=3), ends_at=now + timedelta(days=5))
    assert not stored_access(later, now=now + timedelta(days=2))
    # Once the first window has ended, the periodic task stores the next one.
    refresh_ended_entitlements_at(now + timedelta(days=2))
    assert stored_access(later, now=now + timedelta(days=3))
    assert not stored_access(later, now=now + timedelta(days=3) - timedelta(microseconds=1))


def refresh_ended_entitlements_at(moment):
    from apps.subscriptions.services import entitlements_refresh_all

    assert entitlements_refresh_all(now=moment, ended_only=True) == 1

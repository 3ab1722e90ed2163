"""A reader's full access begins and ends exactly at the stored boundaries (period end with a scheduled cancellation,
the end of past_due grace, cancel_at, a grant's start and end), and a page asks no subscription table to know it:
the entitlement is stored on the reader when the subscription or grant changes (apps.subscriptions.services)."""

from datetime import timedelta
from unittest import mock

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.subscriptions.models import ComplimentaryAccess, Customer, StripeEvent, Subscription
from tests.conftest import LOCKED_SENTINELS
from tests.factories import UserFactory
from tests.subscriptions.factories import ComplimentaryAccessFactory, SubscriptionFactory

SUBSCRIPTION_TABLES = [model._meta.db_table for model in (Subscription, ComplimentaryAccess, Customer, StripeEvent)]
TICK = timedelta(microseconds=1)


def _period_end(user, at):
    SubscriptionFactory(customer__user=user, cancel_at_period_end=True, current_period_end=at)


def _grace_end(user, at):
    grace = timedelta(days=settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS)
    SubscriptionFactory(customer__user=user, status=Subscription.Status.PAST_DUE, past_due_since=at - grace)


def _cancel_at(user, at):
    SubscriptionFactory(customer__user=user, cancel_at=at)


def _grant_end(user, at):
    ComplimentaryAccessFactory(user=user, ends_at=at)


def _grant_start(user, at):
    ComplimentaryAccessFactory(user=user, starts_at=at)


# (how the boundary is made, whether access begins there rather than ends)
BOUNDARIES = [(_period_end, False), (_grace_end, False), (_cancel_at, False), (_grant_end, False), (_grant_start, True)]


def _reads_locked_at(client, moment) -> bool:
    with mock.patch("django.utils.timezone.now", return_value=moment), CaptureQueriesContext(connection) as queries:
        response = client.get("/capsules/locked-two/")
    assert response.status_code == 200
    asked = [query["sql"] for query in queries if any(table in query["sql"] for table in SUBSCRIPTION_TABLES)]
    assert asked == [], asked
    return any(sentinel in response.content.decode() for sentinel in LOCKED_SENTINELS)


@pytest.mark.parametrize(("make", "begins"), BOUNDARIES, ids=[make.__name__[1:] for make, _ in BOUNDARIES])
def test_access_changes_exactly_at_the_boundary_without_asking_the_subscription_tables(mini_book, make, begins):
    boundary = timezone.now() + timedelta(days=1)
    reader = UserFactory()
    make(reader, boundary)
    client = Client()
    client.force_login(reader)

    assert _reads_locked_at(client, boundary - TICK) is not begins
    assert _reads_locked_at(client, boundary) is begins
    assert _reads_locked_at(client, boundary + timedelta(hours=1)) is begins


def test_staff_read_everything_with_nothing_stored(mini_book):
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    assert _reads_locked_at(client, timezone.now())

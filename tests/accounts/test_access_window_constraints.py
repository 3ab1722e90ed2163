"""The stored access window's shape is the database's to keep (ARCHITECTURE.md, "What the database enforces"): even
a write that names its reader as the entitlement service does (tests/subscriptions/test_access_guard.py has the guard on
who writes) can store only what the service itself could compute."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import ACCESS_SOURCES, User
from apps.subscriptions.access_guard import entitlement_write
from apps.subscriptions.services.entitlement import entitlement_from
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NOW = timezone.now()
DAY = timedelta(days=1)


def write(reader, **window):
    """As the entitlement service writes (apps/subscriptions/access_guard.py): naming the reader, in a transaction."""
    with transaction.atomic(), entitlement_write(reader.pk):
        User.objects.filter(pk=reader.pk).update(**window)


@pytest.mark.parametrize(
    "window, constraint",
    [
        (
            {"access_source": "subscription", "access_from": None, "access_until": None},
            "accounts_user_only_grants_open_ended",
        ),
        (
            {"access_source": "subscription", "access_from": NOW, "access_until": NOW - DAY},
            "accounts_user_access_ends_after_start",
        ),
        (
            {"access_source": "complimentary", "access_from": NOW, "access_until": NOW},
            "accounts_user_access_ends_after_start",
        ),
        ({"access_source": "", "access_from": None, "access_until": NOW + DAY}, "accounts_user_no_source_no_window"),
        (
            {"access_source": "staff", "access_from": None, "access_until": NOW + DAY},
            "accounts_user_access_source_known",
        ),
    ],
    ids=["unbounded-subscription", "ends-before-start", "empty", "no-source", "unknown-source"],
)
def test_a_window_the_service_could_not_compute_is_refused_by_the_database(window, constraint):
    reader = UserFactory()
    with pytest.raises(IntegrityError, match=constraint):
        write(reader, **window)
    reader.refresh_from_db()
    assert (reader.access_source, reader.access_from, reader.access_until) == ("", None, None)


@pytest.mark.parametrize(
    "window",
    [
        {"access_source": "subscription", "access_from": None, "access_until": NOW + DAY},
        {"access_source": "complimentary", "access_from": NOW + DAY, "access_until": None},
        {"access_source": "complimentary+subscription", "access_from": None, "access_until": None},
        {"access_source": "", "access_from": None, "access_until": None},
    ],
    ids=["subscription", "grant-without-end", "both-without-end", "none"],
)
def test_every_shape_the_service_computes_is_stored(window):
    reader = UserFactory()
    write(reader, **window)
    reader.refresh_from_db()
    assert (reader.access_source, reader.access_from, reader.access_until) == tuple(window.values())


def test_the_constraint_knows_every_source_the_service_joins():
    """entitlement_from names a window by its sources, sorted and joined: each combination is a known source."""

    class Grant:
        pk, reason, revoked_at, starts_at, ends_at = 1, "press", None, None, None

    class Paying:
        stripe_id, status, current_period_end, trial_end = "sub_1", "active", NOW + DAY, None
        cancel_at_period_end, cancel_at, synced_at, past_due_since = False, None, NOW, None

    for subscriptions, grants in [([], []), ([Paying], []), ([], [Grant]), ([Paying], [Grant])]:
        entitlement = entitlement_from(subscriptions, grants, now=NOW, grace=DAY)
        assert entitlement.source in ACCESS_SOURCES

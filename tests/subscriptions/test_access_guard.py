"""Only the entitlement service changes a reader's access, and PostgreSQL enforces it
(apps/subscriptions/access_guard.py, ARCHITECTURE.md "What the database enforces"): a QuerySet.update, a raw UPDATE
or an insert that would give access is refused by a trigger, whoever runs it; the service's own writes, and every
save of a reader's other columns, go through."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.subscriptions.access_guard import entitlement_write
from apps.subscriptions.services.complimentary import complimentary_access_grant, complimentary_access_revoke
from apps.subscriptions.services.entitlement import reader_trial_mark
from tests.factories import UserFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the guard is PostgreSQL's (SQLite: code only)"),
]

GUARD = "accounts_user_entitlement_guard"
YEAR_2099 = timezone.now().replace(year=2099)


def stored(reader) -> tuple:
    reader.refresh_from_db()
    return reader.access_source, reader.access_until, reader.trial_used_at


@pytest.mark.parametrize(
    "change",
    [
        {"access_source": "complimentary", "access_until": None, "access_reason": "written by hand"},
        {"access_until": YEAR_2099},
        {"trial_used_at": None},
    ],
    ids=["grant-for-ever", "move-the-end", "forget-the-trial"],
)
def test_a_write_that_is_not_the_services_is_refused_and_changes_nothing(change):
    reader = UserFactory()
    complimentary_access_grant(user=reader, reason="press", ends_at=timezone.now() + timedelta(days=3))
    reader_trial_mark(user_id=reader.pk, at=timezone.now())
    before = stored(reader)
    assert before[0] == "complimentary"
    with pytest.raises(IntegrityError, match=GUARD), transaction.atomic():
        User.objects.filter(pk=reader.pk).update(**change)
    with pytest.raises(IntegrityError, match=GUARD), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE accounts_user SET access_until = %s WHERE id = %s", [YEAR_2099, reader.pk])
    assert stored(reader) == before


def test_naming_another_reader_does_not_open_this_one():
    reader, other = UserFactory(), UserFactory()
    with pytest.raises(IntegrityError, match=GUARD), transaction.atomic(), entitlement_write(other.pk):
        User.objects.filter(pk=reader.pk).update(access_source="complimentary", access_reason="borrowed")
    assert stored(reader)[0] == ""


def test_the_permission_ends_with_the_block_that_named_the_reader():
    reader = UserFactory()
    with transaction.atomic():
        with entitlement_write(reader.pk):
            User.objects.filter(pk=reader.pk).update(access_source="complimentary", access_reason="by the service")
        with pytest.raises(IntegrityError, match=GUARD), transaction.atomic():
            User.objects.filter(pk=reader.pk).update(access_until=YEAR_2099)
    assert stored(reader)[:2] == ("complimentary", None)


def test_a_new_reader_cannot_be_inserted_with_access():
    with pytest.raises(IntegrityError, match=GUARD), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO accounts_user (password, is_superuser, email, name, is_staff, is_active, date_joined,"
            " access_source, access_reason) VALUES ('!', false, 'new@example.com', '', false, true, now(),"
            " 'complimentary', 'inserted by hand')"
        )
    assert not User.objects.filter(email="new@example.com").exists()


def test_the_service_writes_and_saves_of_other_columns_go_through():
    reader = UserFactory()
    grant = complimentary_access_grant(user=reader, reason="press", ends_at=timezone.now() + timedelta(days=3))
    assert stored(reader)[0] == "complimentary"  # the grant's service recomputed it
    reader.name = "Ada"
    reader.save()  # every column but the entitlement's
    complimentary_access_revoke(access=grant)
    reader.refresh_from_db()
    assert (reader.name, reader.access_source) == ("Ada", "")


def test_a_failed_write_takes_its_permission_with_it():
    """The permission lives in the writer's savepoint: a write that fails (here, a shape the constraints refuse)
    rolls it back, so a later write in the same transaction is refused again."""
    reader = UserFactory()
    with transaction.atomic():
        with pytest.raises(IntegrityError, match="accounts_user_only_grants_open_ended"), entitlement_write(reader.pk):
            User.objects.filter(pk=reader.pk).update(access_source="subscription", access_reason="for ever")
        with pytest.raises(IntegrityError, match=GUARD), transaction.atomic():
            User.objects.filter(pk=reader.pk).update(access_source="complimentary", access_reason="after the failure")
    assert stored(reader)[0] == ""

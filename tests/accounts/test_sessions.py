"""Sessions are Django's own (database sessions, django_session) with Django's AuthenticationMiddleware;
the custom store they replaced is retired by a migration that keeps everyone signed in."""

import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.test import Client
from django.urls import reverse

from apps.accounts.models import User

pytestmark = pytest.mark.django_db


def test_the_site_uses_djangos_sessions_and_authentication():
    assert settings.SESSION_ENGINE == "django.contrib.sessions.backends.db"
    assert "django.contrib.auth.middleware.AuthenticationMiddleware" in settings.MIDDLEWARE


def _signed_in_client(user):
    client = Client()
    client.force_login(user)
    return client


def _reader_on(client) -> int:
    return client.get(reverse("accounts:profile")).status_code


def test_a_deleted_readers_session_signs_in_no_one(reader):
    client = _signed_in_client(reader)
    User.objects.filter(pk=reader.pk).delete()
    assert client.get(reverse("accounts:profile")).status_code == 302  # to sign in


def test_a_password_changed_elsewhere_signs_the_session_out(reader):
    client = _signed_in_client(reader)
    assert _reader_on(client) == 200
    reader.set_password("an-entirely-new-password-9")
    reader.save()
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert _reader_on(client) == 302
    assert not Session.objects.filter(session_key=key).exists()  # flushed by Django's get_user


def test_a_deactivated_reader_is_signed_out(reader):
    client = _signed_in_client(reader)
    User.objects.filter(pk=reader.pk).update(is_active=False)
    assert _reader_on(client) == 302


def test_sessions_signed_with_a_previous_secret_key_still_sign_in(reader, settings):
    client = _signed_in_client(reader)
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "a-rotated-secret-key-" + "x" * 40
    # Django's path: the hash made with the old key verifies through the fallbacks, and the key is cycled.
    assert _reader_on(client) == 200


def test_signing_out_ends_the_session_for_every_copy_of_its_cookie(reader):
    client = _signed_in_client(reader)
    stolen = Client()
    stolen.cookies[settings.SESSION_COOKIE_NAME] = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert _reader_on(stolen) == 200
    client.post(reverse("account_logout"))
    assert _reader_on(stolen) == 302


@pytest.mark.django_db(transaction=True)
def test_the_migration_back_to_djangos_table_keeps_readers_signed_in(reader):
    """0005 copies the unexpired sessions of the retired table into django_session: the cookie still signs in."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor
    from django.utils import timezone

    executor = MigrationExecutor(connection)
    before = [("accounts", "0004_user_access_entitlement"), ("sessions", "0001_initial")]
    executor.migrate(before)
    try:
        old_apps = executor.loader.project_state(before).apps
        OldSession = old_apps.get_model("accounts", "Session")
        encoder = SessionStore()
        data = {
            SESSION_KEY: str(reader.pk),
            BACKEND_SESSION_KEY: settings.AUTHENTICATION_BACKENDS[0],
            HASH_SESSION_KEY: reader.get_session_auth_hash(),
            "theme": "dark",
        }
        far, past = timezone.now() + timezone.timedelta(days=3), timezone.now() - timezone.timedelta(seconds=1)
        OldSession.objects.create(session_key="k" * 32, session_data=encoder.encode(data), expire_date=far)
        OldSession.objects.create(session_key="e" * 32, session_data=encoder.encode(data), expire_date=past)
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

    assert SessionStore("k" * 32).load()["theme"] == "dark"
    assert not Session.objects.filter(session_key="e" * 32).exists()
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = "k" * 32
    assert _reader_on(client) == 200
    assert "accounts_session" not in connection.introspection.table_names()

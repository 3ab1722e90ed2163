"""The session engine (apps/accounts/sessions.py): Django's database sessions with the read written out, each
stored with its reader's id and read together with the reader. Also run on SQLite (tests/reading/test_search_sqlite)."""

from datetime import timedelta
from importlib import import_module

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import Session, User
from apps.accounts.sessions import SessionStore

pytestmark = pytest.mark.django_db


def test_the_site_uses_it():
    assert settings.SESSION_ENGINE == "apps.accounts.sessions"


def test_a_stored_session_reads_back_and_an_expired_or_unknown_one_is_empty_with_a_new_key_on_save():
    store = SessionStore()
    store["reader"] = 42
    store.create()
    key = store.session_key

    assert SessionStore(key).load() == {"reader": 42}

    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    expired = SessionStore(key)
    assert expired.load() == {} and expired.session_key is None
    expired["reader"] = 7
    expired.save()
    assert expired.session_key != key  # never revives the expired key

    unknown = SessionStore("x" * 32)
    assert unknown.load() == {} and unknown.session_key is None
    assert SessionStore("bad key!").load() == {}  # refused by the key's validation, no query


# The reader read with the session (apps.accounts.sessions.session_user, through SessionAuthenticationMiddleware).


def _signed_in_client(user):
    client = Client()
    client.force_login(user)
    return client


def _reader_on(client) -> int:
    return client.get(reverse("accounts:profile")).status_code


def test_a_signed_in_request_reads_its_session_and_its_reader_in_one_statement(reader):
    client = _signed_in_client(reader)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("accounts:profile"))
    assert response.status_code == 200 and response.wsgi_request.user == reader
    statements = [query["sql"] for query in queries]
    assert any("accounts_session" in sql and "accounts_user" in sql for sql in statements), statements
    assert not [sql for sql in statements if "accounts_session" not in sql and 'FROM "accounts_user"' in sql]


def test_the_session_keeps_its_readers_id_and_ends_with_the_reader(reader):
    client = _signed_in_client(reader)
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert Session.objects.get(session_key=key).user_id == reader.pk
    User.objects.filter(pk=reader.pk).delete()
    assert not Session.objects.filter(session_key=key).exists()
    assert client.get(reverse("accounts:profile")).status_code == 302  # to sign in


def test_a_password_changed_elsewhere_signs_the_session_out(reader):
    client = _signed_in_client(reader)
    assert _reader_on(client) == 200
    reader.set_password("an-entirely-new-password-9")
    reader.save()
    assert _reader_on(client) == 302
    assert not Session.objects.filter(user=reader).exists()  # flushed, as Django's get_user does


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


def test_the_migration_to_this_table_keeps_readers_signed_in(reader):
    from django.apps import apps
    from django.contrib.auth import SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore as DjangosSessionStore

    migration = import_module("apps.accounts.migrations.0003_session_with_reader")
    before = DjangosSessionStore()  # a session in Django's own table, as every one was before the change
    before[SESSION_KEY], before["theme"] = str(reader.pk), "dark"
    before.create()
    migration.sessions_copy(apps, None)
    copied = Session.objects.get(session_key=before.session_key)
    assert copied.user_id == reader.pk and SessionStore(before.session_key).load()["theme"] == "dark"

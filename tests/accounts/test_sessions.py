"""The session engine (apps/accounts/sessions.py): Django's database sessions with the read written out."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.utils import timezone

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

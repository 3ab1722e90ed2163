"""The sign-in limit under outages and attack (issue 20): it fails open when the cache is down, and
failures from one address cannot lock the owner out from another."""

import logging
import socket

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _login(client, email, password, ip="203.0.113.7"):
    return client.post(reverse("account_login"), {"login": email, "password": password}, REMOTE_ADDR=ip)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # free once closed: nothing listens there


def test_sign_in_works_with_the_cache_down_and_says_so_in_the_log(client, reader, password, settings, caplog):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
        }
    }

    with caplog.at_level(logging.WARNING, logger="apps.accounts"):
        response = _login(client, reader.email, password)

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(reader.pk)
    assert any("rate limit" in r.getMessage() for r in caplog.records)


def test_failures_from_one_address_do_not_lock_the_owner_out_from_another(client, reader, password):
    from django.test import Client

    attacker = Client()
    for _ in range(6):
        assert _login(attacker, reader.email, "guess-guess-guess", ip="198.51.100.66").status_code == 200
    assert (
        "Too many failed login attempts"
        in _login(attacker, reader.email, password, ip="198.51.100.66").content.decode()
    )

    response = _login(client, reader.email, password, ip="203.0.113.7")

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(reader.pk)


def test_behind_a_trusted_proxy_the_limit_counts_the_address_the_proxy_saw(client, reader, password, settings):
    from django.test import Client

    settings.ALLAUTH_TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.2"
    attacker = Client(headers={"X-Forwarded-For": "198.51.100.66"})
    for _ in range(6):
        _login(attacker, reader.email, "guess-guess-guess", ip=proxy)

    owner = client.post(
        reverse("account_login"),
        {"login": reader.email, "password": password},
        REMOTE_ADDR=proxy,
        headers={"X-Forwarded-For": "spoofed-by-owner, 203.0.113.7"},
    )

    assert owner.status_code == 302

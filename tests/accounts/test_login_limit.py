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


PROXY = "10.0.0.2"


def _behind_proxy(client, email, password, forwarded_for, peer=PROXY):
    return client.post(
        reverse("account_login"),
        {"login": email, "password": password},
        REMOTE_ADDR=peer,
        headers={"X-Forwarded-For": forwarded_for},
    )


def test_behind_the_trusted_proxy_two_readers_are_limited_apart(client, reader, password, settings):
    # Without TRUSTED_PROXIES every reader behind the proxy was one address: one attacker locked everyone out.
    from django.test import Client

    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    attacker = Client()
    for _ in range(6):
        _behind_proxy(attacker, reader.email, "guess-guess-guess", "198.51.100.66")
    locked = _behind_proxy(attacker, reader.email, password, "198.51.100.66")
    assert "Too many failed login attempts" in locked.content.decode()

    owner = _behind_proxy(client, reader.email, password, "203.0.113.7")
    assert owner.status_code == 302 and client.session["_auth_user_id"] == str(reader.pk)


def test_a_client_cannot_choose_its_address(client, reader, password, settings):
    from django.test import Client

    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    attacker = Client()
    for _ in range(6):
        # What the client writes stands left of what the proxy appended; straight to the site, it is not believed.
        _behind_proxy(attacker, reader.email, "guess-guess-guess", "203.0.113.7, 198.51.100.66")
        _behind_proxy(attacker, reader.email, "guess-guess-guess", "203.0.113.7", peer="198.51.100.66")
    assert "Too many failed" in _behind_proxy(attacker, reader.email, password, "198.51.100.66").content.decode()

    owner = _behind_proxy(client, reader.email, password, "203.0.113.7")
    assert owner.status_code == 302


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("198.51.100.66", "203.0.113.7", "198.51.100.66"),  # not from a proxy: the header is ignored
        ("10.0.0.2", "203.0.113.7", "203.0.113.7"),
        ("10.0.0.2", "1.2.3.4, 203.0.113.7", "203.0.113.7"),  # the client's own entry is not believed
        ("10.0.0.2", "203.0.113.7, 10.0.0.9", "203.0.113.7"),  # two proxies of ours: stepped over
        ("10.0.0.2", "not-an-address", "10.0.0.2"),
        ("10.0.0.2", "", "10.0.0.2"),
        ("10.0.0.2", "[2001:db8::1]:443", "2001:db8::1"),
        ("::ffff:10.0.0.2", "203.0.113.7:5555", "203.0.113.7"),
    ],
)
def test_the_client_address_is_read_from_the_right_as_far_as_trusted(rf, settings, peer, forwarded, client):
    from apps.accounts.client_address import client_address

    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    request = rf.get("/", REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == client

"""Stripe test mode: never under production settings; the banner on every page; the stand-in (a real
`manage.py stripe_test_server` process) serving Prices, Checkout and the Portal to the production services,
and the test-mode pages that stand for Stripe's hosted ones."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError, SystemCheckError
from django.test import Client, override_settings
from django.urls import reverse

from apps.subscriptions.models import Customer, Subscription
from tests.config.test_settings import PROD_ENV
from tests.factories import UserFactory
from tests.subscriptions.conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]
TEST_MODE = settings.STRIPE_TEST_MODE_SETTINGS
DECLINED_CARD = "4000 0000 0000 0341"


def _manage(*args, env_overrides: dict, drop=()):
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("STRIPE_")}
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


# --- Never in production ---------------------------------------------------------------------------------------


def test_production_settings_refuse_to_start_in_test_mode():
    result = _manage("check", env_overrides={**PROD_ENV, "STRIPE_TEST_MODE": "true"})
    assert result.returncode != 0
    assert "STRIPE_TEST_MODE is for development only and is refused in production" in result.stderr

    assert _manage("check", env_overrides=PROD_ENV).returncode == 0  # the same settings without it start


def test_test_mode_refuses_a_real_stripe_key_beside_it():
    env = {"DJANGO_SETTINGS_MODULE": "config.settings.dev", "STRIPE_TEST_MODE": "true", "STRIPE_SECRET_KEY": "sk_x"}
    result = _manage("check", env_overrides=env, drop=("DATABASE_URL",))
    assert result.returncode != 0 and "unset STRIPE_SECRET_KEY, or test mode" in result.stderr


def test_the_system_check_refuses_test_mode_where_settings_do_not_allow_it():
    not_allowed = override_settings(
        STRIPE_TEST_MODE=True, STRIPE_TEST_MODE_ALLOWED=False, STRIPE_API_BASE="http://127.0.0.1:1"
    )
    with not_allowed, pytest.raises(SystemCheckError, match="subscriptions.E001"):
        call_command("check")
    remote = override_settings(STRIPE_TEST_MODE=True, STRIPE_API_BASE="https://api.stripe.com")
    with remote, pytest.raises(SystemCheckError, match="subscriptions.E002"):
        call_command("check")
    with override_settings(STRIPE_TEST_MODE=True, STRIPE_API_BASE="http://127.0.0.1:8420"):
        call_command("check")  # development, a stand-in on this machine: fine


def test_the_stand_in_runs_only_in_test_mode():
    with pytest.raises(CommandError, match="only in test mode"):
        call_command("stripe_test_server")


@pytest.mark.django_db
def test_every_page_says_when_payments_are_in_test_mode(client):
    with override_settings(STRIPE_TEST_MODE=True):
        for path in ("/", "/pricing/"):
            assert 'id="test-mode-banner"' in client.get(path).text, path
    assert 'id="test-mode-banner"' not in client.get("/").text


@pytest.mark.django_db
def test_the_test_mode_pages_do_not_exist_outside_test_mode(client, reader):
    client.force_login(reader)
    assert client.get("/billing/test-mode/checkout/cs_test_x/").status_code == 404
    assert client.post("/billing/test-mode/checkout/cs_test_x/", {"card_number": "4242424242424242"}).status_code == 404
    assert client.get("/billing/test-mode/portal/bps_x/").status_code == 404


# --- Against the stand-in ----------------------------------------------------------------------------------------


def _standin_get(url: str, path: str) -> dict:
    response = requests.get(url + path, auth=(TEST_MODE["STRIPE_SECRET_KEY"], ""), timeout=5)
    assert response.ok, response.text
    return response.json()


def _checkout(client, reader) -> str:
    client.force_login(reader)
    response = client.post(reverse("subscriptions:checkout"), {"plan": "monthly", "next": "/capsules/x/"})
    assert response.status_code == 303
    assert response["Location"].startswith("http://testserver/billing/test-mode/checkout/cs_test_")
    return response["Location"].removeprefix("http://testserver")


@pytest.mark.django_db
def test_pricing_in_test_mode_shows_the_stand_ins_prices_and_no_configuration(client, test_mode):
    text = client.get("/pricing/").text
    assert "€12" in text and "/ month" in text and "€120" in text and "/ year" in text
    assert "not open on this site yet" not in text and "STRIPE_" not in text


@pytest.mark.django_db
def test_the_test_checkout_pays_with_a_test_card_and_grants_nothing_itself(client, test_mode):
    reader = UserFactory()
    page = _checkout(client, reader)
    customer = Customer.objects.get(user=reader)  # created at the stand-in by the production service
    assert _standin_get(test_mode, f"/v1/customers/{customer.stripe_id}")["email"] == reader.email

    shown = client.get(page)
    assert shown.status_code == 200 and "Checkout (test mode)" in shown.text and "€12" in shown.text

    # Another reader cannot see or pay it.
    other = Client()
    other.force_login(UserFactory())
    assert other.get(page).status_code == 404
    assert other.post(page, {"card_number": "4242424242424242"}).status_code == 404

    # A declined card: said so, no subscription, the session stays open for another card.
    declined = client.post(page, {"card_number": DECLINED_CARD}, follow=True)
    assert "declined" in declined.text and "Pay with the test card" in declined.text
    session_id = page.rstrip("/").rsplit("/", 1)[1]
    assert _standin_get(test_mode, f"/v1/checkout/sessions/{session_id}")["status"] == "open"

    paid = client.post(page, {"card_number": "4242 4242 4242 4242"})
    assert paid.status_code == 303
    assert paid["Location"] == f"http://testserver/billing/success/?session_id={session_id}&next=/capsules/x/"
    session = _standin_get(test_mode, f"/v1/checkout/sessions/{session_id}")
    subscription = _standin_get(test_mode, f"/v1/subscriptions/{session['subscription']}")
    assert (session["status"], subscription["status"]) == ("complete", "active")
    assert subscription["metadata"] == {"user_id": str(reader.pk)} and subscription["customer"] == customer.stripe_id
    assert not Subscription.objects.exists()
    # Access comes only from the webhook (not delivered in this test): the success page waits.
    assert "Waiting for Stripe" in client.get(paid["Location"].removeprefix("http://testserver")).text


@pytest.mark.django_db
def test_the_test_portal_cancels_at_the_periods_end_and_its_clock_ends_the_period(client, test_mode):
    reader = UserFactory()
    page = _checkout(client, reader)
    client.post(page, {"card_number": "4242424242424242"})
    customer = Customer.objects.get(user=reader)

    portal = client.post(reverse("subscriptions:portal"))
    assert portal.status_code == 303 and "/billing/test-mode/portal/bps_" in portal["Location"]
    portal_path = portal["Location"].removeprefix("http://testserver")
    shown = client.get(portal_path).text
    assert "Manage your subscription" in shown and "Monthly" in shown and "Cancel subscription" in shown
    (subscription,) = _standin_get(test_mode, f"/v1/subscriptions?customer={customer.stripe_id}")["data"]

    assert client.get(portal_path.replace("bps_", "bps_x")).status_code == 404
    stranger = Client()
    stranger.force_login(UserFactory())
    assert stranger.get(portal_path).status_code == 404

    client.post(portal_path, {"subscription": subscription["id"], "action": "cancel"})
    after = _standin_get(test_mode, f"/v1/subscriptions/{subscription['id']}")
    assert after["cancel_at_period_end"] and after["status"] == "active"
    assert "Resume subscription" in client.get(portal_path).text

    started = time.time()
    client.post(portal_path, {"subscription": subscription["id"], "action": "advance-clock"})
    moved = _standin_get(test_mode, f"/v1/subscriptions/{subscription['id']}")
    assert moved["status"] == "active" and moved["current_period_end"] <= started + 10  # was a month away
    wait_for(
        lambda: _standin_get(test_mode, f"/v1/subscriptions/{subscription['id']}")["status"] == "canceled",
        timeout=20,
        message="the stand-in to end the subscription at the period's end",
    )
    assert "No subscription to manage" in client.get(portal_path).text


@pytest.mark.django_db
def test_the_test_clock_renews_a_subscription_that_is_not_cancelled(client, test_mode):
    reader = UserFactory()
    client.post(_checkout(client, reader), {"card_number": "4242424242424242"})
    customer = Customer.objects.get(user=reader)
    portal_path = client.post(reverse("subscriptions:portal"))["Location"].removeprefix("http://testserver")
    (subscription,) = _standin_get(test_mode, f"/v1/subscriptions?customer={customer.stripe_id}")["data"]

    client.post(portal_path, {"subscription": subscription["id"], "action": "advance-clock"})

    def renewed():
        now = _standin_get(test_mode, f"/v1/subscriptions/{subscription['id']}")
        return now if now["current_period_start"] > subscription["current_period_start"] else None

    after = wait_for(renewed, timeout=20, message="the stand-in to renew the subscription at the period's end")
    assert after["status"] == "active" and after["current_period_end"] > time.time() + 27 * 24 * 3600
    invoices = _standin_get(test_mode, f"/v1/invoices?customer={customer.stripe_id}")["data"]
    assert sorted(invoice["status"] for invoice in invoices) == ["paid", "paid"]  # the first period, then the next

"""Issue 42, item 4: deleting an account closes the reader's Stripe side first, against the test-mode stand-in (a
real `manage.py stripe_test_server`: localstripe with Checkout Sessions). Open Checkout Sessions are expired, a
running subscription is cancelled at once (the reader confirms it), the customer is deleted; with Stripe out of
reach the deletion is refused and nothing here is deleted."""

import pytest
import requests
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse

from apps.accounts.models import User
from apps.subscriptions.models import Customer, Subscription
from tests.factories import PASSWORD, UserFactory
from tests.subscriptions.conftest import TEST_MODE

pytestmark = pytest.mark.django_db
CARD = "4242424242424242"


def _standin(url: str, method: str, path: str, **data) -> requests.Response:
    return requests.request(method, url + path, data=data, auth=(TEST_MODE["STRIPE_SECRET_KEY"], ""), timeout=5)


def _signed_in(user) -> Client:
    """Signed in through allauth's own sign-in page, as the reader does."""
    client = Client()
    response = client.post(reverse("account_login"), {"login": user.email, "password": PASSWORD})
    assert response.status_code == 302, response.content
    return client


def _open_checkout(client) -> str:
    """The reader starts subscribing: the production service makes the customer and the Checkout Session."""
    response = client.post(reverse("subscriptions:checkout"), {"plan": "monthly"})
    assert response.status_code == 303
    return response["Location"].removeprefix("http://testserver")


def test_deletion_expires_the_open_checkout_and_deletes_the_customer(test_mode):
    """Fails on HEAD: the session stays open and the customer (email, user id) stays at Stripe, so paying in the tab
    left open still starts a subscription."""
    reader = UserFactory()
    client = _signed_in(reader)
    page = _open_checkout(client)
    session_id = page.rstrip("/").rsplit("/", 1)[1]
    customer_id = Customer.objects.get(user=reader).stripe_id
    assert _standin(test_mode, "GET", f"/v1/checkout/sessions/{session_id}").json()["status"] == "open"

    response = client.post(reverse("accounts:delete"), {"confirmation": PASSWORD})
    assert response.status_code == 302 and not User.objects.filter(pk=reader.pk).exists()

    assert _standin(test_mode, "GET", f"/v1/checkout/sessions/{session_id}").json()["status"] == "expired"
    assert _standin(test_mode, "GET", f"/v1/customers/{customer_id}").status_code == 404
    # Paying in the tab left open: Stripe's page refuses, and no subscription starts.
    paid = _standin(test_mode, "POST", f"/v1/test_helpers/checkout/sessions/{session_id}/complete", card_number=CARD)
    assert paid.status_code == 400 and "expired" in paid.text
    everyone = _standin(test_mode, "GET", "/v1/subscriptions?status=all").json()["data"]
    assert not [sub for sub in everyone if sub["customer"] == customer_id]


def test_a_running_subscription_is_cancelled_at_once_once_the_reader_confirms_it(test_mode):
    """Fails on HEAD: the page refuses the deletion while the subscription runs ("cannot be deleted yet")."""
    reader = UserFactory()
    client = _signed_in(reader)
    assert client.post(_open_checkout(client), {"card_number": CARD}).status_code == 303  # paid at "Stripe"
    customer_id = Customer.objects.get(user=reader).stripe_id
    call_command("stripe_sync", "--customer", customer_id)  # the mirror, as the webhook would leave it
    subscription_id = Subscription.objects.get(customer__user=reader).stripe_id

    page = client.get(reverse("accounts:delete")).content.decode()
    assert "Your monthly subscription (active) ends immediately" in page and "is not refunded" in page
    assert 'name="notices_understood"' in page and "/refunds/#first-payment" in page

    unconfirmed = client.post(reverse("accounts:delete"), {"confirmation": PASSWORD})
    assert unconfirmed.status_code == 400 and User.objects.filter(pk=reader.pk).exists()
    assert _standin(test_mode, "GET", f"/v1/subscriptions/{subscription_id}").json()["status"] == "active"

    response = client.post(reverse("accounts:delete"), {"confirmation": PASSWORD, "notices_understood": "on"})
    assert response.status_code == 302 and not User.objects.filter(pk=reader.pk).exists()
    cancelled = _standin(test_mode, "GET", f"/v1/subscriptions/{subscription_id}").json()
    assert cancelled["status"] == "canceled" and cancelled["ended_at"]
    assert _standin(test_mode, "GET", f"/v1/customers/{customer_id}").status_code == 404


def test_with_stripe_out_of_reach_the_deletion_is_refused_and_nothing_is_deleted(test_mode):
    """Fails on HEAD: the account is deleted although its Stripe customer could not be closed."""
    reader = UserFactory()
    client = _signed_in(reader)
    _open_checkout(client)

    with override_settings(STRIPE_API_BASE="http://127.0.0.1:9"):  # nothing listens there
        response = client.post(reverse("accounts:delete"), {"confirmation": PASSWORD})
    page = response.content.decode()
    assert response.status_code == 400
    assert "Your account has not been deleted: Stripe, our payment provider, could not be reached" in page
    assert User.objects.filter(pk=reader.pk).exists() and Customer.objects.filter(user=reader).exists()
    assert client.get(reverse("accounts:profile")).status_code == 200  # still signed in

    # Once Stripe answers again, the same confirmation goes through.
    assert client.post(reverse("accounts:delete"), {"confirmation": PASSWORD}).status_code == 302
    assert not User.objects.filter(pk=reader.pk).exists()

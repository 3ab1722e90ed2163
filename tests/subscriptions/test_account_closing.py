"""Issue 42, item 4: deleting an account closes the reader's Stripe side first, against the test-mode stand-in (a
real `manage.py stripe_test_server`: localstripe with Checkout Sessions). Open Checkout Sessions are expired, a
running subscription is cancelled at once (the reader confirms it), the customer is deleted; with Stripe out of
reach the deletion is refused and nothing here is deleted. Staff deleting readers in admin (one, or in bulk) go
through the same closing; Stripe's events about a reader that arrive after the deletion bring nothing of theirs
back."""

import json

import pytest
import requests
from django.contrib.admin.models import DELETION, LogEntry
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse

from apps.accounts.models import User
from apps.subscriptions.models import Customer, StripeEvent, Subscription
from apps.subscriptions.services import event_process
from tests.factories import PASSWORD, UserFactory
from tests.subscriptions.conftest import TEST_MODE
from tests.subscriptions.stripe_stub import event_payload as make_event

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
    assert "The monthly subscription (active) ends immediately" in page and "is not refunded" in page
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


# --- Staff deleting readers in admin (issue 42 follow-up): the same closing, shown on the confirmation page ---------


def _subscribed(reader) -> tuple[str, str]:
    """The reader pays at "Stripe" and the mirror holds it, as the webhook would leave it: (customer, subscription)."""
    client = _signed_in(reader)
    assert client.post(_open_checkout(client), {"card_number": CARD}).status_code == 303
    customer_id = Customer.objects.get(user=reader).stripe_id
    call_command("stripe_sync", "--customer", customer_id)
    return customer_id, Subscription.objects.get(customer__user=reader).stripe_id


def _staff_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client


def test_admin_deletes_a_subscriber_closing_stripe_first_and_says_so_before(test_mode, staff):
    """Fails on HEAD: admin refuses ("doesn't have permission to delete ... customer, subscription") while the reader
    has a Stripe customer."""
    reader = UserFactory(email="subscriber.leaving@example.org")
    customer_id, subscription_id = _subscribed(reader)
    admin = _staff_client(staff)
    page_url = reverse("admin:accounts_user_delete", args=[reader.pk])

    page = admin.get(page_url).content.decode()
    assert "have permission" not in page and 'type="submit"' in page
    assert "subscriber.leaving@example.org: The monthly subscription (active) ends immediately" in page
    assert "is not refunded" in page and "their Stripe customer is deleted" in page

    response = admin.post(page_url, {"post": "yes"})
    assert response.status_code == 302 and response["Location"] == reverse("admin:accounts_user_changelist")
    assert not User.objects.filter(pk=reader.pk).exists() and not Customer.objects.exists()
    cancelled = _standin(test_mode, "GET", f"/v1/subscriptions/{subscription_id}").json()
    assert cancelled["status"] == "canceled" and cancelled["ended_at"]
    assert _standin(test_mode, "GET", f"/v1/customers/{customer_id}").status_code == 404
    # Admin's history keeps the deletion, not whom it deleted.
    deletion = LogEntry.objects.get(action_flag=DELETION, object_id=str(reader.pk))
    assert deletion.object_repr == "(deleted reader)" and deletion.user_id == staff.pk


def test_admin_deletion_with_stripe_out_of_reach_is_refused_with_a_message_and_deletes_nothing(test_mode, staff):
    """Fails on HEAD: refused for want of permission even when Stripe answers (and with closing, a 500 would leave
    the half-written log entry)."""
    reader = UserFactory()
    _open_checkout(_signed_in(reader))
    admin = _staff_client(staff)
    page_url = reverse("admin:accounts_user_delete", args=[reader.pk])

    with override_settings(STRIPE_API_BASE="http://127.0.0.1:9"):  # nothing listens there
        response = admin.post(page_url, {"post": "yes"}, follow=True)
    assert response.status_code == 200 and response.redirect_chain == [(page_url, 302)]
    assert f"Nothing was deleted: the billing of {reader.email} could not be closed at Stripe" in response.text
    assert User.objects.filter(pk=reader.pk).exists() and Customer.objects.filter(user=reader).exists()
    assert not LogEntry.objects.filter(action_flag=DELETION).exists()  # rolled back with the deletion

    assert admin.post(page_url, {"post": "yes"}).status_code == 302  # Stripe answers again: it goes through
    assert not User.objects.filter(pk=reader.pk).exists()


def test_admin_bulk_deletion_closes_each_readers_stripe_side_or_deletes_none(test_mode, staff):
    """Fails on HEAD: the bulk action is refused for want of permission while one selected reader has a customer."""
    subscriber, plain = UserFactory(email="bulk.subscriber@example.org"), UserFactory()
    customer_id, subscription_id = _subscribed(subscriber)
    admin = _staff_client(staff)
    changelist = reverse("admin:accounts_user_changelist")
    selected = {"action": "delete_selected", "_selected_action": [subscriber.pk, plain.pk]}

    page = admin.post(changelist, selected).content.decode()
    assert "have permission" not in page and "bulk.subscriber@example.org: The monthly subscription (active)" in page

    with override_settings(STRIPE_API_BASE="http://127.0.0.1:9"):
        refused = admin.post(changelist, {**selected, "post": "yes"}, follow=True)
    assert "Nothing was deleted: the billing of bulk.subscriber@example.org" in refused.text
    assert User.objects.filter(pk__in=[subscriber.pk, plain.pk]).count() == 2  # the plain reader stays too

    done = admin.post(changelist, {**selected, "post": "yes"}, follow=True)
    assert "Successfully deleted 2 users." in done.text
    assert not User.objects.filter(pk__in=[subscriber.pk, plain.pk]).exists()
    assert _standin(test_mode, "GET", f"/v1/subscriptions/{subscription_id}").json()["status"] == "canceled"
    assert _standin(test_mode, "GET", f"/v1/customers/{customer_id}").status_code == 404


# --- Stripe's events about a reader after their deletion ------------------------------------------------------------


def test_events_about_a_deleted_reader_are_processed_and_bring_nothing_of_theirs_back(test_mode, post_event):
    """The closing's own events (customer.deleted, customer.subscription.deleted, checkout.session.expired) and a
    checkout that completed before the deletion reach the webhook once the reader is gone: each is stored and applied
    without an error (no retry, no dead letter), no customer or subscription is made again, and no stored payload
    holds the reader's email address or name. Fails on HEAD: the late checkout.session.completed fails ("names reader
    ..., who does not exist") until it is dead-lettered, and customer.deleted is stored with the email and name."""
    reader = UserFactory(email="late.events@example.org", name="Late Events Reader")
    client = _signed_in(reader)
    paid_page = _open_checkout(client)
    assert client.post(paid_page, {"card_number": CARD}).status_code == 303
    paid_session = paid_page.rstrip("/").rsplit("/", 1)[1]
    customer_id = Customer.objects.get(user=reader).stripe_id
    call_command("stripe_sync", "--customer", customer_id)
    subscription_id = Subscription.objects.get(customer__user=reader).stripe_id
    customer = _standin(test_mode, "GET", f"/v1/customers/{customer_id}").json()  # as customer.deleted carries it
    assert customer["email"] == reader.email and customer["name"] == reader.name

    deleted = client.post(reverse("accounts:delete"), {"confirmation": PASSWORD, "notices_understood": "on"})
    assert deleted.status_code == 302 and not User.objects.filter(pk=reader.pk).exists()

    def stripe_object(path: str) -> dict:
        return _standin(test_mode, "GET", path).json()

    completed = {**stripe_object(f"/v1/checkout/sessions/{paid_session}"), "customer_email": reader.email}
    completed["customer_details"] = {"email": reader.email, "name": reader.name, "address": {"country": "FR"}}
    subscription = {**stripe_object(f"/v1/subscriptions/{subscription_id}"), "status": "canceled"}
    late = [
        make_event("checkout.session.completed", completed),
        make_event("customer.subscription.deleted", subscription),
        make_event("customer.deleted", {**customer, "deleted": True}),
        make_event("checkout.session.expired", {**completed, "id": "cs_expired_late", "status": "expired"}),
    ]
    for event in late:
        assert post_event(event, secret=TEST_MODE["STRIPE_WEBHOOK_SECRET"]).status_code == 200
        stored = StripeEvent.objects.get(stripe_id=event["id"])
        event_process(event_id=stored.pk)  # raises on HEAD for the late checkout
        stored.refresh_from_db()
        assert stored.is_processed and stored.last_error == "" and stored.dead_lettered_at is None

    assert not Customer.objects.exists() and not Subscription.objects.exists()
    for stored in StripeEvent.objects.all():
        text = json.dumps(stored.payload).lower()
        assert reader.email not in text and reader.name.lower() not in text, stored.type

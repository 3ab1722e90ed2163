"""Against localstripe running as a real server: customers, plans, subscriptions and invoices
made there, its signed webhooks delivered over HTTP to the live Django server, processed by a
real Celery worker on the Redis broker, which re-reads the subscription from localstripe."""

import json

import pytest
import requests
from django.core.management import call_command

from apps.subscriptions.models import StripeEvent, Subscription
from apps.subscriptions.services import customer_ensure
from tests.factories import UserFactory
from tests.subscriptions.conftest import WEBHOOK_SECRET, wait_for
from tests.subscriptions.stripe_stub import event_payload, sign
from tests.subscriptions.visitors import stored_access

pytestmark = pytest.mark.django_db(transaction=True)

HANDLED = [
    "checkout.session.completed",
    "customer.subscription.created",
    "customer.subscription.updated",
    "customer.subscription.deleted",
    "invoice.paid",
    "invoice.payment_succeeded",
    "invoice.payment_failed",
]
DECLINED_CARD = "4000000000000341"  # attaches, then every charge is declined


def _subscription(stripe_id):
    return Subscription.objects.filter(stripe_id=stripe_id).first()


def test_subscribe_and_cancel_through_signed_webhooks_over_http(stripe_local, live_server, celery_worker, mailoutbox):
    stripe_local.register_webhook(f"{live_server.url}/stripe/webhook/", HANDLED)
    reader = UserFactory()
    customer = customer_ensure(user=reader)  # our service, creating the customer at localstripe
    assert stripe_local.get(f"/v1/customers/{customer.stripe_id}")["email"] == reader.email
    stripe_local.give_card(customer.stripe_id)
    stripe_local.plan("plan_ke_monthly", amount=1200)

    created = stripe_local.post(
        "/v1/subscriptions",
        {"customer": customer.stripe_id, "items[0][plan]": "plan_ke_monthly", "metadata[user_id]": str(reader.pk)},
    )
    assert created["status"] == "active"  # localstripe charged the card

    subscription = wait_for(
        lambda: _subscription(created["id"]), message="the subscription to be stored from its webhook"
    )
    assert subscription.status == "active" and subscription.customer == customer
    assert (subscription.price_id, subscription.interval, subscription.unit_amount) == (
        "plan_ke_monthly",
        "month",
        1200,
    )
    assert subscription.current_period_end is not None
    assert stored_access(reader)
    wait_for(
        lambda: StripeEvent.objects.filter(type="invoice.payment_succeeded", processed_at__isnull=False).exists(),
        message="the invoice event to be processed",
    )

    stripe_local.delete(f"/v1/subscriptions/{created['id']}")  # cancelled at once (e.g. from the dashboard)
    wait_for(lambda: _subscription(created["id"]).status == "canceled", message="the cancellation to arrive")
    assert not stored_access(reader)
    wait_for(lambda: mailoutbox, message="the cancellation email from the worker")
    assert mailoutbox[0].to == [reader.email] and "has ended" in mailoutbox[0].subject
    # The status may come first from another event's re-read of the subscription: wait for the event itself.
    wait_for(
        lambda: StripeEvent.objects.filter(type="customer.subscription.deleted", processed_at__isnull=False).exists(),
        message="the deleted event to be processed",
    )

    events = StripeEvent.objects.all()
    assert {e.type for e in events} >= {
        "customer.subscription.created",
        "invoice.payment_succeeded",
        "customer.subscription.deleted",
    }
    assert all(e.is_processed and e.last_error == "" for e in events)

    # A late redelivery and an old snapshot under a new id change nothing: Stripe's state wins.
    stale = next(e for e in events if e.type == "customer.subscription.created")
    for payload in (stale.payload, event_payload("customer.subscription.updated", stale.payload["data"]["object"])):
        body = json.dumps(payload).encode()
        response = requests.post(
            f"{live_server.url}/stripe/webhook/",
            data=body,
            headers={"Stripe-Signature": sign(body, WEBHOOK_SECRET)},
            timeout=10,
        )
        assert response.status_code == 200
    wait_for(
        lambda: not StripeEvent.objects.filter(processed_at__isnull=True).exists(), message="the replay to be processed"
    )
    assert _subscription(created["id"]).status == "canceled"
    assert not stored_access(reader)


def test_a_forged_delivery_to_the_live_server_is_refused(stripe_local, live_server):
    body = json.dumps(
        event_payload("customer.subscription.created", {"id": "sub_x", "customer": "cus_x", "status": "active"})
    ).encode()
    response = requests.post(
        f"{live_server.url}/stripe/webhook/",
        data=body,
        headers={"Stripe-Signature": sign(body, "whsec_guess")},
        timeout=10,
    )
    assert response.status_code == 400
    assert not StripeEvent.objects.exists()


def test_stripe_sync_reads_past_due_and_scheduled_cancellations_from_localstripe(stripe_local):
    reader = UserFactory()
    customer = customer_ensure(user=reader)
    stripe_local.give_card(customer.stripe_id)
    stripe_local.plan("plan_ke_monthly", amount=1200)
    stripe_local.plan("plan_ke_yearly", amount=12000, interval="year")
    created = stripe_local.post(
        "/v1/subscriptions", {"customer": customer.stripe_id, "items[0][plan]": "plan_ke_monthly"}
    )

    call_command("stripe_sync", "--customer", customer.stripe_id)
    assert _subscription(created["id"]).status == "active"

    # The card starts failing; moving to the yearly plan bills at once, the charge is declined.
    stripe_local.give_card(customer.stripe_id, DECLINED_CARD)
    stripe_local.post(f"/v1/subscriptions/{created['id']}", {"items[0][plan]": "plan_ke_yearly"})
    assert stripe_local.get(f"/v1/subscriptions/{created['id']}")["status"] == "past_due"

    call_command("stripe_sync", "--all")
    subscription = _subscription(created["id"])
    assert (subscription.status, subscription.price_id, subscription.interval) == ("past_due", "plan_ke_yearly", "year")
    assert subscription.past_due_since is not None
    assert stored_access(reader)  # within the grace period
    assert not stored_access(reader, now=subscription.grace_ends_at)

    stripe_local.post(f"/v1/subscriptions/{created['id']}", {"cancel_at_period_end": "true"})
    call_command("stripe_sync", "--customer", customer.stripe_id)
    subscription = _subscription(created["id"])
    assert subscription.cancel_at_period_end and subscription.ends_at == subscription.current_period_end

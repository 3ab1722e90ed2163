"""A Stripe event that arrives while the broker is down (issue 20): answered 2xx once stored, and
Stripe's next delivery of it, while it is still unapplied, queues it again instead of doing nothing."""

import logging
from unittest import mock

import pytest

from apps.subscriptions.models import StripeEvent, Subscription
from apps.subscriptions.tasks import process_stripe_event
from tests.outages import broker_down
from tests.subscriptions.factories import CustomerFactory
from tests.subscriptions.stripe_stub import event_payload, subscription_object

pytestmark = pytest.mark.django_db


def test_an_event_stored_while_the_broker_is_down_is_queued_again_by_stripes_retry(
    stripe_stub, post_event, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    customer = CustomerFactory(stripe_id="cus_reader1")
    snapshot = subscription_object("sub_one", customer="cus_reader1", status="active")
    stripe_stub.subscriptions["sub_one"] = snapshot
    event = event_payload("customer.subscription.created", snapshot)

    with broker_down(monkeypatch), caplog.at_level(logging.WARNING, logger="apps.subscriptions"):
        with django_capture_on_commit_callbacks(execute=True):
            response = post_event(event)
        assert response.status_code == 200
        assert any("broker" in r.getMessage() for r in caplog.records)
    stored = StripeEvent.objects.get()
    assert not stored.is_processed

    with mock.patch.object(process_stripe_event, "delay") as delay, django_capture_on_commit_callbacks(execute=True):
        again = post_event(event)  # Stripe delivers it again; the broker is back

    assert again.status_code == 200
    delay.assert_called_once_with(stored.pk)
    process_stripe_event(stored.pk)  # what the worker runs
    assert StripeEvent.objects.get().is_processed
    assert Subscription.objects.get(customer=customer).status == "active"


def test_a_redelivered_event_already_applied_is_still_a_duplicate(
    stripe_stub, post_event, django_capture_on_commit_callbacks
):
    CustomerFactory(stripe_id="cus_reader1")
    snapshot = subscription_object("sub_one", customer="cus_reader1", status="active")
    stripe_stub.subscriptions["sub_one"] = snapshot
    event = event_payload("customer.subscription.created", snapshot)
    with django_capture_on_commit_callbacks():
        post_event(event)
    process_stripe_event(StripeEvent.objects.get().pk)

    with django_capture_on_commit_callbacks() as callbacks:
        again = post_event(event)

    assert again.content == b"duplicate" and not callbacks  # nothing queued for an event already applied

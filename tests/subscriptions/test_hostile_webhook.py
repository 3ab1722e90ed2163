"""Hostile webhook deliveries (issue 20): a signed body that is no Stripe event, nested thousands deep,
is a 400 that stores nothing; a timestamp from the future is refused like a stale one."""

import time

import pytest

from apps.subscriptions.models import StripeEvent, Subscription
from tests.subscriptions.stripe_stub import event_payload, subscription_object

pytestmark = pytest.mark.django_db


def _nothing_stored(stripe_stub):
    return not StripeEvent.objects.exists() and not Subscription.objects.exists() and not stripe_stub.requests


@pytest.mark.parametrize("depth", [200, 900, 5_000, 100_000])
def test_a_signed_body_nested_deep_is_a_400_that_stores_nothing(stripe_stub, post_event, depth):
    nested = "[" * depth + "]" * depth
    body = f'{{"id": "evt_deep", "type": "invoice.paid", "data": {{"object": {{"lines": {nested}}}}}}}'.encode()
    response = post_event({}, body=body)
    assert response.status_code == 400
    assert _nothing_stored(stripe_stub)


def test_a_timestamp_ten_minutes_in_the_future_is_refused(stripe_stub, post_event):
    future = int(time.time()) + 10 * 60
    snapshot = subscription_object("sub_one", customer="cus_reader1")
    response = post_event(event_payload("customer.subscription.created", snapshot), timestamp=future)
    assert response.status_code == 400
    assert _nothing_stored(stripe_stub)


def test_a_timestamp_a_little_ahead_is_accepted_for_clock_skew(stripe_stub, post_event):
    ahead = int(time.time()) + 60
    response = post_event(event_payload("charge.succeeded", {"id": "ch_1", "object": "charge"}), timestamp=ahead)
    assert response.status_code == 200
    assert StripeEvent.objects.count() == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"created": []},
        {"created": "yesterday"},
        {"created": 10**20},
        {"id": "evt_" + "x" * 300},
        {"type": "t" * 300},
        {"api_version": "v" * 65},
        {"api_version": ["2025-01-01"]},
        {"data": {"object": ["not", "an", "object"]}},
        {"data": {"object": {"id": "in_1", "note": "a\x00b"}}},
        {"data": {"object": {"id": "in_1", "amount": float("nan")}}},
    ],
    ids=lambda fields: next(iter(fields)),
)
def test_a_signed_event_whose_fields_cannot_be_stored_is_a_400(stripe_stub, post_event, fields):
    event = {"id": "evt_odd", "object": "event", "type": "invoice.paid", "data": {"object": {"id": "in_1"}}}
    response = post_event({**event, **fields})
    assert response.status_code == 400
    assert _nothing_stored(stripe_stub)

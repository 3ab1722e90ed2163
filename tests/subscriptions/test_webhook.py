"""The webhook at /stripe/webhook/, fed payloads signed exactly as Stripe signs them; the
subscription it concerns is re-read from the Stripe stand-in at the HTTP boundary."""

import json
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from apps.subscriptions import services
from apps.subscriptions.errors import EventProcessingFailed
from apps.subscriptions.models import Customer, StripeEvent, Subscription
from apps.subscriptions.tasks import process_stripe_event
from tests.factories import UserFactory
from tests.subscriptions.conftest import WEBHOOK_SECRET
from tests.subscriptions.factories import CustomerFactory
from tests.subscriptions.stripe_stub import event_payload, sign, subscription_object
from tests.subscriptions.visitors import stored_access

pytestmark = pytest.mark.django_db

SUB = "/v1/subscriptions/{}"


@pytest.fixture
def customer(db):
    return CustomerFactory(stripe_id="cus_reader1")


def _snapshot(status="active", **kwargs):
    return subscription_object("sub_one", customer="cus_reader1", status=status, **kwargs)


# --- Verification ------------------------------------------------------------------------------


def _nothing_changed(stripe_stub):
    return not StripeEvent.objects.exists() and not Subscription.objects.exists() and not stripe_stub.requests


def test_a_forged_signature_is_rejected_and_changes_nothing(
    stripe_stub, customer, post_event, django_capture_on_commit_callbacks
):
    stripe_stub.subscriptions["sub_one"] = _snapshot()
    with django_capture_on_commit_callbacks() as callbacks:
        response = post_event(
            event_payload("customer.subscription.created", _snapshot()), secret="whsec_not_the_real_one"
        )
    assert response.status_code == 400
    assert not callbacks and _nothing_changed(stripe_stub)


def test_a_stale_timestamp_is_rejected_and_changes_nothing(stripe_stub, customer, post_event):
    stripe_stub.subscriptions["sub_one"] = _snapshot()
    stale = int(time.time()) - 6 * 60  # Stripe's tolerance is 5 minutes
    response = post_event(event_payload("customer.subscription.created", _snapshot(), created=stale), timestamp=stale)
    assert response.status_code == 400
    assert _nothing_changed(stripe_stub)


def test_a_body_changed_after_signing_is_rejected(stripe_stub, customer, post_event):
    original = json.dumps(event_payload("customer.subscription.updated", _snapshot(status="past_due"))).encode()
    tampered = original.replace(b"past_due", b"active\x20\x20")
    response = post_event({}, body=tampered, signature=sign(original, WEBHOOK_SECRET))
    assert response.status_code == 400
    assert _nothing_changed(stripe_stub)


@pytest.mark.parametrize(
    "header, body",
    [
        (None, b'{"id": "evt_1", "type": "invoice.paid", "data": {"object": {}}}'),  # no signature header
        ("t=abc,v1=def", b'{"id": "evt_1"}'),  # garbage header
        ("sign", b"not json at all"),  # signed, but not JSON
        ("sign", b'{"object": "event"}'),  # signed JSON, but not an event
    ],
)
def test_malformed_requests_are_rejected(stripe_stub, client, header, body):
    from tests.subscriptions.conftest import WEBHOOK_SECRET

    headers = {} if header is None else {"Stripe-Signature": sign(body, WEBHOOK_SECRET) if header == "sign" else header}
    response = client.post("/stripe/webhook/", data=body, content_type="application/json", headers=headers)
    assert response.status_code == 400
    assert not StripeEvent.objects.exists()


@pytest.mark.parametrize("where", ["object", "key", "id"])
def test_a_signed_event_holding_a_lone_surrogate_is_rejected_not_a_500(stripe_stub, client, where):
    # "\ud800" is valid JSON but no UTF-8 text: storing it in jsonb raised in the driver (issue 28).
    snapshot = _snapshot()
    if where == "object":
        snapshot["metadata"] = {"note": "\ud800"}
    elif where == "key":
        snapshot["metadata"] = {"\udfff": "x"}
    event = event_payload("customer.subscription.updated", snapshot, event_id="evt_\ud800" if where == "id" else None)
    body = json.dumps(event).encode()  # ensure_ascii: the surrogate travels as an escape
    assert b"\\ud" in body

    headers = {"Stripe-Signature": sign(body, WEBHOOK_SECRET)}
    client.raise_request_exception = False
    response = client.post("/stripe/webhook/", data=body, content_type="application/json", headers=headers)
    assert response.status_code == 400
    assert not StripeEvent.objects.exists()


def test_only_post_and_no_csrf_token_needed(stripe_stub, customer, make_event):
    from django.test import Client

    from tests.subscriptions.conftest import WEBHOOK_SECRET

    client = Client(enforce_csrf_checks=True)
    assert client.get("/stripe/webhook/").status_code == 405
    body = json.dumps(make_event("customer.created", {"id": "cus_reader1", "object": "customer"})).encode()
    response = client.post(
        "/stripe/webhook/",
        data=body,
        content_type="application/json",
        headers={"Stripe-Signature": sign(body, WEBHOOK_SECRET)},
    )
    assert response.status_code == 200


def test_without_a_webhook_secret_nothing_is_accepted(stripe_stub, post_event):
    with override_settings(STRIPE_WEBHOOK_SECRET=""):
        response = post_event(event_payload("invoice.paid", {"id": "in_1"}), secret="")
    assert response.status_code == 400
    assert not StripeEvent.objects.exists()


# --- Once, fast, then processed ----------------------------------------------------------------


def test_the_same_event_twenty_times_changes_state_once(
    stripe_stub, customer, post_event, eager_celery, django_capture_on_commit_callbacks, mailoutbox
):
    stripe_stub.subscriptions["sub_one"] = _snapshot(cancel_at_period_end=True)
    event = event_payload("customer.subscription.updated", _snapshot(cancel_at_period_end=True))
    Subscription.objects.create(
        customer=customer, stripe_id="sub_one", status="active"
    )  # as stored before the cancellation

    with django_capture_on_commit_callbacks(execute=True):
        responses = [post_event(event) for _ in range(20)]

    assert [r.status_code for r in responses] == [200] * 20
    assert [r.content for r in responses[:2]] == [b"ok", b"duplicate"]
    assert StripeEvent.objects.count() == 1
    assert StripeEvent.objects.get().is_processed
    assert len(stripe_stub.calls("GET", "/v1/subscriptions/sub_one")) == 1  # processed once
    assert Subscription.objects.get().cancel_at_period_end
    assert [m.subject for m in mailoutbox] == [
        f"[Kernel Engineering] Your subscription will end on {timezone.now() + timedelta(days=30):%-d %B %Y}"
    ]


def test_the_webhook_answers_before_processing(stripe_stub, customer, post_event, django_capture_on_commit_callbacks):
    stripe_stub.subscriptions["sub_one"] = _snapshot()
    with django_capture_on_commit_callbacks() as callbacks:
        response = post_event(event_payload("customer.subscription.created", _snapshot()))
    assert response.status_code == 200
    assert len(callbacks) == 1  # the task is enqueued on commit...
    assert not stripe_stub.requests and not Subscription.objects.exists()  # ...and nothing is done in the request
    event = StripeEvent.objects.get()
    assert (event.type, event.object_id, event.is_processed) == ("customer.subscription.created", "sub_one", False)

    process_stripe_event(event.pk)  # what the worker runs
    assert Subscription.objects.get().status == "active"
    assert stored_access(customer.user)


def test_deleted_arriving_before_created_ends_canceled(
    stripe_stub, customer, post_event, eager_celery, django_capture_on_commit_callbacks
):
    created_at = int(time.time()) - 60
    stripe_stub.subscriptions["sub_one"] = _snapshot(status="canceled")  # what Stripe holds now
    with django_capture_on_commit_callbacks(execute=True):
        assert (
            post_event(event_payload("customer.subscription.deleted", _snapshot(status="canceled"))).status_code == 200
        )
        # The older event, delivered late, still carries the "active" snapshot.
        assert (
            post_event(event_payload("customer.subscription.created", _snapshot(), created=created_at)).status_code
            == 200
        )

    subscription = Subscription.objects.get()
    assert subscription.status == "canceled" and subscription.ended_at is not None
    assert not stored_access(customer.user)
    assert StripeEvent.objects.filter(processed_at__isnull=False).count() == 2


def test_events_in_any_order_converge_on_what_stripe_holds(
    stripe_stub, customer, post_event, eager_celery, django_capture_on_commit_callbacks
):
    stripe_stub.subscriptions["sub_one"] = _snapshot(status="past_due")
    events = [
        event_payload(
            "invoice.payment_failed",
            {"id": "in_2", "object": "invoice", "parent": {"subscription_details": {"subscription": "sub_one"}}},
        ),
        event_payload("customer.subscription.created", _snapshot(status="incomplete")),
        event_payload("invoice.paid", {"id": "in_1", "object": "invoice", "subscription": "sub_one"}),
        event_payload("customer.subscription.updated", _snapshot(status="active")),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        for event in events:
            post_event(event)
    assert Subscription.objects.get().status == "past_due"

    stripe_stub.subscriptions["sub_one"] = _snapshot(status="active")  # the card was updated
    with django_capture_on_commit_callbacks(execute=True):
        post_event(event_payload("invoice.paid", {"id": "in_3", "object": "invoice", "subscription": "sub_one"}))
    subscription = Subscription.objects.get()
    assert (subscription.status, subscription.past_due_since) == ("active", None)


def test_a_crash_in_processing_leaves_the_event_to_retry_and_the_retry_succeeds(
    stripe_stub, customer, post_event, django_capture_on_commit_callbacks
):
    stripe_stub.subscriptions["sub_one"] = _snapshot()
    stripe_stub.failures[SUB.format("sub_one")] = 1  # Stripe answers 500 once
    with django_capture_on_commit_callbacks():
        post_event(event_payload("customer.subscription.created", _snapshot()))
    event = StripeEvent.objects.get()

    with pytest.raises(EventProcessingFailed, match="APIError"):
        process_stripe_event(event.pk)  # called directly, the task raises instead of scheduling a retry
    event.refresh_from_db()
    assert (event.is_processed, event.attempts) == (False, 1)
    assert event.last_error.startswith("APIError")
    assert not Subscription.objects.exists()

    with django_capture_on_commit_callbacks() as callbacks:
        assert services.events_retry_unprocessed(older_than=timedelta(0)) == 1  # the periodic sweep
    assert len(callbacks) == 1
    process_stripe_event(event.pk)
    event.refresh_from_db()
    assert (event.is_processed, event.attempts, event.last_error) == (True, 2, "")
    assert Subscription.objects.get().status == "active"


def test_the_task_retries_through_celery_until_stripe_answers(
    stripe_stub, customer, post_event, eager_celery, django_capture_on_commit_callbacks
):
    stripe_stub.subscriptions["sub_one"] = _snapshot()
    stripe_stub.failures[SUB.format("sub_one")] = 2
    with django_capture_on_commit_callbacks(execute=True):
        post_event(event_payload("customer.subscription.created", _snapshot()))
    event = StripeEvent.objects.get()
    assert (event.is_processed, event.attempts) == (True, 3)  # two failures, then success
    assert stored_access(customer.user)


def test_the_periodic_sweep_leaves_fresh_and_processed_events_alone(
    stripe_stub, customer, post_event, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        post_event(event_payload("customer.subscription.created", _snapshot()))
    with django_capture_on_commit_callbacks() as callbacks:
        assert services.events_retry_unprocessed() == 0  # younger than two minutes: its own task has it
    assert not callbacks


# --- What each event type does -------------------------------------------------------------------


def test_checkout_completed_links_the_customer_to_the_reader_and_stores_the_subscription(
    stripe_stub, post_event, eager_celery, django_capture_on_commit_callbacks
):
    reader = UserFactory()
    stripe_stub.subscriptions["sub_new"] = subscription_object("sub_new", customer="cus_new")
    session = {"id": "cs_test_1", "object": "checkout.session", "mode": "subscription", "customer": "cus_new",
               "subscription": "sub_new", "client_reference_id": str(reader.pk)}  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        post_event(event_payload("checkout.session.completed", session))
    assert Customer.objects.get(stripe_id="cus_new").user == reader
    assert Subscription.objects.get().stripe_id == "sub_new"
    assert stored_access(reader)


def test_a_payment_failure_starts_the_grace_period_when_it_happened_and_emails_once(
    stripe_stub, customer, post_event, eager_celery, django_capture_on_commit_callbacks, mailoutbox
):
    failed_at = int(time.time()) - 3 * 86400  # delivered three days late
    stripe_stub.subscriptions["sub_one"] = _snapshot(status="past_due")
    invoice = {"id": "in_9", "object": "invoice", "parent": {"subscription_details": {"subscription": "sub_one"}}}
    event = event_payload("invoice.payment_failed", invoice, created=failed_at)
    # Late delivery: Stripe signs when it sends, so the signature is fresh though the event is old.
    with django_capture_on_commit_callbacks(execute=True):
        post_event(event)
        post_event(event)

    subscription = Subscription.objects.get()
    assert subscription.status == "past_due"
    assert abs((subscription.past_due_since - timezone.now()).total_seconds() + 3 * 86400) < 5
    assert stored_access(customer.user)  # 3 of 7 days of grace used
    assert not stored_access(customer.user, now=subscription.past_due_since + timedelta(days=7))
    assert len(mailoutbox) == 1
    assert mailoutbox[0].to == [customer.user.email]
    assert "did not go through" in mailoutbox[0].subject
    assert f"{settings.SITE_URL}/accounts/profile/#billing" in mailoutbox[0].body  # SITE_URL, not example.com


def test_the_grace_period_is_not_restarted_by_later_events(
    stripe_stub, customer, post_event, eager_celery, django_capture_on_commit_callbacks
):
    stripe_stub.subscriptions["sub_one"] = _snapshot(status="past_due")
    first = timezone.now() - timedelta(days=5)
    Subscription.objects.create(customer=customer, stripe_id="sub_one", status="past_due", past_due_since=first)
    with django_capture_on_commit_callbacks(execute=True):
        post_event(event_payload("customer.subscription.updated", _snapshot(status="past_due")))
        post_event(event_payload("invoice.payment_failed", {"id": "in_2", "subscription": "sub_one"}))
    assert Subscription.objects.get().past_due_since == first


def test_cancellation_emails_follow_changes_of_state(
    stripe_stub, customer, post_event, eager_celery, django_capture_on_commit_callbacks, mailoutbox
):
    Subscription.objects.create(customer=customer, stripe_id="sub_one", status="active")
    stripe_stub.subscriptions["sub_one"] = _snapshot(status="canceled")
    with django_capture_on_commit_callbacks(execute=True):
        post_event(event_payload("customer.subscription.deleted", _snapshot(status="canceled")))
        post_event(
            event_payload("customer.subscription.updated", _snapshot(status="canceled"))
        )  # another event, same state
    assert [m.subject for m in mailoutbox] == ["[Kernel Engineering] Your subscription has ended"]
    assert "https://kernel.example.com/pricing/" in mailoutbox[0].body  # the test settings' SITE_URL


def test_other_event_types_are_stored_and_need_no_processing(
    stripe_stub, customer, post_event, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        assert post_event(event_payload("customer.created", {"id": "cus_x", "object": "customer"})).status_code == 200
        assert (
            post_event(
                event_payload("invoice.paid", {"id": "in_oneoff", "object": "invoice", "subscription": None})
            ).status_code
            == 200
        )
    assert not stripe_stub.requests
    event = StripeEvent.objects.get(type="customer.created")
    assert event.is_processed and len(callbacks) == 1  # only the invoice.paid needs a task (and it does nothing)


def test_subscriptions_of_customers_who_are_no_readers_are_ignored(
    stripe_stub, post_event, eager_celery, django_capture_on_commit_callbacks
):
    stripe_stub.subscriptions["sub_else"] = subscription_object("sub_else", customer="cus_other_product")
    with django_capture_on_commit_callbacks(execute=True):
        post_event(event_payload("customer.subscription.created", stripe_stub.subscriptions["sub_else"]))
    assert StripeEvent.objects.get().is_processed
    assert not Subscription.objects.exists()


def test_a_subscription_stripe_no_longer_knows_gives_nothing(
    stripe_stub, customer, post_event, eager_celery, django_capture_on_commit_callbacks
):
    Subscription.objects.create(customer=customer, stripe_id="sub_one", status="active")
    with django_capture_on_commit_callbacks(execute=True):
        post_event(event_payload("customer.subscription.deleted", _snapshot(status="canceled")))  # and GET answers 404
    assert Subscription.objects.get().status == "canceled"
    assert not stored_access(customer.user)


def test_beat_runs_the_sweep_which_requeues_old_unprocessed_events(
    stripe_stub, customer, django_capture_on_commit_callbacks
):
    from apps.subscriptions.tasks import retry_unprocessed_stripe_events
    from config.celery import app

    schedule = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert "apps.subscriptions.tasks.retry_unprocessed_stripe_events" in schedule
    assert retry_unprocessed_stripe_events.name in app.tasks

    old = StripeEvent.objects.create(
        stripe_id="evt_old", type="invoice.paid", stripe_created=timezone.now(), payload={}
    )
    StripeEvent.objects.filter(pk=old.pk).update(received_at=timezone.now() - timedelta(minutes=10))
    StripeEvent.objects.create(
        stripe_id="evt_done",
        type="invoice.paid",
        stripe_created=timezone.now(),
        payload={},
        processed_at=timezone.now(),
    )
    with django_capture_on_commit_callbacks() as callbacks:
        assert retry_unprocessed_stripe_events() == 1
    assert len(callbacks) == 1

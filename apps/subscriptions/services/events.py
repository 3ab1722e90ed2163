"""Stripe webhook events: verified, stored once, then applied by a Celery task. Applying an event only
re-reads what it concerns from Stripe (`subscription_sync`), so events that arrive twice, late or out of
order all converge on what Stripe holds now."""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Callable
from datetime import timedelta

import stripe
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError

from apps.subscriptions import stripe_api
from apps.subscriptions.errors import WebhookRejected
from apps.subscriptions.models import StripeEvent, Subscription
from apps.subscriptions.services.emails import EmailKind, _enqueue_email
from apps.subscriptions.services.sync import customer_link, subscription_sync

logger = logging.getLogger(__name__)

_ERROR_MAX_CHARS = 2000
WEBHOOK_TOLERANCE_S = stripe.Webhook.DEFAULT_TOLERANCE  # 5 minutes, into the past and now the future too
# Stripe's event objects nest a dozen levels at most (expanded objects included); far deeper is not an event,
# and would not survive storing and reading back.
MAX_EVENT_DEPTH = 64
_LATEST_TIMESTAMP = 253_402_300_799  # 9999-12-31T23:59:59Z, the last second a Python datetime holds


def event_verify(*, payload: bytes, signature: str | None) -> dict:
    """The event in `payload` if its Stripe-Signature is valid for STRIPE_WEBHOOK_SECRET and its
    timestamp within Stripe's 5-minute tolerance of now, either way; WebhookRejected otherwise."""
    secret = settings.STRIPE_WEBHOOK_SECRET
    if not secret:
        raise WebhookRejected("STRIPE_WEBHOOK_SECRET is not set.")
    if not signature:
        raise WebhookRejected("No Stripe-Signature header.")
    try:
        stripe.WebhookSignature.verify_header(payload, signature, secret, WEBHOOK_TOLERANCE_S)
    except stripe.SignatureVerificationError as exc:
        raise WebhookRejected("Bad signature or stale timestamp.") from exc
    except UnicodeDecodeError as exc:
        raise WebhookRejected("Malformed payload.") from exc
    _refuse_future_timestamp(signature)
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested past the parser's stack
        raise WebhookRejected("Malformed payload.") from exc
    if not _looks_like_event(data):
        raise WebhookRejected("Not an event.")
    if not _storable(data):
        raise WebhookRejected("Not an event: nested deeper than any Stripe object, or holding NUL, NaN or a surrogate.")
    return data


def _looks_like_event(data: object) -> bool:
    """The fields event_record stores have the types and sizes of its columns (a stranger signed nothing,
    but a leaked secret must not buy a 500)."""
    if not isinstance(data, dict) or data.get("object") == "v2.core.event":  # a thin event: no snapshot to store
        return False
    event_id, event_type, created = data.get("id"), data.get("type"), data.get("created")
    api_version = data.get("api_version") or ""
    return (
        isinstance(event_id, str)
        and 0 < len(event_id) <= 255
        and isinstance(event_type, str)
        and 0 < len(event_type) <= 255
        and isinstance(api_version, str)
        and len(api_version) <= 64
        and (created is None or (type(created) is int and 0 <= created <= _LATEST_TIMESTAMP))
        and isinstance(data.get("data"), dict)
        and isinstance(data["data"].get("object", {}), dict)
    )


def _refuse_future_timestamp(signature: str) -> None:
    # Stripe's client checks only the past; a timestamp from the future would let a captured delivery be replayed
    # for as long as its signer chose.
    try:
        timestamp = int(next(item.split("=")[1] for item in signature.split(",") if item.split("=")[0] == "t"))
    except (StopIteration, ValueError, IndexError) as exc:
        raise WebhookRejected("Bad signature or stale timestamp.") from exc
    if timestamp > time.time() + WEBHOOK_TOLERANCE_S:
        raise WebhookRejected("Timestamp in the future.")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _storable(value: object) -> bool:
    """Whether a stranger's JSON fits a jsonb column: nested at most MAX_EVENT_DEPTH deep, and no NUL character,
    lone surrogate ("\\ud800" is valid JSON but no UTF-8 text: the driver cannot send it) or NaN/infinity anywhere
    (PostgreSQL refuses them). Walked without recursion."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str) and ("\x00" in item or _SURROGATE.search(item)):
            return False
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict | list):
            if depth > MAX_EVENT_DEPTH:
                return False
            children = [*item, *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return True


# What Stripe's objects say of the person (customers, Checkout Sessions, invoices, charges, payment methods).
# Processing reads none of it (it re-reads the subscription by id), so no event stores it: a reader's events go with
# their account (apps.subscriptions.personal_data), but those that Stripe sends while or after their account is
# deleted (the closing's own customer.deleted, customer.subscription.deleted, checkout.session.expired) arrive when
# there is no longer a customer to tie them to, and must not bring the reader's email address and name back.
PERSONAL_KEYS = frozenset(
    {
        "email",
        "name",
        "phone",
        "address",
        "shipping",
        "shipping_details",
        "billing_details",
        "customer_details",
        "customer_email",
        "customer_name",
        "customer_phone",
        "customer_address",
        "customer_shipping",
        "receipt_email",
    }
)


def _personal_data_drop(value):
    # No deeper than MAX_EVENT_DEPTH (event_verify), so recursion is bounded.
    if isinstance(value, dict):
        return {key: _personal_data_drop(item) for key, item in value.items() if key not in PERSONAL_KEYS}
    if isinstance(value, list):
        return [_personal_data_drop(item) for item in value]
    return value


def event_record(*, event: dict) -> tuple[StripeEvent, bool]:
    """Stores a verified event once, without what it says of the person (PERSONAL_KEYS); a redelivery stores nothing
    (False), but queues the event again while it is unapplied. A new event of a handled type is processed by a
    Celery task enqueued once this transaction commits."""
    obj = (event.get("data") or {}).get("object") or {}
    handled = event["type"] in HANDLED_EVENT_TYPES
    try:
        with transaction.atomic():
            stored = StripeEvent.objects.create(
                stripe_id=event["id"],
                type=event["type"],
                livemode=bool(event.get("livemode")),
                api_version=event.get("api_version") or "",
                stripe_created=stripe_api.timestamp(event.get("created")) or timezone.now(),
                object_id=str(obj.get("id") or "")[:255],
                payload=_personal_data_drop(event),
                processed_at=None if handled else timezone.now(),  # nothing to do for the others
            )
    except IntegrityError:
        stored = StripeEvent.objects.get(stripe_id=event["id"])
        if not stored.is_processed and stored.dead_lettered_at is None:
            # Stripe delivers again when it got no 2xx, or on its own; either way the event may never have
            # been queued (a broker outage): queue it again. Applying it twice is harmless (event_process).
            _enqueue_event_processing(stored.pk)
        return stored, False
    if handled:
        _enqueue_event_processing(stored.pk)
    return stored, True


def _enqueue_event_processing(event_pk: int) -> None:
    from apps.subscriptions.tasks import process_stripe_event

    def send() -> None:
        try:
            process_stripe_event.delay(event_pk)
        except (KombuOperationalError, OSError) as error:
            # The event is stored: Stripe's next delivery or the periodic retry queues it again.
            logger.warning("Stripe event %s stored but not queued, the broker refused it: %s", event_pk, error)

    transaction.on_commit(send)


def event_process(*, event_id: int) -> StripeEvent | None:
    """Applies a stored event (once): re-reads the subscription it concerns from Stripe and
    stores its current state. On failure the event stays unprocessed with the error, and the
    exception propagates so that the task retries; the periodic sweep retries it later too."""
    try:
        with transaction.atomic():
            event = StripeEvent.objects.select_for_update().filter(pk=event_id).first()
            if event is None or event.processed_at is not None or event.dead_lettered_at is not None:
                return event  # done, or given up on until an admin replays it (event_replay)
            _event_apply(event)
            event.processed_at = timezone.now()
            event.attempts = F("attempts") + 1
            event.last_error = ""
            event.save(update_fields=["processed_at", "attempts", "last_error"])
    except Exception as exc:
        message = stripe_api.redact(f"{type(exc).__name__}: {exc}")[:_ERROR_MAX_CHARS]
        StripeEvent.objects.filter(pk=event_id, processed_at__isnull=True).update(
            attempts=F("attempts") + 1, last_error=message
        )
        logger.warning("Stripe event %s failed: %s", event_id, message)
        dead = StripeEvent.objects.filter(
            pk=event_id,
            processed_at__isnull=True,
            dead_lettered_at__isnull=True,
            attempts__gte=settings.STRIPE_EVENT_MAX_ATTEMPTS,
        ).update(dead_lettered_at=timezone.now())
        if dead:
            logger.error(
                "Stripe event %s dead-lettered after %s failed attempts: replay it from admin once fixed (%s)",
                event_id,
                settings.STRIPE_EVENT_MAX_ATTEMPTS,
                message,
            )
            _operators_notify()
        raise
    event.refresh_from_db()
    return event


def _operators_notify() -> None:
    from apps.subscriptions.services.reconcile import dead_letters_notify  # reconcile imports this module

    try:
        dead_letters_notify()
    except OSError as error:  # the mail server: the daily reconciliation mails it again
        logger.warning("Could not mail the operators about a dead letter: %s", error)


def event_replay(*, event_id: int) -> StripeEvent | None:
    """An admin's second chance for a dead-lettered (or any unprocessed) event: its count starts again and it is
    processed now; a failure is recorded on it as before (and raised)."""
    StripeEvent.objects.filter(pk=event_id, processed_at__isnull=True).update(dead_lettered_at=None, attempts=0)
    return event_process(event_id=event_id)


def events_retry_unprocessed(*, older_than: timedelta = timedelta(minutes=2), limit: int = 500) -> int:
    """Enqueues processing for events still unprocessed `older_than` after they arrived (their
    own task gave up, or a worker died); returns how many."""
    cutoff = timezone.now() - older_than
    ids = list(
        StripeEvent.objects.filter(processed_at__isnull=True, dead_lettered_at__isnull=True, received_at__lte=cutoff)
        .order_by("received_at")
        .values_list("pk", flat=True)[:limit]
    )
    for pk in ids:
        _enqueue_event_processing(pk)
    return len(ids)


# --- Applying an event: one handler per type ------------------------------------------------


def _on_checkout_completed(event: StripeEvent, obj: dict) -> None:
    if obj.get("mode") != "subscription":
        return
    customer_id = stripe_api.object_id(obj.get("customer"))
    user_id = obj.get("client_reference_id") or (obj.get("metadata") or {}).get("user_id")
    if customer_id and user_id:
        customer_link(stripe_customer_id=customer_id, user_id=user_id)
    subscription_id = stripe_api.object_id(obj.get("subscription"))
    if subscription_id:
        subscription_sync(stripe_subscription_id=subscription_id)


def _on_subscription_changed(event: StripeEvent, obj: dict) -> None:
    # The time of an event that shows the subscription past_due is when it became so.
    became_past_due = event.stripe_created if obj.get("status") == Subscription.Status.PAST_DUE else None
    subscription_sync(stripe_subscription_id=obj["id"], past_due_observed_at=became_past_due)


def _on_invoice_paid(event: StripeEvent, obj: dict) -> None:
    subscription_id = stripe_api.invoice_subscription_id(obj)
    if subscription_id:  # none on a one-off invoice: nothing to do with access
        subscription_sync(stripe_subscription_id=subscription_id)


def _on_invoice_payment_failed(event: StripeEvent, obj: dict) -> None:
    subscription_id = stripe_api.invoice_subscription_id(obj)
    if not subscription_id:
        return  # a one-off invoice: nothing to do with access
    subscription = subscription_sync(stripe_subscription_id=subscription_id, past_due_observed_at=event.stripe_created)
    if subscription is not None and subscription.status in (Subscription.Status.PAST_DUE, Subscription.Status.UNPAID):
        _enqueue_email(subscription.pk, EmailKind.PAYMENT_FAILED)


EVENT_HANDLERS: dict[str, Callable[[StripeEvent, dict], None]] = {
    "checkout.session.completed": _on_checkout_completed,
    "customer.subscription.created": _on_subscription_changed,
    "customer.subscription.updated": _on_subscription_changed,
    "customer.subscription.deleted": _on_subscription_changed,
    "invoice.paid": _on_invoice_paid,
    "invoice.payment_succeeded": _on_invoice_paid,  # what older API versions (and localstripe) send for invoice.paid
    "invoice.payment_failed": _on_invoice_payment_failed,
}
# Events of other types are stored (marked processed at once) and otherwise ignored.
HANDLED_EVENT_TYPES = frozenset(EVENT_HANDLERS)


def _event_apply(event: StripeEvent) -> None:
    handler = EVENT_HANDLERS.get(event.type)
    if handler is not None:
        handler(event, (event.payload.get("data") or {}).get("object") or {})

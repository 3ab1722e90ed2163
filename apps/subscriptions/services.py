"""Writes: keyword-only `<noun>_<verb>` services, atomic where they write.

The rule that keeps access right whatever Stripe's asynchronous world does: a webhook event is
only a hint. It is stored once, and processing it re-reads the subscription from the Stripe API
and stores that current state (`subscription_sync`), so events that arrive twice, late or out
of order all converge on what Stripe holds now.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import stripe
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sites.models import Site
from django.core.mail import send_mail
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.template.loader import render_to_string
from django.utils import timezone

from apps.subscriptions import stripe_api
from apps.subscriptions.errors import (
    AlreadySubscribed,
    NoBillingAccount,
    StripeDataError,
    StripeNotConfigured,
    UnknownPlan,
    WebhookRejected,
)
from apps.subscriptions.models import ComplimentaryAccess, Customer, StripeEvent, Subscription

logger = logging.getLogger(__name__)

HANDLED_EVENT_TYPES = frozenset(
    {
        "checkout.session.completed",
        "customer.subscription.created",
        "customer.subscription.updated",
        "customer.subscription.deleted",
        "invoice.paid",
        "invoice.payment_succeeded",  # what older API versions (and localstripe) send for invoice.paid
        "invoice.payment_failed",
    }
)
PLANS = ("monthly", "yearly")
_ERROR_MAX_CHARS = 2000


class EmailKind:
    PAYMENT_FAILED = "payment_failed"
    CANCELLATION_SCHEDULED = "cancellation_scheduled"
    CANCELED = "canceled"
    ALL = (PAYMENT_FAILED, CANCELLATION_SCHEDULED, CANCELED)


# --- Checkout and portal -------------------------------------------------------------------


def plan_price_id(*, plan: str) -> str:
    price = {"monthly": settings.STRIPE_PRICE_MONTHLY, "yearly": settings.STRIPE_PRICE_YEARLY}.get(plan) or ""
    if not price:
        raise UnknownPlan(f"No price is configured for the plan {plan!r}.")
    return price


def customer_ensure(*, user) -> Customer:
    """The reader's Stripe customer, created at Stripe on first use and reused ever after."""
    existing = Customer.objects.filter(user=user).first()
    if existing is not None:
        return existing
    params = {"email": user.email, "metadata": {"user_id": str(user.pk)}}
    if getattr(user, "name", ""):
        params["name"] = user.name
    # The same key on a retried or doubled request gives back the same customer at Stripe.
    key = stripe_api.idempotency_key("customer", user.pk, user.email)
    created = stripe_api.client().v1.customers.create(params=params, options={"idempotency_key": key})
    customer, _ = Customer.objects.get_or_create(
        user=user,
        defaults={"stripe_id": created.id, "email": user.email, "livemode": bool(getattr(created, "livemode", False))},
    )
    return customer


def checkout_session_create(*, user, plan: str, success_url: str, cancel_url: str) -> str:
    """A Stripe Checkout Session in subscription mode for `user`; returns the URL to send them
    to. The session grants nothing: access comes from the webhook, after Stripe confirms."""
    price = plan_price_id(plan=plan)
    if not (settings.STRIPE_SECRET_KEY and settings.STRIPE_WEBHOOK_SECRET):
        raise StripeNotConfigured("STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET must be set.")
    if Subscription.objects.for_user(user).still_open().exists():
        raise AlreadySubscribed(
            "You already have a subscription: manage it (plan, card, cancellation) from your account page."
        )
    customer = customer_ensure(user=user)
    params: dict = {
        "mode": "subscription",
        "customer": customer.stripe_id,
        "client_reference_id": str(user.pk),
        "line_items": [{"price": price, "quantity": 1}],
        "allow_promotion_codes": True,
        "success_url": success_url,
        "cancel_url": cancel_url,
        "metadata": {"user_id": str(user.pk), "plan": plan},
        # On the subscription too, so that its events name the reader even before
        # checkout.session.completed arrives.
        "subscription_data": {"metadata": {"user_id": str(user.pk)}},
    }
    if settings.STRIPE_TRIAL_DAYS > 0:
        params["subscription_data"]["trial_period_days"] = settings.STRIPE_TRIAL_DAYS
    session = stripe_api.client().v1.checkout.sessions.create(params=params)
    return session.url


def portal_session_create(*, user, return_url: str) -> str:
    """A Customer Portal session (change plan, update card, cancel, resume); returns its URL."""
    customer = Customer.objects.filter(user=user).first()
    if customer is None:
        raise NoBillingAccount("There is no billing account to manage yet.")
    session = stripe_api.client().v1.billing_portal.sessions.create(
        params={"customer": customer.stripe_id, "return_url": return_url}
    )
    return session.url


# --- Webhook events ----------------------------------------------------------------------


def event_verify(*, payload: bytes, signature: str | None) -> dict:
    """The event in `payload` if its Stripe-Signature is valid for STRIPE_WEBHOOK_SECRET and
    recent (Stripe's 5-minute tolerance); WebhookRejected otherwise."""
    secret = settings.STRIPE_WEBHOOK_SECRET
    if not secret:
        raise WebhookRejected("STRIPE_WEBHOOK_SECRET is not set.")
    if not signature:
        raise WebhookRejected("No Stripe-Signature header.")
    try:
        event = stripe.Webhook.construct_event(payload, signature, secret)
    except stripe.SignatureVerificationError as exc:
        raise WebhookRejected("Bad signature or stale timestamp.") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise WebhookRejected("Malformed payload.") from exc
    data = stripe_api.as_dict(event)
    if (
        not isinstance(data.get("id"), str)
        or not isinstance(data.get("type"), str)
        or not isinstance(data.get("data"), dict)
    ):
        raise WebhookRejected("Not an event.")
    return data


def event_record(*, event: dict) -> tuple[StripeEvent, bool]:
    """Stores a verified event once; a redelivery is a no-op (False). A new event of a handled
    type is processed by a Celery task enqueued once this transaction commits."""
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
                payload=event,
                processed_at=None if handled else timezone.now(),  # nothing to do for the others
            )
    except IntegrityError:
        return StripeEvent.objects.get(stripe_id=event["id"]), False
    if handled:
        _enqueue_event_processing(stored.pk)
    return stored, True


def _enqueue_event_processing(event_pk: int) -> None:
    from apps.subscriptions.tasks import process_stripe_event

    transaction.on_commit(lambda: process_stripe_event.delay(event_pk))


def event_process(*, event_id: int) -> StripeEvent | None:
    """Applies a stored event (once): re-reads the subscription it concerns from Stripe and
    stores its current state. On failure the event stays unprocessed with the error, and the
    exception propagates so that the task retries; the periodic sweep retries it later too."""
    try:
        with transaction.atomic():
            event = StripeEvent.objects.select_for_update().filter(pk=event_id).first()
            if event is None or event.processed_at is not None:
                return event
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
        raise
    event.refresh_from_db()
    return event


def events_retry_unprocessed(*, older_than: timedelta = timedelta(minutes=2), limit: int = 500) -> int:
    """Enqueues processing for events still unprocessed `older_than` after they arrived (their
    own task gave up, or a worker died); returns how many."""
    cutoff = timezone.now() - older_than
    ids = list(
        StripeEvent.objects.filter(processed_at__isnull=True, received_at__lte=cutoff)
        .order_by("received_at")
        .values_list("pk", flat=True)[:limit]
    )
    for pk in ids:
        _enqueue_event_processing(pk)
    return len(ids)


def _event_apply(event: StripeEvent) -> None:
    obj = (event.payload.get("data") or {}).get("object") or {}
    kind = event.type
    if kind == "checkout.session.completed":
        if obj.get("mode") != "subscription":
            return
        customer_id = stripe_api.object_id(obj.get("customer"))
        user_id = obj.get("client_reference_id") or (obj.get("metadata") or {}).get("user_id")
        if customer_id and user_id:
            customer_link(stripe_customer_id=customer_id, user_id=user_id)
        subscription_id = stripe_api.object_id(obj.get("subscription"))
        if subscription_id:
            subscription_sync(stripe_subscription_id=subscription_id)
    elif kind.startswith("customer.subscription."):
        # The time of an event that shows the subscription past_due is when it became so.
        became_past_due = event.stripe_created if obj.get("status") == Subscription.Status.PAST_DUE else None
        subscription_sync(stripe_subscription_id=obj["id"], past_due_observed_at=became_past_due)
    elif kind in ("invoice.paid", "invoice.payment_succeeded", "invoice.payment_failed"):
        subscription_id = stripe_api.invoice_subscription_id(obj)
        if not subscription_id:
            return  # a one-off invoice: nothing to do with access
        failed = kind == "invoice.payment_failed"
        subscription = subscription_sync(
            stripe_subscription_id=subscription_id, past_due_observed_at=event.stripe_created if failed else None
        )
        if (
            failed
            and subscription is not None
            and subscription.status in (Subscription.Status.PAST_DUE, Subscription.Status.UNPAID)
        ):
            _enqueue_email(subscription.pk, EmailKind.PAYMENT_FAILED)


# --- The mirror ----------------------------------------------------------------------------


def customer_link(*, stripe_customer_id: str, user_id) -> Customer:
    """Records that `stripe_customer_id` is the reader `user_id`'s (from a Checkout Session's
    client_reference_id)."""
    user = get_user_model().objects.filter(pk=int(user_id)).first() if str(user_id).isdigit() else None
    if user is None:
        raise StripeDataError(f"Stripe customer {stripe_customer_id} names reader {user_id!r}, who does not exist.")
    customer = Customer.objects.filter(stripe_id=stripe_customer_id).first()
    if customer is not None:
        if customer.user_id != user.pk:
            raise StripeDataError(
                f"Stripe customer {stripe_customer_id} belongs to reader {customer.user_id}, not {user.pk}."
            )
        return customer
    other = Customer.objects.filter(user=user).first()
    if other is not None:
        raise StripeDataError(
            f"Reader {user.pk} already has the Stripe customer {other.stripe_id}, not {stripe_customer_id}."
        )
    return Customer.objects.create(user=user, stripe_id=stripe_customer_id, email=user.email)


def subscription_sync(
    *, stripe_subscription_id: str, past_due_observed_at: datetime | None = None
) -> Subscription | None:
    """Reads the subscription from Stripe and stores its current state. Serialised per
    subscription, so that of two concurrent syncs the later read is the one stored."""
    with transaction.atomic():
        _lock(f"stripe-subscription:{stripe_subscription_id}")
        try:
            data = stripe_api.as_dict(stripe_api.client().v1.subscriptions.retrieve(stripe_subscription_id))
        except stripe.InvalidRequestError as exc:
            if getattr(exc, "code", None) != "resource_missing":
                raise
            return _subscription_gone(stripe_subscription_id)
        return subscription_store(data=data, past_due_observed_at=past_due_observed_at)


@dataclass
class SyncReport:
    synced: list[Subscription] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # subscriptions of customers who are no readers
    failed: list[tuple[str, str]] = field(default_factory=list)  # (subscription id, error)


def customer_sync(*, stripe_customer_id: str) -> SyncReport:
    """Re-reads every subscription of one customer from Stripe (the `stripe_sync` command)."""
    return _sync_listed({"customer": stripe_customer_id, "status": "all", "limit": 100})


def subscriptions_sync_all() -> SyncReport:
    """Re-reads every subscription at Stripe; one that fails does not stop the others."""
    return _sync_listed({"status": "all", "limit": 100})


def _sync_listed(params: dict) -> SyncReport:
    report = SyncReport()
    for item in stripe_api.client().v1.subscriptions.list(params=params).auto_paging_iter():
        try:
            subscription = subscription_sync(stripe_subscription_id=item.id)
        except (stripe.StripeError, StripeDataError) as exc:
            report.failed.append((item.id, stripe_api.redact(f"{type(exc).__name__}: {exc}")))
            continue
        (report.synced.append(subscription) if subscription is not None else report.skipped.append(item.id))
    return report


def subscription_store(*, data: dict, past_due_observed_at: datetime | None = None) -> Subscription | None:
    """Writes one subscription as Stripe answered it. Subscriptions of customers that are no
    reader's (another product on the same Stripe account) are ignored: None."""
    fields = _subscription_fields(data)
    with transaction.atomic():
        customer = _customer_for_subscription(data)
        if customer is None:
            logger.info(
                "Stripe subscription %s: customer %s is no reader's; ignored.", data.get("id"), data.get("customer")
            )
            return None
        existing = Subscription.objects.select_for_update().filter(stripe_id=data["id"]).first()
        now = timezone.now()
        if fields["status"] == Subscription.Status.PAST_DUE:
            if existing is not None and existing.status == Subscription.Status.PAST_DUE and existing.past_due_since:
                fields["past_due_since"] = existing.past_due_since
            else:
                fields["past_due_since"] = min(past_due_observed_at or now, now)
        else:
            fields["past_due_since"] = None
        subscription, _ = Subscription.objects.update_or_create(
            stripe_id=data["id"], defaults={**fields, "customer": customer, "synced_at": now}
        )
        for kind in _emails_for_transition(existing, subscription):
            _enqueue_email(subscription.pk, kind)
        return subscription


def _subscription_fields(data: dict) -> dict:
    status = data.get("status")
    if status not in Subscription.Status.values:
        raise StripeDataError(f"Stripe subscription {data.get('id')} has an unknown status {status!r}.")
    items = ((data.get("items") or {}).get("data")) or []
    item = items[0] if items else {}
    price = item.get("price") or {}
    plan = item.get("plan") or data.get("plan") or {}
    recurring = price.get("recurring") or {}
    ts = stripe_api.timestamp
    # Since API version 2025-03-31 the billing period lives on the item; before, on the subscription.
    period_start = item.get("current_period_start") or data.get("current_period_start")
    period_end = item.get("current_period_end") or data.get("current_period_end")
    unit_amount = price.get("unit_amount") if price else plan.get("amount")
    return {
        "status": status,
        "price_id": (price.get("id") or plan.get("id") or "")[:255],
        "interval": (recurring.get("interval") or plan.get("interval") or "")[:16],
        "interval_count": int(recurring.get("interval_count") or plan.get("interval_count") or 1),
        "unit_amount": int(unit_amount) if unit_amount is not None else None,
        "currency": (price.get("currency") or plan.get("currency") or "")[:3],
        "current_period_start": ts(period_start),
        "current_period_end": ts(period_end),
        "cancel_at_period_end": bool(data.get("cancel_at_period_end")),
        "cancel_at": ts(data.get("cancel_at")),
        "canceled_at": ts(data.get("canceled_at")),
        "ended_at": ts(data.get("ended_at")),
        "trial_end": ts(data.get("trial_end")),
        "livemode": bool(data.get("livemode")),
        "stripe_created": ts(data.get("created")),
    }


def _customer_for_subscription(data: dict) -> Customer | None:
    customer_id = stripe_api.object_id(data.get("customer"))
    if not customer_id:
        raise StripeDataError(f"Stripe subscription {data.get('id')} has no customer.")
    customer = Customer.objects.filter(stripe_id=customer_id).first()
    if customer is not None:
        return customer
    user_id = str((data.get("metadata") or {}).get("user_id") or "")
    if not user_id.isdigit() or not get_user_model().objects.filter(pk=int(user_id)).exists():
        return None  # not one of ours (or a reader since deleted)
    return customer_link(stripe_customer_id=customer_id, user_id=user_id)


def _subscription_gone(stripe_subscription_id: str) -> Subscription | None:
    """Stripe no longer knows the subscription (a deleted test customer): it gives nothing."""
    existing = Subscription.objects.select_for_update().filter(stripe_id=stripe_subscription_id).first()
    if existing is None:
        return None
    previous = Subscription.objects.get(pk=existing.pk)
    existing.status = Subscription.Status.CANCELED
    existing.ended_at = existing.ended_at or timezone.now()
    existing.past_due_since = None
    existing.synced_at = timezone.now()
    existing.save()
    for kind in _emails_for_transition(previous, existing):
        _enqueue_email(existing.pk, kind)
    return existing


def _emails_for_transition(before: Subscription | None, after: Subscription) -> list[str]:
    """Emails follow changes of stored state, so a redelivered or replayed event sends none."""
    if before is None:
        return []
    kinds = []
    if after.status == Subscription.Status.CANCELED and before.status != Subscription.Status.CANCELED:
        kinds.append(EmailKind.CANCELED)
    elif (
        after.status in (Subscription.Status.ACTIVE, Subscription.Status.TRIALING)
        and after.ends_at
        and not before.ends_at
    ):
        kinds.append(EmailKind.CANCELLATION_SCHEDULED)
    return kinds


def _lock(name: str) -> None:
    """A transaction-scoped lock on `name` (PostgreSQL); SQLite (development) runs one writer anyway."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])


# --- Emails --------------------------------------------------------------------------------


def _enqueue_email(subscription_pk: int, kind: str) -> None:
    from apps.subscriptions.tasks import send_subscription_email

    transaction.on_commit(lambda: send_subscription_email.delay(subscription_pk, kind))


def subscription_email_send(*, subscription_id: int, kind: str) -> bool:
    """Sends the reader the email of `kind` about their subscription; False when there is
    nothing to send (the row is gone, or the state changed back meanwhile)."""
    if kind not in EmailKind.ALL:
        raise ValueError(f"Unknown subscription email {kind!r}.")
    subscription = Subscription.objects.select_related("customer__user").filter(pk=subscription_id).first()
    if subscription is None:
        return False
    still_true = {
        EmailKind.PAYMENT_FAILED: subscription.status in (Subscription.Status.PAST_DUE, Subscription.Status.UNPAID),
        EmailKind.CANCELLATION_SCHEDULED: subscription.ends_at is not None
        and subscription.status != Subscription.Status.CANCELED,
        EmailKind.CANCELED: subscription.status == Subscription.Status.CANCELED,
    }[kind]
    if not still_true:
        return False
    user = subscription.customer.user
    context = {
        "user": user,
        "subscription": subscription,
        "site_url": f"https://{Site.objects.get_current().domain}",
        "grace_days": settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS,
    }
    subject = render_to_string(f"subscriptions/email/{kind}_subject.txt", context).strip()
    body = render_to_string(f"subscriptions/email/{kind}_message.txt", context)
    send_mail(f"{settings.ACCOUNT_EMAIL_SUBJECT_PREFIX}{subject}", body, None, [user.email])
    return True


# --- Complimentary access ----------------------------------------------------------------------


def complimentary_access_grant(
    *, user, reason: str, ends_at: datetime | None = None, granted_by=None, starts_at: datetime | None = None
) -> ComplimentaryAccess:
    reason = (reason or "").strip()
    if not reason:
        raise ValueError("Complimentary access needs a reason.")
    starts_at = starts_at or timezone.now()
    if ends_at is not None and ends_at <= starts_at:
        raise ValueError("The end date must come after the start.")
    return ComplimentaryAccess.objects.create(
        user=user, reason=reason, starts_at=starts_at, ends_at=ends_at, granted_by=granted_by
    )


def complimentary_access_revoke(*, access: ComplimentaryAccess, revoked_by=None) -> ComplimentaryAccess:
    if access.revoked_at is None:
        access.revoked_at = timezone.now()
        access.revoked_by = revoked_by
        access.save(update_fields=["revoked_at", "revoked_by"])
    return access

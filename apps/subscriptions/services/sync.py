"""The subscription mirror: what Stripe holds now, read from its API and stored (never from a redirect),
serialised per subscription; customers linked to readers."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

import stripe
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from apps.subscriptions import stripe_api
from apps.subscriptions.errors import StripeDataError
from apps.subscriptions.models import Customer, Subscription
from apps.subscriptions.services.emails import EmailKind, _enqueue_email
from apps.subscriptions.services.entitlement import entitlement_refresh, reader_trial_mark
from apps.subscriptions.services.trials import subscription_trial_refuse

logger = logging.getLogger(__name__)


def customer_link(*, stripe_customer_id: str, user_id) -> Customer | None:
    """Records that `stripe_customer_id` is the reader `user_id`'s (from a Checkout Session's
    client_reference_id). None when no such reader exists: one who deleted their account, whose checkout's event
    arrives afterwards (their customer was closed at Stripe first), has nothing left to link, and nothing that names
    them is made again."""
    user = get_user_model().objects.filter(pk=int(user_id)).first() if str(user_id).isdigit() else None
    if user is None:
        logger.info(
            "Stripe customer %s names reader %r, who does not exist (deleted?); ignored.", stripe_customer_id, user_id
        )
        return None
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
        subscription = subscription_store(data=data, past_due_observed_at=past_due_observed_at)
        if subscription is not None and (ended_trial := subscription_trial_refuse(subscription=subscription)):
            subscription = subscription_store(data=ended_trial)
        return subscription


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
        if subscription.trial_end is not None:
            reader_trial_mark(user_id=customer.user_id, at=subscription.stripe_created or now)
        entitlement_refresh(user_id=customer.user_id)
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
        "payment_method_id": (stripe_api.object_id(data.get("default_payment_method")) or "")[:255],
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
    entitlement_refresh(user_id=existing.customer.user_id)
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

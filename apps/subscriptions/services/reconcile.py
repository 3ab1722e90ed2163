"""The daily reconciliation with Stripe (beat: `subscriptions-reconcile`). Webhooks keep the mirror current, but an
event can be lost, or fail until it is dead-lettered; access windows are bounded (services.entitlement), so a missed
renewal would end access and a missed cancellation must not keep it. Once a day: re-read from Stripe every
subscription whose access window ends within a day (the renewal must have happened by now) and every one whose last
event failed, recompute every reader's stored access from the facts, and mail the operators each new dead letter."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import stripe
from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse
from django.utils import timezone

from apps.subscriptions import stripe_api
from apps.subscriptions.errors import BillingError
from apps.subscriptions.models import StripeEvent, Subscription
from apps.subscriptions.services.entitlement import entitlements_refresh_all, subscription_window
from apps.subscriptions.services.sync import subscription_sync

logger = logging.getLogger(__name__)

RECONCILE_HORIZON = timedelta(days=1)  # the task runs daily: a window ending before the next run is re-read now
_LIVE_STATUSES = (Subscription.Status.ACTIVE, Subscription.Status.TRIALING, Subscription.Status.PAST_DUE)


@dataclass
class ReconcileReport:
    synced: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (subscription id, error)
    readers: int = 0  # whose access was recomputed
    dead_letters_mailed: int = 0


def subscriptions_reconcile(*, now: datetime | None = None) -> ReconcileReport:
    now = now or timezone.now()
    report = ReconcileReport()
    for stripe_id in sorted(_subscriptions_ending(now) | _subscriptions_of_failed_events()):
        try:
            subscription_sync(stripe_subscription_id=stripe_id)
            report.synced.append(stripe_id)
        except (stripe.StripeError, BillingError) as exc:
            report.failed.append((stripe_id, stripe_api.redact(f"{type(exc).__name__}: {exc}")))
    # Every reader, not only those re-read: a grant deleted behind the services' back, a setting changed.
    report.readers = entitlements_refresh_all(now=now)
    report.dead_letters_mailed = dead_letters_notify()
    for stripe_id, error in report.failed:
        logger.warning("Reconciliation: subscription %s could not be re-read from Stripe: %s", stripe_id, error)
    return report


def _subscriptions_ending(now: datetime) -> set[str]:
    grace = timedelta(days=settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS)
    horizon = now + RECONCILE_HORIZON
    return {
        subscription.stripe_id
        for subscription in Subscription.objects.filter(status__in=_LIVE_STATUSES).iterator()
        if (window := subscription_window(subscription, grace=grace)) is not None and window[1] <= horizon
    }


def _subscriptions_of_failed_events() -> set[str]:
    """Subscriptions named by events that failed (still retried, or dead-lettered)."""
    failed = StripeEvent.objects.filter(processed_at__isnull=True, attempts__gt=0)
    ids = set()
    for event_type, payload in failed.values_list("type", "payload").iterator():
        obj = (payload.get("data") or {}).get("object") or {}
        if event_type.startswith("customer.subscription."):
            ids.add(stripe_api.object_id(obj.get("id")))
        elif event_type.startswith("invoice."):
            ids.add(stripe_api.invoice_subscription_id(obj))
        elif event_type == "checkout.session.completed":
            ids.add(stripe_api.object_id(obj.get("subscription")))
    return {stripe_id for stripe_id in ids if stripe_id}


def operator_recipients() -> list[str]:
    return list(dict.fromkeys([e for e in [settings.OPERATOR_EMAIL, *(a[1] for a in settings.ADMINS)] if e]))


def dead_letters_notify() -> int:
    """Mails the operators (OPERATOR_EMAIL and ADMINS) once about each dead letter not yet mailed; returns how many.
    Without a recipient nothing is marked, so the mail goes out once one is set."""
    recipients = operator_recipients()
    pending = StripeEvent.objects.filter(
        processed_at__isnull=True, dead_lettered_at__isnull=False, operators_notified_at__isnull=True
    )
    if not recipients:
        if pending.exists():
            logger.error("Stripe dead letters wait and no OPERATOR_EMAIL or ADMINS is set to mail about them.")
        return 0
    mailed = 0
    for event in pending.order_by("dead_lettered_at"):
        link = settings.SITE_URL + reverse("admin:subscriptions_stripeevent_change", args=[event.pk])
        send_mail(
            subject=f"[Kernel Engineering] Stripe event {event.stripe_id} dead-lettered",
            message=(
                f"The Stripe event {event.stripe_id} ({event.type}, {event.object_id}) failed {event.attempts} times "
                f"and is no longer retried. Access may be wrong until it is replayed.\n\nLast error: "
                f'{event.last_error}\n\nFix the cause, then replay it in admin (action "Process ... now"): {link}\n'
            ),
            from_email=None,
            recipient_list=recipients,
        )
        StripeEvent.objects.filter(pk=event.pk).update(operators_notified_at=timezone.now())
        mailed += 1
    return mailed

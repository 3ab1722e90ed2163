"""Emails about a reader's subscription (payment failed, cancellation scheduled, canceled). They follow
changes of stored state, and are sent by a Celery task that checks the state still holds."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string

from apps.subscriptions.models import Subscription
from config.site import site_url


class EmailKind:
    PAYMENT_FAILED = "payment_failed"
    CANCELLATION_SCHEDULED = "cancellation_scheduled"
    CANCELED = "canceled"
    ALL = (PAYMENT_FAILED, CANCELLATION_SCHEDULED, CANCELED)


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
        "site_url": site_url(),
        "grace_days": settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS,
    }
    subject = render_to_string(f"subscriptions/email/{kind}_subject.txt", context).strip()
    body = render_to_string(f"subscriptions/email/{kind}_message.txt", context)
    send_mail(f"{settings.ACCOUNT_EMAIL_SUBJECT_PREFIX}{subject}", body, None, [user.email])
    return True

"""One free trial per person: a reader has one (User.trial_used_at, and Checkout offers none afterwards), and so
does a card (TrialFingerprint: Stripe gives the same card the same fingerprint on every customer, so a new account
with the same card is caught too). A trial that breaks either rule is ended at Stripe at once; the subscription then
bills as usual."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from apps.subscriptions import stripe_api
from apps.subscriptions.models import Subscription, TrialFingerprint


def subscription_trial_refuse(*, subscription: Subscription) -> dict | None:
    """Ends the trial of `subscription` at Stripe when it is not its reader's first or its card has trialed on
    another subscription; returns what Stripe answered (to be stored), or None when the trial stands."""
    if subscription.status != Subscription.Status.TRIALING:
        return None
    user_id = subscription.customer.user_id
    trials = Subscription.objects.filter(customer__user_id=user_id, trial_end__isnull=False)
    first = trials.order_by("stripe_created", "pk").values_list("pk", flat=True).first()
    repeated = first is not None and first != subscription.pk  # another trial of this reader's came first
    fingerprint = _card_fingerprint(subscription.payment_method_id)
    if fingerprint:
        repeated |= (
            _fingerprint_record(fingerprint, user_id=user_id, subscription=subscription) != subscription.stripe_id
        )
    if not repeated:
        return None
    updated = stripe_api.client().v1.subscriptions.update(subscription.stripe_id, params={"trial_end": "now"})
    return stripe_api.as_dict(updated)


def _card_fingerprint(payment_method_id: str) -> str:
    if not payment_method_id:
        return ""
    method = stripe_api.as_dict(stripe_api.client().v1.payment_methods.retrieve(payment_method_id))
    return str((method.get("card") or {}).get("fingerprint") or "")


def _fingerprint_record(fingerprint: str, *, user_id, subscription: Subscription) -> str:
    """The subscription that first trialed with this card (this one, if none did before)."""
    defaults = {"user_id": user_id, "subscription_stripe_id": subscription.stripe_id}
    try:
        with transaction.atomic():
            card, _ = TrialFingerprint.objects.get_or_create(fingerprint=fingerprint, defaults=defaults)
    except IntegrityError:  # another reader's trial with the same card, stored at the same moment
        card = TrialFingerprint.objects.get(fingerprint=fingerprint)
    return card.subscription_stripe_id

"""Closing a reader's Stripe side when they delete their account, before anything of theirs is deleted here: once
the account is gone they have no portal to stop a charge from, so nothing at Stripe may go on billing them."""

from __future__ import annotations

import logging

import stripe

from apps.subscriptions import stripe_api
from apps.subscriptions.errors import BillingNotClosed, StripeNotConfigured
from apps.subscriptions.models import Customer

logger = logging.getLogger(__name__)

# Statuses in which Stripe bills no more and can start nothing again.
_ENDED = ("canceled", "incomplete_expired")
_PAGE = 100


def customer_close(*, user) -> None:
    """Expires the reader's open Checkout Sessions (a tab left open could otherwise start a subscription for an
    account that no longer exists), cancels every subscription still running at once, then deletes the customer
    at Stripe, with its email, user id and saved cards. Cancelling follows Stripe's defaults: no proration, no
    refund (the refund policy refunds a first payment on request, which the deletion page points to).
    Idempotent: a customer already deleted at Stripe is done. Raises BillingNotClosed when Stripe cannot be reached
    or refuses; whatever was closed by then stays closed, and a later attempt finishes the rest."""
    customer = Customer.objects.filter(user=user).first()
    if customer is None:
        return
    customer_id = customer.stripe_id
    try:
        api = stripe_api.client().v1
        if _deleted_at_stripe(api, customer_id):
            return
        # First the sessions, so that no new subscription can start behind the cancellations.
        open_sessions = api.checkout.sessions.list(params={"customer": customer_id, "status": "open", "limit": _PAGE})
        for session in open_sessions.auto_paging_iter():
            api.checkout.sessions.expire(session.id)
        # Stripe's own list, not the mirror: a subscription whose events have not arrived yet is cancelled too.
        subscriptions = api.subscriptions.list(params={"customer": customer_id, "status": "all", "limit": _PAGE})
        for subscription in subscriptions.auto_paging_iter():
            if subscription.status not in _ENDED:
                api.subscriptions.cancel(subscription.id)
        api.customers.delete(customer_id)
    except (stripe.StripeError, StripeNotConfigured) as exc:
        logger.warning("Stripe customer %s not closed: %s", customer_id, stripe_api.redact(str(exc)))
        raise BillingNotClosed(
            "Your account has not been deleted: Stripe, our payment provider, could not be reached to close your "
            "billing there (open checkouts, your subscription, your saved card), and nothing has been changed here. "
            "Please try again in a few minutes."
        ) from exc


def _deleted_at_stripe(api, customer_id: str) -> bool:
    try:
        return bool(getattr(api.customers.retrieve(customer_id), "deleted", False))
    except stripe.InvalidRequestError as exc:
        # Stripe says resource_missing; localstripe, the test stand-in, only answers 404.
        if exc.http_status == 404:
            return True
        raise

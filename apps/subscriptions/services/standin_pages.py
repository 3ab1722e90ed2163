"""Test mode only: what Stripe's hosted Checkout and Customer Portal pages do, done by the site's own test-mode
pages against the local stand-in (apps/subscriptions/standin.py). Everything else (the Checkout Session, the
customer, the webhook, the mirror) is production's own code. The calls go through the same Stripe client; the
stand-in's `test_helpers` routes stand for what a reader does on Stripe's pages (pay with a card, cancel)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import stripe
from django.conf import settings

from apps.subscriptions import stripe_api
from apps.subscriptions.errors import CardDeclined, NotInTestMode
from apps.subscriptions.models import Customer

# The shortest wait the "test clock" offers: a reader sees access last until the period's end, then go.
TEST_CLOCK_SECONDS_LEFT = 5
ENDED_STATUSES = ("canceled", "incomplete_expired")


def _require_test_mode() -> None:
    if not (settings.STRIPE_TEST_MODE and settings.STRIPE_TEST_MODE_ALLOWED):
        raise NotInTestMode("Stripe test mode is off.")


def _call(method: str, path: str, **params) -> dict:
    client = stripe_api.client()
    return stripe_api.as_dict(client.deserialize(client.raw_request(method, path, **params), api_mode="V1"))


def _customer_id(user) -> str:
    customer = Customer.objects.filter(user=user).first()
    if customer is None:
        raise NotInTestMode("This reader has no Stripe customer.")
    return customer.stripe_id


@dataclass(frozen=True)
class StandinCheckout:
    session_id: str
    status: str  # open, complete, expired
    plan_label: str
    amount: int | None
    currency: str
    interval: str
    success_url: str
    cancel_url: str


def standin_checkout_get(*, user, session_id: str) -> StandinCheckout:
    """The reader's own open Checkout Session, with what it sells."""
    _require_test_mode()
    session = stripe_api.as_dict(stripe_api.client().v1.checkout.sessions.retrieve(session_id))
    if str(session.get("client_reference_id")) != str(user.pk) or session.get("customer") != _customer_id(user):
        raise NotInTestMode("This Checkout Session is not this reader's.")
    price_id = ((session.get("line_items") or {}).get("data") or [{}])[0].get("price") or ""
    price = stripe_api.price_retrieve(price_id) if price_id else {}
    recurring = price.get("recurring") or {}
    return StandinCheckout(
        session_id=session["id"],
        status=session.get("status") or "",
        plan_label={"month": "Monthly", "year": "Yearly"}.get(recurring.get("interval"), "Subscription"),
        amount=price.get("unit_amount"),
        currency=price.get("currency") or "",
        interval=recurring.get("interval") or "",
        success_url=session.get("success_url") or "",
        cancel_url=session.get("cancel_url") or "",
    )


def standin_checkout_pay(*, user, session_id: str, card_number: str) -> str:
    """Pays the session with a test card, as Stripe's page would; returns where Stripe sends the reader next (the
    success URL). Access still comes only from the webhook that the stand-in sends."""
    standin_checkout_get(user=user, session_id=session_id)  # the reader's own, in test mode
    digits = "".join(ch for ch in card_number if ch.isdigit())
    try:
        session = _call("post", f"/v1/test_helpers/checkout/sessions/{session_id}/complete", card_number=digits)
    except stripe.CardError as exc:
        raise CardDeclined(exc.user_message or "The card was declined.") from exc
    except stripe.InvalidRequestError as exc:
        raise CardDeclined(exc.user_message or "The card was not accepted.") from exc
    return session["success_url"]


def standin_checkout_abandon(*, user, session_id: str) -> str:
    """The reader leaves the page: the session expires; returns the cancel URL."""
    checkout = standin_checkout_get(user=user, session_id=session_id)
    _call("post", f"/v1/test_helpers/checkout/sessions/{session_id}/expire")
    return checkout.cancel_url


@dataclass(frozen=True)
class StandinPortalSubscription:
    stripe_id: str
    status: str
    plan_label: str
    amount: int | None
    currency: str
    interval: str
    current_period_end: datetime | None
    cancel_at_period_end: bool


@dataclass(frozen=True)
class StandinPortal:
    session_id: str
    return_url: str
    subscriptions: list[StandinPortalSubscription]


def standin_portal_get(*, user, session_id: str) -> StandinPortal:
    """The reader's own Portal session, with their subscriptions as Stripe holds them now."""
    _require_test_mode()
    session = _call("get", f"/v1/test_helpers/billing_portal/sessions/{session_id}")
    customer_id = _customer_id(user)
    if session.get("customer") != customer_id:
        raise NotInTestMode("This Portal session is not this reader's.")
    listed = stripe_api.client().v1.subscriptions.list(params={"customer": customer_id, "status": "all"})
    subscriptions = []
    for item in listed.data:
        data = stripe_api.as_dict(item)
        if data.get("status") in ENDED_STATUSES:
            continue
        plan = data.get("plan") or {}
        subscriptions.append(
            StandinPortalSubscription(
                stripe_id=data["id"],
                status=data.get("status") or "",
                plan_label={"month": "Monthly", "year": "Yearly"}.get(plan.get("interval"), "Subscription"),
                amount=plan.get("amount"),
                currency=plan.get("currency") or "",
                interval=plan.get("interval") or "",
                current_period_end=stripe_api.timestamp(data.get("current_period_end")),
                cancel_at_period_end=bool(data.get("cancel_at_period_end")),
            )
        )
    return StandinPortal(
        session_id=session["id"], return_url=session.get("return_url") or "", subscriptions=subscriptions
    )


def standin_portal_act(*, user, session_id: str, subscription_id: str, action: str) -> StandinPortal:
    """What the Portal's buttons do: cancel at the period's end, resume, or (test clock) bring the period's end
    to a few seconds from now. The stand-in then tells the site by webhook, as Stripe would."""
    portal = standin_portal_get(user=user, session_id=session_id)
    if subscription_id not in {s.stripe_id for s in portal.subscriptions}:
        raise NotInTestMode("This subscription is not this reader's.")
    client = stripe_api.client()
    if action == "cancel":
        client.v1.subscriptions.update(subscription_id, params={"cancel_at_period_end": True})
    elif action == "resume":
        client.v1.subscriptions.update(subscription_id, params={"cancel_at_period_end": False})
    elif action == "advance-clock":
        _call(
            "post",
            f"/v1/test_helpers/subscriptions/{subscription_id}/advance_clock",
            seconds_left=TEST_CLOCK_SECONDS_LEFT,
        )
    else:
        raise NotInTestMode(f"Unknown Portal action {action!r}.")
    return portal

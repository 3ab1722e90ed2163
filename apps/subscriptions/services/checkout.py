"""Checkout and the Customer Portal: Stripe sessions created on demand for the pricing and account pages.
A Checkout Session grants nothing by itself: access comes from the webhook, once Stripe confirms."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model

from apps.subscriptions import stripe_api
from apps.subscriptions.errors import AlreadySubscribed, NoBillingAccount, StripeNotConfigured, UnknownPlan
from apps.subscriptions.models import Customer, Subscription


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


def checkout_session_create(*, user, plan: str, success_url: str, cancel_url: str, terms_url: str = "") -> str:
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
    # One trial per reader (as stored now, not as the request loaded them); a card's second trial is ended once
    # Stripe names the card (services.trials).
    trialed = get_user_model().objects.filter(pk=user.pk, trial_used_at__isnull=False).exists()
    if settings.STRIPE_TRIAL_DAYS > 0 and not trialed:
        params["subscription_data"]["trial_period_days"] = settings.STRIPE_TRIAL_DAYS
    if terms_url:
        # Stripe's page shows it above its pay button: the terms are named where the reader pays, not only on
        # the pricing page (Stripe's own terms checkbox needs the URL set in its dashboard instead).
        params["custom_text"] = {
            "submit": {"message": f"By subscribing you agree to the terms of service: {terms_url}"}
        }
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

"""The one place that talks to the Stripe API (through the official client) and reads what it
answers into plain values. Keys come from settings only; nothing here logs them."""

from __future__ import annotations

import functools
import hashlib
from datetime import UTC, datetime

import stripe
from django.conf import settings

from apps.subscriptions.errors import StripeNotConfigured

DASHBOARD = "https://dashboard.stripe.com/"
# The client retries connection errors, 409s and 5xx (with Stripe's idempotency keys on POST).
NETWORK_RETRIES = 2
TIMEOUT_SECONDS = 20


def client() -> stripe.StripeClient:
    """The client for the settings of the moment (so `override_settings` and a changed
    environment take effect); STRIPE_API_BASE points it at a local stand-in."""
    if not settings.STRIPE_SECRET_KEY:
        raise StripeNotConfigured("STRIPE_SECRET_KEY is not set.")
    return _client(settings.STRIPE_SECRET_KEY, settings.STRIPE_API_BASE or "")


@functools.lru_cache(maxsize=4)
def _client(api_key: str, api_base: str) -> stripe.StripeClient:
    # One per configuration, so its HTTP connections are reused.
    return stripe.StripeClient(
        api_key,
        base_addresses={"api": api_base.rstrip("/")} if api_base else None,
        max_network_retries=NETWORK_RETRIES,
        http_client=stripe.RequestsClient(timeout=TIMEOUT_SECONDS),
    )


def as_dict(obj) -> dict:
    """A Stripe object (or an already plain payload) as a plain dict."""
    if obj is None:
        return {}
    if isinstance(obj, dict):
        return obj
    return obj.to_dict()


def object_id(value) -> str | None:
    """An id from a field that is either an id or an expanded object."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return value.get("id")
    return getattr(value, "id", None)


def timestamp(value) -> datetime | None:
    if value in (None, "", 0):
        return None
    return datetime.fromtimestamp(int(value), tz=UTC)


def invoice_subscription_id(invoice: dict) -> str | None:
    """Recent API versions name an invoice's subscription under parent.subscription_details;
    older ones (and localstripe) under `subscription`."""
    parent = invoice.get("parent") or {}
    details = parent.get("subscription_details") or {}
    return object_id(details.get("subscription")) or object_id(invoice.get("subscription"))


def idempotency_key(*parts) -> str:
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:32]
    return f"ke-{parts[0]}-{digest}"


def is_test_mode() -> bool:
    key = settings.STRIPE_SECRET_KEY or ""
    return not key.startswith(("sk_live_", "rk_live_"))


def dashboard_url(kind: str, stripe_id: str, *, livemode: bool | None = None) -> str:
    """A link to the object in the Stripe dashboard (kind: customers, subscriptions, events)."""
    test = (not livemode) if livemode is not None else is_test_mode()
    return f"{DASHBOARD}{'test/' if test else ''}{kind}/{stripe_id}"


def redact(text: str) -> str:
    """`text` with any configured secret replaced, for error messages that are stored or logged."""
    for secret in (settings.STRIPE_SECRET_KEY, settings.STRIPE_WEBHOOK_SECRET):
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


PRICE_CACHE_SECONDS = 60 * 60
PRICE_FAILURE_CACHE_SECONDS = 60


def price_retrieve(price_id: str) -> dict:
    """The Price as a dict ({} when Stripe cannot be reached), cached: the pricing page must
    not wait on Stripe for every visitor."""
    from config.shared_cache import shared_get, shared_set

    key = f"subscriptions:price:{price_id}"
    cached = shared_get(key)
    if cached is not None:
        return cached
    try:
        price = as_dict(client().v1.prices.retrieve(price_id))
        timeout = PRICE_CACHE_SECONDS
    except (stripe.StripeError, StripeNotConfigured) as exc:
        import logging

        logging.getLogger(__name__).warning("Could not read Stripe price %s: %s", price_id, redact(str(exc)))
        # Test mode's stand-in starts beside the web server: a page read before it answers must not stick.
        price, timeout = {}, 1 if settings.STRIPE_TEST_MODE else PRICE_FAILURE_CACHE_SECONDS
    shared_set(key, price, timeout)
    return price

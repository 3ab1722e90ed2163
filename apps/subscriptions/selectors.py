"""Reads: who has a subscriber's access, what the billing section and the pricing page show."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from apps.subscriptions import stripe_api
from apps.subscriptions.models import ComplimentaryAccess, Customer, StripeEvent, Subscription
from apps.subscriptions.services.entitlement import subscription_gives_access


def has_subscriber_access(user, *, now: datetime | None = None) -> bool:
    """True when the reader's stored entitlement (services.entitlement, written whenever a subscription or grant
    changes) gives a subscriber's access at `now`: a comparison on the user object as loaded (for a request, when the
    request began), no query. Staff do not count here: whether someone may read everything is
    `apps.reading.policy.has_full_access`. Never calls Stripe."""
    if user is None or not getattr(user, "is_authenticated", False) or user.pk is None:
        return False
    return user.has_entitlement_at(now or timezone.now())


def trial_days_offered(user) -> int:
    """The free trial's days that Checkout would give this visitor: none to a reader who had one (trial_used_at, as
    services.checkout decides). Anonymous visitors are offered it, as a new reader gets it: their page is the one
    cached publicly, and a signed-in reader's page is private (config/caching.py), so no one sees another's offer."""
    if getattr(user, "is_authenticated", False) and user.trial_used_at is not None:
        return 0
    return max(settings.STRIPE_TRIAL_DAYS, 0)


def dead_letters_count() -> int:
    """Stripe events given up on and not yet replayed (admin's index shows the count until they are)."""
    return StripeEvent.objects.filter(processed_at__isnull=True, dead_lettered_at__isnull=False).count()


def stripe_is_configured() -> bool:
    """Checkout needs the secret key, at least one Price and the webhook secret (without which
    a payment would never be seen)."""
    return bool(
        settings.STRIPE_SECRET_KEY
        and settings.STRIPE_WEBHOOK_SECRET
        and (settings.STRIPE_PRICE_MONTHLY or settings.STRIPE_PRICE_YEARLY)
    )


def customer_for_user(user) -> Customer | None:
    if user is None or not user.is_authenticated:
        return None
    return Customer.objects.filter(user_id=user.pk).first()


def subscription_current(user) -> Subscription | None:
    """The subscription to show on the account page: one giving access if any, else the most
    recent one."""
    if user is None or not user.is_authenticated:
        return None
    subscriptions = list(Subscription.objects.for_user(user).select_related("customer"))
    now = timezone.now()
    giving = [s for s in subscriptions if subscription_gives_access(s, now=now)]
    return (giving or subscriptions or [None])[0]


def complimentary_access_current(user) -> ComplimentaryAccess | None:
    if user is None or not user.is_authenticated:
        return None
    return ComplimentaryAccess.objects.current().filter(user_id=user.pk).order_by("-ends_at").first()


@dataclass(frozen=True)
class BillingSummary:
    subscription: Subscription | None
    complimentary: ComplimentaryAccess | None
    has_subscriber_access: bool
    has_customer: bool
    can_subscribe: bool  # no subscription still open at Stripe
    plan_label: str
    stripe_configured: bool


def billing_summary(user) -> BillingSummary:
    subscription = subscription_current(user)
    return BillingSummary(
        subscription=subscription,
        complimentary=complimentary_access_current(user),
        has_subscriber_access=has_subscriber_access(user),
        has_customer=subscription is not None or customer_for_user(user) is not None,
        can_subscribe=user is not None
        and user.is_authenticated
        and not Subscription.objects.for_user(user).still_open().exists(),
        plan_label=plan_label(subscription),
        stripe_configured=stripe_is_configured(),
    )


def plan_label(subscription: Subscription | None) -> str:
    if subscription is None:
        return ""
    if subscription.price_id and subscription.price_id == settings.STRIPE_PRICE_MONTHLY:
        return "Monthly"
    if subscription.price_id and subscription.price_id == settings.STRIPE_PRICE_YEARLY:
        return "Yearly"
    return {"month": "Monthly", "year": "Yearly"}.get(
        subscription.interval, subscription.interval.capitalize() or "Subscription"
    )


_ZERO_DECIMAL = {
    "bif",
    "clp",
    "djf",
    "gnf",
    "jpy",
    "kmf",
    "krw",
    "mga",
    "pyg",
    "rwf",
    "ugx",
    "vnd",
    "vuv",
    "xaf",
    "xof",
    "xpf",
}
_SYMBOLS = {"eur": "€", "usd": "$", "gbp": "£"}


def money(amount: int | None, currency: str) -> str:
    """12 00 eur -> "€12"; 1250 usd -> "$12.50"; unknown currencies keep their code."""
    if amount is None:
        return ""
    currency = (currency or "").lower()
    value = amount if currency in _ZERO_DECIMAL else amount / 100
    text = f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"
    symbol = _SYMBOLS.get(currency)
    return f"{symbol}{text}" if symbol else f"{text} {currency.upper()}".strip()


@dataclass(frozen=True)
class PricingPlan:
    key: str  # what the checkout form posts: "monthly" or "yearly"
    label: str
    per: str  # "month" / "year"
    price_id: str
    amount: int | None
    currency: str

    @property
    def price_display(self) -> str:
        return money(self.amount, self.currency)


def pricing_plans() -> list[PricingPlan]:
    """The configured plans, with their amounts read (and cached) from Stripe."""
    plans = []
    for key, label, per, price_id in (
        ("monthly", "Monthly", "month", settings.STRIPE_PRICE_MONTHLY),
        ("yearly", "Yearly", "year", settings.STRIPE_PRICE_YEARLY),
    ):
        if not price_id:
            continue
        price = stripe_api.price_retrieve(price_id) if settings.STRIPE_SECRET_KEY else {}
        plans.append(PricingPlan(key, label, per, price_id, price.get("unit_amount"), price.get("currency") or ""))
    return plans

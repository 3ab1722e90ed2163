"""Subscriptions and a reader's own account: what their data export holds, what their deletion ends at Stripe
(confirmed by the reader, then closed before anything here goes), and the Stripe records that go with the account.
Connected to accounts' hooks by apps.reading's AppConfig (this app may not import accounts, its neighbour on the
same floor)."""

from django.db.models import Q

from apps.subscriptions.errors import BillingNotClosed
from apps.subscriptions.models import ComplimentaryAccess, Customer, StripeEvent, Subscription
from apps.subscriptions.services.closing import customer_close


def subscriptions_export(user) -> dict:
    customer = Customer.objects.filter(user=user).first()
    subscriptions = Subscription.objects.for_user(user).order_by("stripe_created", "pk")
    return {
        "stripe_customer": customer.stripe_id if customer else None,
        "subscriptions": list(
            subscriptions.values(
                "stripe_id",
                "status",
                "interval",
                "interval_count",
                "unit_amount",
                "currency",
                "current_period_start",
                "current_period_end",
                "cancel_at_period_end",
                "cancel_at",
                "canceled_at",
                "ended_at",
                "trial_end",
            )
        ),
        "complimentary_access": list(
            ComplimentaryAccess.objects.filter(user=user)
            .order_by("granted_at")
            .values("reason", "starts_at", "ends_at", "granted_at", "revoked_at")
        ),
    }


def subscription_deletion_notice(user) -> str | None:
    """Deleting the account cancels a running subscription at once (apps.subscriptions.services.closing): the reader
    confirms that first, and staff deleting it in admin see it on the confirmation page (so it names no one)."""
    subscription = Subscription.objects.for_user(user).still_open().order_by("-current_period_end").first()
    if subscription is None:
        return None
    plan = {"month": "monthly", "year": "yearly"}.get(subscription.interval, "")
    return (
        f"The {plan + ' ' if plan else ''}subscription ({subscription.get_status_display().lower()}) ends "
        "immediately, not at the end of the period paid for, and the rest of that period is not refunded."
    )


def stripe_side_close(user) -> str | None:
    """The reader's Stripe customer closed before their account goes; why not, when Stripe cannot be reached."""
    try:
        customer_close(user=user)
    except BillingNotClosed as error:
        return str(error)
    return None


def stripe_records_delete(*, users) -> None:
    """With the accounts (users_deleting, in their transaction): the webhook events that carried their customers
    (the rows of Customer and Subscription go by CASCADE)."""
    customer_ids = list(Customer.objects.filter(user__in=users).values_list("stripe_id", flat=True))
    if customer_ids:
        StripeEvent.objects.filter(
            Q(object_id__in=customer_ids) | Q(payload__data__object__customer__in=customer_ids)
        ).delete()

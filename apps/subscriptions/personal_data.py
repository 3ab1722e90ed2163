"""Subscriptions and a reader's own account: what their data export holds, why a deletion must wait, and the
Stripe records that go with the account. Connected to accounts' hooks by apps.reading's AppConfig (this app may
not import accounts, its neighbour on the same floor)."""

from django.db.models import Q
from django.utils import formats

from apps.subscriptions.models import ComplimentaryAccess, Customer, StripeEvent, Subscription


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


def subscription_blocks_deletion(user) -> str | None:
    """A subscription Stripe still bills must end first: deleting the account here would not stop Stripe charging
    the card, and the reader could no longer reach the billing portal to stop it. One cancelled at the end of its
    period blocks until that end, when Stripe's last events about it have arrived."""
    subscription = Subscription.objects.for_user(user).still_open().order_by("-current_period_end").first()
    if subscription is None:
        return None
    if subscription.cancel_at_period_end or subscription.cancel_at:
        ends = formats.date_format(subscription.ends_at, "j F Y") if subscription.ends_at else "its end"
        return (
            f"Your subscription is cancelled and ends on {ends}. You can delete your account once it has ended "
            "(Stripe tells this site when it does); until then you keep your access."
        )
    return (
        f"You have a subscription that is still running ({subscription.get_status_display().lower()}). Cancel it "
        "first: “Manage billing” on your account page opens the billing portal, where “Cancel plan” stops it. "
        "Once it has ended you can delete your account here."
    )


def stripe_records_delete(*, users) -> None:
    """With the accounts (users_deleting, in their transaction): the webhook events that carried their customers
    (the rows of Customer and Subscription go by CASCADE)."""
    customer_ids = list(Customer.objects.filter(user__in=users).values_list("stripe_id", flat=True))
    if customer_ids:
        StripeEvent.objects.filter(
            Q(object_id__in=customer_ids) | Q(payload__data__object__customer__in=customer_ids)
        ).delete()

from django import template
from django.utils.html import format_html

from apps.subscriptions import selectors
from apps.subscriptions.models import Subscription

register = template.Library()

_BADGES = {
    Subscription.Status.ACTIVE: "success",
    Subscription.Status.TRIALING: "accent",
    Subscription.Status.PAST_DUE: "warning",
    Subscription.Status.UNPAID: "danger",
    Subscription.Status.INCOMPLETE: "warning",
}


@register.simple_tag
def billing_summary(user):
    """{% billing_summary user as billing %}: what the account page's billing section shows."""
    return selectors.billing_summary(user)


@register.simple_tag
def dead_letters_count():
    """{% dead_letters_count as dead %}: admin's index warns while Stripe events wait to be replayed."""
    return selectors.dead_letters_count()


@register.simple_tag
def money(amount, currency):
    return selectors.money(amount, currency)


@register.simple_tag
def subscription_badge(subscription):
    label = subscription.get_status_display()
    if subscription.ends_at and subscription.status in (Subscription.Status.ACTIVE, Subscription.Status.TRIALING):
        label = f"{label}, cancelled"
    return format_html('<span class="badge badge--{}">{}</span>', _BADGES.get(subscription.status, "muted"), label)

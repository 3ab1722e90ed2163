"""One visitor per access state, stored as the subscription mirror would store it.

    from tests.subscriptions.visitors import VISITOR_KINDS, make_visitor
    user = make_visitor("past_due_grace")   # needs the `db` fixture

Kinds giving full access (staff aside, which the reading policy handles): FULL_ACCESS_KINDS.
"""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.utils import timezone

from apps.subscriptions.models import Subscription
from apps.subscriptions.selectors import has_subscriber_access
from tests.factories import UserFactory
from tests.subscriptions.factories import ComplimentaryAccessFactory, SubscriptionFactory

VISITOR_KINDS = (
    "anonymous",
    "free",
    "active",
    "trialing",
    "past_due_grace",
    "past_due_expired",
    "canceled",
    "canceled_at_period_end",
    "complimentary",
    "staff",
)
# What has_subscriber_access answers for each kind (staff: False here; the reading policy lets staff in).
FULL_ACCESS_KINDS = frozenset({"active", "trialing", "past_due_grace", "canceled_at_period_end", "complimentary"})


def make_visitor(kind: str, **user_fields):
    if kind not in VISITOR_KINDS:
        raise ValueError(f"unknown visitor kind {kind!r}; one of {', '.join(VISITOR_KINDS)}")
    if kind == "anonymous":
        return AnonymousUser()
    now = timezone.now()
    if kind == "staff":
        return UserFactory(is_staff=True, **user_fields)
    user = UserFactory(**user_fields)
    grace = timedelta(days=settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS)
    status = Subscription.Status
    if kind == "active":
        SubscriptionFactory(customer__user=user, status=status.ACTIVE)
    elif kind == "trialing":
        SubscriptionFactory(customer__user=user, status=status.TRIALING, trial_end=now + timedelta(days=10))
    elif kind == "past_due_grace":
        SubscriptionFactory(customer__user=user, status=status.PAST_DUE, past_due_since=now - grace + timedelta(days=1))
    elif kind == "past_due_expired":
        SubscriptionFactory(
            customer__user=user, status=status.PAST_DUE, past_due_since=now - grace - timedelta(hours=1)
        )
    elif kind == "canceled":
        SubscriptionFactory(
            customer__user=user,
            status=status.CANCELED,
            current_period_start=now - timedelta(days=40),
            canceled_at=now - timedelta(days=10),
            ended_at=now - timedelta(days=10),
        )
    elif kind == "canceled_at_period_end":
        SubscriptionFactory(
            customer__user=user, status=status.ACTIVE, cancel_at_period_end=True, canceled_at=now - timedelta(days=1)
        )
    elif kind == "complimentary":
        ComplimentaryAccessFactory(user=user, reason="review copy", ends_at=now + timedelta(days=30))
    return user


def client_for(kind: str) -> Client:
    """A test client signed in as a new visitor of that kind (the anonymous one stays signed out)."""
    client = Client()
    visitor = make_visitor(kind)
    if visitor.is_authenticated:
        client.force_login(visitor)
    return client


def stored_access(user, *, now=None) -> bool:
    """has_subscriber_access for the reader as stored now (as the next request loads them): a test's user object
    was loaded before the services changed the reader's entitlement."""
    if user is None or not user.is_authenticated:
        return has_subscriber_access(user, now=now)
    return has_subscriber_access(type(user).objects.get(pk=user.pk), now=now)

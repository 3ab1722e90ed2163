"""The reader's entitlement: when full access from a subscription or complimentary access begins and ends, and why,
computed from those facts when one of them changes and stored on the reader (access_source, access_from,
access_until, access_reason), so that a page asks the clock, not the database. This is the one definition of the
rule and the one writer of those columns (User.save never writes them, and on PostgreSQL a trigger refuses any other
writer: apps/subscriptions/access_guard.py); apps.reading.policy reads what it writes.

Every window is bounded but a grant's with no end date: a paying subscription gives access until its current period
ends plus SUBSCRIPTION_RENEWAL_MARGIN_HOURS, so a lost renewal or cancellation event costs at most the margin, never
access for ever; the renewal's event or the daily reconciliation (services.reconcile) moves the end on.

Written by subscription_store (the webhook-driven mirror), the complimentary services, and entitlements_refresh_all
(the `entitlements_refresh` command, the periodic tasks).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from apps.subscriptions.access_guard import entitlement_write
from apps.subscriptions.models import ComplimentaryAccess, Subscription

PAYING = (Subscription.Status.ACTIVE, Subscription.Status.TRIALING)


@dataclass(frozen=True)
class Entitlement:
    source: str  # "" when nothing gives access now or later
    starts_at: datetime | None  # None: already
    ends_at: datetime | None  # None: no end (only a grant without an end date); exclusive
    reason: str = ""  # why, for admin


NONE = Entitlement("", None, None)


def renewal_margin() -> timedelta:
    return timedelta(hours=settings.SUBSCRIPTION_RENEWAL_MARGIN_HOURS)


def subscription_window(subscription, *, grace: timedelta, margin: timedelta | None = None) -> tuple | None:
    """(begins, ends) of the access one subscription gives, ends exclusive and never None, or None when it gives none:

    - active or trialing: until its current period (a trial: the trial) ends, plus `margin`; a period end not yet
      known (rows older than the mirror's period columns) counts from when the row was last read from Stripe;
    - past_due: until SUBSCRIPTION_PAST_DUE_GRACE_DAYS after it became past due;
    - either ends sooner at a scheduled cancellation (at period end, or `cancel_at`), without margin;
    - canceled, unpaid, incomplete, incomplete_expired and paused give nothing.
    """
    margin = renewal_margin() if margin is None else margin
    if subscription.status in PAYING:
        paid_until = subscription.current_period_end or subscription.synced_at
        if subscription.status == Subscription.Status.TRIALING and subscription.trial_end is not None:
            paid_until = min(paid_until, subscription.trial_end)
        ends = paid_until + margin
    elif subscription.status == Subscription.Status.PAST_DUE and subscription.past_due_since is not None:
        ends = subscription.past_due_since + grace
    else:
        return None
    for scheduled in (
        subscription.current_period_end if subscription.cancel_at_period_end else None,
        subscription.cancel_at,
    ):
        if scheduled is not None:
            ends = min(ends, scheduled)
    return None, ends


def subscription_gives_access(subscription, *, now: datetime) -> bool:
    """Whether this one subscription gives access at `now` (the account page and admin show it)."""
    window = subscription_window(subscription, grace=timedelta(days=settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS))
    return window is not None and (window[1] is None or now < window[1])


def grant_window(grant) -> tuple[datetime | None, datetime | None] | None:
    if grant.revoked_at is not None:
        return None
    return grant.starts_at, grant.ends_at


def entitlement_from(
    subscriptions, grants, *, now: datetime, grace: timedelta, margin: timedelta | None = None
) -> Entitlement:
    """The first stretch of access that has not ended at `now`, windows that overlap or touch joined into one.
    A later stretch separated by a gap (a grant starting after a subscription's grace) is written when the first
    ends: a periodic task (subscriptions.tasks.refresh_ended_entitlements) moves on to it."""
    windows = [
        (window, "subscription", f"subscription {s.stripe_id} ({s.status})")
        for s in subscriptions
        if (window := subscription_window(s, grace=grace, margin=margin))
    ]
    windows += [
        (window, "complimentary", f"complimentary access #{g.pk} ({g.reason})")
        for g in grants
        if (window := grant_window(g))
    ]
    live = [(begins, ends, source, why) for (begins, ends), source, why in windows if ends is None or ends > now]
    if not live:
        return NONE
    live.sort(key=lambda w: (w[0] is not None, w[0] or now))
    begins, ends, first_source, first_why = live[0]
    sources, reasons = {first_source}, [first_why]
    for other_begins, other_ends, source, why in live[1:]:
        if ends is not None and other_begins is not None and other_begins > ends:
            break
        sources.add(source)
        reasons.append(why)
        ends = None if ends is None or other_ends is None else max(ends, other_ends)
    if ends is not None and begins is not None and ends <= begins:
        return NONE
    return Entitlement("+".join(sorted(sources)), begins, ends, "; ".join(reasons)[:500])


def entitlement_refresh(*, user_id, now: datetime | None = None) -> Entitlement:
    """Recomputes and stores one reader's entitlement from their stored subscriptions and grants. The reader's row is
    locked first, so two writers (a webhook, an admin's grant) cannot store an entitlement computed before the
    other's change."""
    now = now or timezone.now()
    grace = timedelta(days=settings.SUBSCRIPTION_PAST_DUE_GRACE_DAYS)
    User = get_user_model()
    with transaction.atomic():
        if not User.objects.select_for_update().filter(pk=user_id).exists():
            return NONE
        entitlement = entitlement_from(
            Subscription.objects.filter(customer__user_id=user_id),
            ComplimentaryAccess.objects.filter(user_id=user_id),
            now=now,
            grace=grace,
        )
        with entitlement_write(user_id):
            User.objects.filter(pk=user_id).update(
                access_source=entitlement.source,
                access_from=entitlement.starts_at,
                access_until=entitlement.ends_at,
                access_reason=entitlement.reason,
            )
    return entitlement


def reader_trial_mark(*, user_id, at: datetime) -> None:
    """Records when the reader had their one free trial (the first one seen: later ones leave it)."""
    with entitlement_write(user_id):
        get_user_model().objects.filter(pk=user_id, trial_used_at__isnull=True).update(trial_used_at=at)


def entitlements_refresh_all(*, now: datetime | None = None, ended_only: bool = False) -> int:
    """Every reader with a subscription, a grant or a stored entitlement (or, `ended_only`, those whose stored
    window has ended, to move on to a later one); returns how many were written."""
    User = get_user_model()
    if ended_only:
        ended = User.objects.exclude(access_source="").filter(access_until__lte=now or timezone.now())
        user_ids = set(ended.values_list("pk", flat=True))
    else:
        user_ids = (
            set(Subscription.objects.values_list("customer__user_id", flat=True))
            | set(ComplimentaryAccess.objects.values_list("user_id", flat=True))
            | set(User.objects.exclude(access_source="").values_list("pk", flat=True))
        )
    for user_id in sorted(user_ids):
        entitlement_refresh(user_id=user_id, now=now)
    return len(user_ids)

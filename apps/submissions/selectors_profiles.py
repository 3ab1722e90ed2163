"""Reads for profiles asked for again (issue 43): a reader's submissions they may ask about, how many requests they
have left over the last 24 hours, and whether one is already on its way. Selectors (ARCHITECTURE.md, convention 3),
in a module of their own beside selectors.py; apps.submissions.services.profile_runs writes the rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from apps.submissions.models import ProfileRequest, Submission

QUOTA_WINDOW = timedelta(hours=24)
# A request not done after this long is no longer "on its way": its message may have been lost (a broker outage when
# it was sent), and the reader may ask again rather than wait for nothing. Longer than a busy profile queue is likely
# to hold it: profiles wait behind every judgement.
PENDING_FOR = timedelta(hours=1)


@dataclass(frozen=True)
class RequestQuota:
    """A reader's re-profile quota now: `left` is None for staff (no limit); `next_at` is when the oldest counted
    request leaves the window (None while any is left)."""

    limit: int
    used: int
    left: int | None
    next_at: datetime | None


def submission_of_owner(user, public_id) -> Submission | None:
    """The submission if `user` submitted it; None for anyone else, staff included (the view answers 404): a
    request spends its owner's quota and GPU time, so only the owner asks."""
    if not user.is_authenticated:
        return None
    return Submission.objects.select_related("exercise").filter(public_id=public_id, user=user).first()


def profile_request_quota(user, *, now: datetime | None = None) -> RequestQuota:
    """Counted in the database, so that the limit holds across processes and with the cache down."""
    now = now or timezone.now()
    limit = settings.PROFILE_REQUESTS_PER_DAY
    recent = ProfileRequest.objects.filter(user=user, created_at__gt=now - QUOTA_WINDOW)
    used = recent.count()
    if user.is_staff:
        return RequestQuota(limit=limit, used=used, left=None, next_at=None)
    left = max(limit - used, 0)
    next_at = None
    if left == 0:
        oldest = recent.order_by("created_at").values_list("created_at", flat=True)[max(used - limit, 0)]
        next_at = oldest + QUOTA_WINDOW
    return RequestQuota(limit=limit, used=used, left=left, next_at=next_at)


def profile_request_pending(submission: Submission, *, now: datetime | None = None) -> bool:
    """A request for this submission is on its way: not done, and recent enough to be waiting still."""
    now = now or timezone.now()
    return ProfileRequest.objects.filter(
        submission=submission, done_at__isnull=True, created_at__gt=now - PENDING_FOR
    ).exists()

"""Who may read what: the one access policy (ARCHITECTURE.md, "Paid content and access"). Every route that
returns capsule content (reader, figures, search snippets, EPUB, exercise statements, ...) asks `can_read`, and
every query of readable capsules goes through `readable_capsules`.

A capsule's title, badge, minutes, summary and outline are public; its body and figures are not,
unless the capsule is free or the reader has full access.
"""

from datetime import datetime

from django.db.models import Q, QuerySet
from django.utils import timezone

from apps.catalog.models import Capsule


def has_full_access(user, *, now: datetime | None = None) -> bool:
    """May read everything: staff, or a reader whose stored entitlement (written by the subscriptions app when a
    subscription or complimentary access changes) covers `now`. Reads only the user object already loaded for the
    request: no query, and access begins and ends exactly at the stored timestamps."""
    if user is None or not user.is_authenticated:
        return False
    return bool(user.is_staff or user.has_entitlement_at(now or timezone.now()))


def full_access_condition(user_path: str, *, now: datetime | None = None) -> Q:
    """has_full_access as a condition on the reader at `user_path`, for a list of other readers (reviews' badges)."""
    now = now or timezone.now()
    field = f"{user_path}__".__add__
    return Q(**{field("is_staff"): True}) | (
        ~Q(**{field("access_source"): ""})
        & (Q(**{field("access_from__isnull"): True}) | Q(**{field("access_from__lte"): now}))
        & (Q(**{field("access_until__isnull"): True}) | Q(**{field("access_until__gt"): now}))
    )


def can_read(user, capsule: Capsule) -> bool:
    """Drafts are read only in admin's preview, so no route serves them to anyone."""
    if capsule.status != Capsule.Status.PUBLISHED:
        return False
    return capsule.is_free or has_full_access(user)


def readable_capsules(user) -> QuerySet[Capsule]:
    """The published capsules whose content `user` may read: `can_read` as a query."""
    published = Capsule.objects.published()
    if has_full_access(user):
        return published
    return published.filter(access=Capsule.Access.FREE)

"""Who may read what: the one access policy (DESIGN.md). Every route that returns capsule
content (reader, figures, search snippets, EPUB, exercise statements, ...) asks `can_read`, and
every query of readable capsules goes through `readable_capsules`.

A capsule's title, badge, minutes, summary and outline are public; its body and figures are not,
unless the capsule is free or the reader has full access.
"""

from django.db.models import QuerySet

from apps.catalog.models import Capsule
from apps.subscriptions.selectors import has_subscriber_access

_CACHE_ATTRIBUTE = "_reading_full_access"


def has_full_access(user) -> bool:
    """May read everything: staff, or a subscription / complimentary grant that gives access now
    (from stored state).

    Computed once per user object, so once per request for `request.user`.
    """
    if user is None or not user.is_authenticated:
        return False
    cached = getattr(user, _CACHE_ATTRIBUTE, None)
    if cached is None:
        cached = bool(user.is_staff or has_subscriber_access(user))
        setattr(user, _CACHE_ATTRIBUTE, cached)
    return cached


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

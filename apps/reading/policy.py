"""Who may read what: the one access policy (DESIGN.md). Every route that returns capsule
content (reader, figures, search snippets, EPUB, exercise statements, ...) asks `can_read`.

A capsule's title, badge, minutes, summary and outline are public; its body and figures are not,
unless the capsule is free or the reader has full access.
"""

from apps.catalog.models import Capsule

_CACHE_ATTRIBUTE = "_reading_full_access"


def has_full_access(user) -> bool:
    """Staff, or a subscription / complimentary grant that gives access now (from stored state).

    Computed once per user object (so once per request for `request.user`).
    """
    if user is None or not user.is_authenticated:
        return False
    cached = getattr(user, _CACHE_ATTRIBUTE, None)
    if cached is None:
        from apps.subscriptions.selectors import has_full_access as subscription_gives_access

        cached = bool(user.is_staff or subscription_gives_access(user))
        setattr(user, _CACHE_ATTRIBUTE, cached)
    return cached


def can_read(user, capsule: Capsule) -> bool:
    """Drafts are read only in admin's preview, so no route serves them to anyone."""
    if capsule.status != Capsule.Status.PUBLISHED:
        return False
    return capsule.is_free or has_full_access(user)

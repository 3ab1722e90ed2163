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
        cached = full_access_from(user, subscriber_access=has_subscriber_access(user))
    return cached


def full_access_from(user, *, subscriber_access: bool) -> bool:
    """has_full_access, given the subscriber check made by a statement that read more with it
    (apps.reading.selectors.reader_state); remembered on the user object as has_full_access does."""
    full_access = bool(user.is_staff or subscriber_access)
    setattr(user, _CACHE_ATTRIBUTE, full_access)
    return full_access


def full_access_known(user) -> bool:
    """Whether has_full_access would answer without a query."""
    return user is None or not user.is_authenticated or getattr(user, _CACHE_ATTRIBUTE, None) is not None


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

from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Book
from apps.reviews.services import book_rating_refresh


@transaction.atomic
def users_delete(*, users) -> int:
    """Deletes accounts with everything they own. Their reviews leave the books' ratings in the
    same transaction, as a reader deleting their own review would."""
    reviewed = list(Book.objects.filter(reviews__user__in=users).distinct().order_by("pk"))
    deleted, _ = User.objects.filter(pk__in=users.values("pk")).delete()
    for book in reviewed:
        book_rating_refresh(book=book)
    return deleted


def sessions_clear_expired() -> int:
    deleted, _ = Session.objects.filter(expire_date__lt=timezone.now()).delete()
    return deleted

from django.db import transaction
from django.utils import timezone

from apps.accounts.deletion import users_deleting
from apps.accounts.models import User
from apps.accounts.validators import public_name_clean, validate_public_name


@transaction.atomic
def users_delete(*, users) -> int:
    """Deletes accounts with everything they own. The apps that keep figures about what readers
    wrote (reviews: the books' ratings) update them in the same transaction, through
    `users_deleting`."""
    users_deleting.send(sender=User, users=users)
    deleted, _ = User.objects.filter(pk__in=users.values("pk")).delete()
    return deleted


def sessions_clear_expired() -> int:
    from django.contrib.sessions.models import Session  # Django's store (cached_db keeps the rows there)

    deleted, _ = Session.objects.filter(expire_date__lt=timezone.now()).delete()
    return deleted


def user_public_name_set(*, user: User, name: str) -> User:
    """The name other readers see; blank for the anonymous handle. Refuses what the rules refuse
    (apps.accounts.validators), whichever caller sends it."""
    validate_public_name(name)
    user.name = public_name_clean(name)
    user.save(update_fields=["name"])
    return user

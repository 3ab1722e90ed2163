from django.db import transaction
from django.utils import timezone

from apps.accounts.deletion import account_deletion_blockers, users_deleting
from apps.accounts.models import User
from apps.accounts.ratelimit import rate_allows
from apps.accounts.validators import public_name_clean, validate_public_name


@transaction.atomic
def users_delete(*, users) -> int:
    """Deletes accounts with everything they own. The apps that keep figures about what readers
    wrote (reviews: the books' ratings) update them in the same transaction, through
    `users_deleting`."""
    users_deleting.send(sender=User, users=users)
    deleted, _ = User.objects.filter(pk__in=users.values("pk")).delete()
    return deleted


class AccountDeletionRefused(Exception):
    """The reader's own deletion cannot go ahead: `reasons` say why, each with what to do."""

    def __init__(self, reasons: list[str]):
        self.reasons = reasons
        super().__init__(" ".join(reasons))


class AccountDeletionNotConfirmed(Exception):
    pass


# Attempts at confirming one's own deletion, per reader: the form checks a password, so it must not be a way to guess
# one from a session left open.
ACCOUNT_DELETE_ATTEMPTS = (5, 15 * 60)


def account_deletion_confirmation_ok(user: User, confirmation: str) -> bool:
    """The reader's password; a reader who signs in only through GitHub (no usable password) types their email."""
    if user.has_usable_password():
        return user.check_password(confirmation)
    return confirmation.strip().lower() == user.email.lower()


@transaction.atomic
def user_account_delete(*, user: User, confirmation: str) -> None:
    """A reader deletes their own account: everything of theirs goes (users_delete), leaving only counts that name
    no one (the books' ratings, recounted without their review). Refused while another app says it must not go yet
    (apps.accounts.deletion: a subscription that Stripe still bills must be cancelled first)."""
    # The row lock keeps a concurrent request of the same reader (a checkout, a second delete) out until we are done.
    user = User.objects.select_for_update().get(pk=user.pk)
    limit, window_s = ACCOUNT_DELETE_ATTEMPTS
    if not rate_allows(f"account-delete:{user.pk}", limit=limit, window_s=window_s):
        raise AccountDeletionNotConfirmed(f"Too many attempts: try again within {window_s // 60} minutes.")
    if not account_deletion_confirmation_ok(user, confirmation):
        raise AccountDeletionNotConfirmed(
            "That is not your password." if user.has_usable_password() else "That is not your email address."
        )
    reasons = account_deletion_blockers(user)
    if reasons:
        raise AccountDeletionRefused(reasons)
    users_delete(users=User.objects.filter(pk=user.pk))


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

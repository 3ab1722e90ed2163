"""What others see of a reader: one function for every page that names a reader to someone else
(leaderboards, reviews, a submission shown to staff, the header)."""

from django.utils.crypto import salted_hmac

# Shown for a user with no id yet (nothing stable to derive a handle from) and for no user at all.
NO_READER_NAME = "A reader"
HANDLE_PREFIX = "Reader"
_HANDLE_SALT = "apps.accounts.selectors.public_name"


def anonymous_handle(user_id: int) -> str:
    """ "Reader 4821": stable for one reader, derived from the id through a keyed hash (SECRET_KEY), so
    neither the email address nor the order of sign-up can be read from it. Not unique: two readers
    may share a handle, which costs nothing (a handle identifies no one)."""
    digest = salted_hmac(_HANDLE_SALT, str(user_id), algorithm="sha256").digest()
    return f"{HANDLE_PREFIX} {1000 + int.from_bytes(digest[:8], 'big') % 9000}"


def public_name(user) -> str:
    """The name the reader chose, else their anonymous handle: never any part of the email address."""
    if user is None or not getattr(user, "is_authenticated", False):
        return NO_READER_NAME
    name = " ".join((getattr(user, "name", "") or "").split())
    if name:
        return name
    return anonymous_handle(user.pk) if user.pk is not None else NO_READER_NAME


def verified_email(user) -> str | None:
    """The reader's verified address to write to (their primary one first), or None."""
    from allauth.account.models import EmailAddress

    verified = EmailAddress.objects.filter(user=user, verified=True).order_by("-primary", "email")
    return verified.values_list("email", flat=True).first()

import secrets
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from apps.accounts.deletion import account_deletion_close, users_deleting
from apps.accounts.models import AccountDeletionAttempt, AccountDeletionCode, User
from apps.accounts.selectors import verified_email
from apps.accounts.validators import public_name_clean, validate_public_name


@transaction.atomic
def users_delete(*, users) -> int:
    """Deletes accounts with everything they own. The apps that keep figures about what readers
    wrote (reviews: the books' ratings) update them in the same transaction, through
    `users_deleting`. Their sessions end on every device, and admin's history keeps what was done but no longer
    whom it was done to."""
    user_ids = list(users.values_list("pk", flat=True))
    users_deleting.send(sender=User, users=User.objects.filter(pk__in=user_ids))
    _admin_history_scrub(user_ids=user_ids)
    _sessions_end(user_ids=user_ids)
    deleted, _ = User.objects.filter(pk__in=user_ids).delete()
    return deleted


# What admin's history says of a deleted reader, instead of their address.
DELETED_READER = "(deleted reader)"


def _admin_history_scrub(*, user_ids: list[int]) -> None:
    """LogEntry rows that name a reader (object_repr and change_message, as str(user) is their email address, and
    every row about the account itself) keep who did what when, and lose the reader. Rows whose author is the
    reader go with the account (LogEntry.user cascades)."""
    from allauth.account.models import EmailAddress
    from django.contrib.admin.models import LogEntry
    from django.contrib.contenttypes.models import ContentType

    emails = set(User.objects.filter(pk__in=user_ids).values_list("email", flat=True))
    emails |= set(EmailAddress.objects.filter(user_id__in=user_ids).values_list("email", flat=True))
    naming = Q(content_type=ContentType.objects.get_for_model(User), object_id__in=[str(pk) for pk in user_ids])
    for email in emails:
        naming |= Q(object_repr__icontains=email) | Q(change_message__icontains=email)
    LogEntry.objects.filter(naming).update(object_repr=DELETED_READER, change_message="")


def _sessions_end(*, user_ids: list[int]) -> None:
    """Ends the readers' sessions on every device. Django's database sessions keep the user's id only inside the
    signed session data, so every unexpired session is read: a full pass over live sessions, paid only when an
    account is deleted, rather than a write on every sign-in to index them."""
    from django.contrib.auth import SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session

    wanted, decoder, ended = {str(pk) for pk in user_ids}, SessionStore(), []
    live = Session.objects.filter(expire_date__gt=timezone.now()).values_list("session_key", "session_data")
    for key, data in live.iterator(chunk_size=2000):
        if str(decoder.decode(data).get(SESSION_KEY)) in wanted:
            ended.append(key)
    Session.objects.filter(session_key__in=ended).delete()


class AccountDeletionRefused(Exception):
    """A deletion cannot go ahead now: `reasons` say why, each with what to do; `user` is the reader whose outside
    side could not be closed."""

    def __init__(self, reasons: list[str], *, user: User | None = None):
        self.reasons, self.user = reasons, user
        super().__init__(" ".join(reasons))


@transaction.atomic
def accounts_close(*, users) -> int:
    """Deletes readers' accounts, as staff do in admin and a reader does their own (user_account_delete): what each
    has outside this database is closed first (apps.accounts.deletion's closers: their Stripe customer, its open
    Checkout Sessions and subscriptions), then everything of theirs here goes (users_delete). All or nothing here:
    while a closer cannot do its part (Stripe unreachable) AccountDeletionRefused is raised and nothing is deleted;
    what was closed outside by then stays closed, and closing again finishes it (closers are idempotent)."""
    # The row locks keep a concurrent deletion of the same readers (a second click, staff and reader at once) out
    # until we are done.
    wanted = list(users.values_list("pk", flat=True))
    readers = list(User.objects.select_for_update().filter(pk__in=wanted).order_by("pk"))  # one lock order for all
    for reader in readers:
        if reasons := account_deletion_close(reader):
            raise AccountDeletionRefused(reasons, user=reader)
    return users_delete(users=User.objects.filter(pk__in=[reader.pk for reader in readers]))


class AccountDeletionNotConfirmed(Exception):
    pass


# Wrong confirmations of one's own deletion, per reader: the form checks a password (or a mailed code), so it must
# not be a way to guess one from a session left open. Counted in the database, always: a limit counted in the cache
# failed open when the cache was down, and one that moved between the cache and the database would reset when the
# cache came back. The deletion form is rare, so the rows cost nothing worth saving.
ACCOUNT_DELETE_ATTEMPTS = (5, 15 * 60)
# A reader without a password (GitHub only) confirms with a code mailed to their verified address.
DELETION_CODE_DIGITS = 8
DELETION_CODE_TTL = timedelta(minutes=15)
DELETION_CODE_RESEND_AFTER = timedelta(minutes=1)
_DELETION_CODE_SALT = "apps.accounts.services.deletion-code"


class DeletionCodeNotSent(Exception):
    pass


def _deletion_code_hash(user: User, code: str) -> str:
    return salted_hmac(_DELETION_CODE_SALT, f"{user.pk}:{code}", algorithm="sha256").hexdigest()


@transaction.atomic
def account_deletion_code_send(*, user: User) -> str:
    """Mails a new deletion code to the reader's verified address (the one before is void); returns that address.
    Refused within a minute of the last one, and for a reader with no verified address."""
    from allauth.account.adapter import get_adapter

    user = User.objects.select_for_update().get(pk=user.pk)
    address = verified_email(user)
    if address is None:
        raise DeletionCodeNotSent("Your account has no verified email address to send a code to: contact us.")
    now = timezone.now()
    previous = AccountDeletionCode.objects.filter(user=user).first()
    if previous is not None and previous.sent_at > now - DELETION_CODE_RESEND_AFTER:
        raise DeletionCodeNotSent("A code was sent less than a minute ago: look for it in your inbox.")
    code = f"{secrets.randbelow(10**DELETION_CODE_DIGITS):0{DELETION_CODE_DIGITS}d}"
    AccountDeletionCode.objects.update_or_create(
        user=user,
        defaults={"code_hash": _deletion_code_hash(user, code), "sent_at": now, "expires_at": now + DELETION_CODE_TTL},
    )
    minutes = int(DELETION_CODE_TTL.total_seconds() // 60)
    get_adapter().send_mail("account/email/account_deletion_code", address, {"code": code, "minutes": minutes})
    return address


def _deletion_confirmation_ok(user: User, confirmation: str) -> bool:
    if user.has_usable_password():
        return user.check_password(confirmation)
    code = AccountDeletionCode.objects.filter(user=user, expires_at__gt=timezone.now()).first()
    typed = "".join(confirmation.split())
    return code is not None and constant_time_compare(code.code_hash, _deletion_code_hash(user, typed))


def _account_deletion_confirm(*, user: User, confirmation: str) -> None:
    """Checks the password or code under the reader's row lock (parallel guesses are counted one by one) and
    commits a wrong one before refusing, so that the refusal does not roll the count back."""
    limit, window_s = ACCOUNT_DELETE_ATTEMPTS
    with transaction.atomic():
        user = User.objects.select_for_update().get(pk=user.pk)
        attempts = AccountDeletionAttempt.objects.filter(user=user)
        attempts.filter(attempted_at__lte=timezone.now() - timedelta(seconds=window_s)).delete()  # out of the window
        if attempts.count() >= limit:
            refusal = f"Too many attempts: try again within {window_s // 60} minutes."
        elif _deletion_confirmation_ok(user, confirmation):
            return
        else:
            AccountDeletionAttempt.objects.create(user=user)
            refusal = (
                "That is not your password."
                if user.has_usable_password()
                else "That is not the code we emailed you, or it has expired."
            )
    raise AccountDeletionNotConfirmed(refusal)


def user_account_delete(*, user: User, confirmation: str) -> None:
    """A reader deletes their own account, confirmed with their password (or, without one, the code mailed to
    them), through accounts_close: their Stripe side closed first, then everything of theirs goes, leaving only counts
    that name no one (the books' ratings, recounted without their review). Refused, with nothing deleted, while Stripe
    cannot be reached."""
    _account_deletion_confirm(user=user, confirmation=confirmation)
    # A code, kept until the account goes, is single-use because it goes with it.
    accounts_close(users=User.objects.filter(pk=user.pk))


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

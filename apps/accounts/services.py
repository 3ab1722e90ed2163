from dataclasses import dataclass

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Book
from apps.reviews.services import book_rating_refresh

DEMO_PASSWORD = "kernel-demo-pass"


@dataclass(frozen=True)
class DemoAccount:
    email: str
    name: str
    role: str
    is_staff: bool = False


DEMO_ACCOUNTS = (
    DemoAccount("admin@example.com", "Ada Admin", "staff: the admin site", is_staff=True),
    DemoAccount("reader@example.com", "Rita Reader", "free reader"),
    DemoAccount("subscriber@example.com", "Sam Subscriber", "full access"),
)
# The readers whose reviews the original landing page showed; apps.reviews gives them a
# capsule read and their review (reviews_demo_ensure).
DEMO_READERS = (
    DemoAccount("aarav.mehta@example.com", "Aarav Mehta", "demo reader"),
    DemoAccount("daniel.okafor@example.com", "Daniel Okafor", "demo reader"),
    DemoAccount("liam.chen@example.com", "Liam Chen", "demo reader"),
    DemoAccount("marcus.bell@example.com", "Marcus Bell", "demo reader"),
    DemoAccount("jonas.bergstrom@example.com", "Jonas Bergström", "demo reader"),
)


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


def demo_accounts_ensure() -> list[DemoAccount]:
    """Creates (or resets) the demo accounts with verified addresses. Refused outside
    development and tests: a known password must never exist in production."""
    if not getattr(settings, "DEMO_DATA_ALLOWED", False):
        raise ImproperlyConfigured("Demo accounts may only be created where DEMO_DATA_ALLOWED is set (development).")
    with transaction.atomic():
        for account in DEMO_ACCOUNTS:
            _demo_account_reset(account)
    return list(DEMO_ACCOUNTS)


def demo_readers_ensure() -> list[User]:
    """Creates (or resets) the demo readers, like the demo accounts (same guard, same password)."""
    if not getattr(settings, "DEMO_DATA_ALLOWED", False):
        raise ImproperlyConfigured("Demo accounts may only be created where DEMO_DATA_ALLOWED is set (development).")
    with transaction.atomic():
        return [_demo_account_reset(account) for account in DEMO_READERS]


def _demo_account_reset(account: DemoAccount) -> User:
    user, _ = User.objects.get_or_create(email=account.email, defaults={"name": account.name})
    user.name = account.name
    user.is_staff = account.is_staff
    user.is_superuser = account.is_staff
    user.is_active = True
    user.set_password(DEMO_PASSWORD)
    user.save()
    EmailAddress.objects.update_or_create(user=user, email=account.email, defaults={"verified": True, "primary": True})
    return user

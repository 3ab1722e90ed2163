"""The demo data in one place: accounts, the demo subscriber, the original page's reviews and the
reference ladder measured on an H200. Every write goes through the owning app's services, so the
demo is what a real reader or admin would have made. Refused outside development and tests: a known
password must never exist in production."""

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from allauth.account.models import EmailAddress
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Book, Capsule
from apps.reading.services import progress_record
from apps.reviews.models import Review
from apps.reviews.services import book_rating_refresh
from apps.submissions.services import reference_results_load
from apps.subscriptions.models import ComplimentaryAccess
from apps.subscriptions.services import complimentary_access_grant

DEMO_PASSWORD = "kernel-demo-pass"
# The ladders measured for the demo, one file per GPU kind (reference_results_export's JSON).
REFERENCE_FIXTURES = Path(__file__).resolve().parent.parent / "submissions" / "fixtures"


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
# The readers whose reviews the original landing page showed; each gets a capsule read and their review.
DEMO_READERS = (
    DemoAccount("aarav.mehta@example.com", "Aarav Mehta", "demo reader"),
    DemoAccount("daniel.okafor@example.com", "Daniel Okafor", "demo reader"),
    DemoAccount("liam.chen@example.com", "Liam Chen", "demo reader"),
    DemoAccount("marcus.bell@example.com", "Marcus Bell", "demo reader"),
    DemoAccount("jonas.bergstrom@example.com", "Jonas Bergström", "demo reader"),
)


@dataclass(frozen=True)
class DemoReview:
    email: str
    rating: int
    age: timedelta
    text: str


# The five reviews of the original landing page (ARCHITECTURE.md, "Demo data").
# The page showed no per-review stars; all five recommend the book, Aarav Mehta with a reservation
# ("a few sections moved fast for me"), so he gives four.
DEMO_REVIEWS = (
    DemoReview(
        "aarav.mehta@example.com",
        4,
        timedelta(days=8),
        "A few sections moved fast for me, but re-reading with the figures open made everything land. "
        "Highly recommend.",
    ),
    DemoReview(
        "daniel.okafor@example.com",
        5,
        timedelta(days=62),
        "This is the resource I wish I had when I started. Clear mental models, zero fluff.",
    ),
    DemoReview(
        "liam.chen@example.com",
        5,
        timedelta(days=95),
        "Concise capsules I can finish over coffee, yet each one taught me something I actually use.",
    ),
    DemoReview(
        "marcus.bell@example.com",
        5,
        timedelta(days=155),
        "Rare mix of depth and readability. The worked examples are the clearest I have seen on this subject.",
    ),
    DemoReview(
        "jonas.bergstrom@example.com",
        5,
        timedelta(days=185),
        "Loved the from-first-principles approach. It rebuilt my intuition rather than just handing me formulas.",
    ),
)


def _refuse_outside_development(what: str) -> None:
    if not getattr(settings, "DEMO_DATA_ALLOWED", False):
        raise ImproperlyConfigured(f"{what} may only be created where DEMO_DATA_ALLOWED is set (development).")


def demo_accounts_ensure() -> list[DemoAccount]:
    """Creates (or resets) the demo accounts with verified addresses."""
    _refuse_outside_development("Demo accounts")
    with transaction.atomic():
        for account in DEMO_ACCOUNTS:
            _demo_account_reset(account)
    return list(DEMO_ACCOUNTS)


def demo_readers_ensure() -> list[User]:
    """Creates (or resets) the demo readers, like the demo accounts (same guard, same password)."""
    _refuse_outside_development("Demo accounts")
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


def demo_subscriber_ensure(*, email: str = "subscriber@example.com") -> ComplimentaryAccess | None:
    """Gives the demo subscriber full access (complimentary, reason "demo"), once."""
    user = User.objects.filter(email=email).first()
    if user is None:
        return None
    current = ComplimentaryAccess.objects.current().filter(user=user, reason="demo").first()
    return current or complimentary_access_grant(user=user, reason="demo")


def reviews_demo_ensure(*, book: Book | None = None) -> list[Review]:
    """The demo readers (real accounts), each with a free capsule opened and their review, dated
    as the original page showed them. Idempotent."""
    _refuse_outside_development("Demo reviews")
    book = book or Book.objects.order_by("id").first()
    if book is None:
        return []
    capsule = Capsule.objects.published().filter(book=book, access=Capsule.Access.FREE).order_by("number").first()
    if capsule is None:
        raise ImproperlyConfigured(f"{book} has no free capsule for the demo readers to open.")
    readers = {user.email: user for user in demo_readers_ensure()}
    now = timezone.now()
    reviews = []
    with transaction.atomic():
        for demo in DEMO_REVIEWS:
            user = readers[demo.email]
            progress_record(user=user, capsule=capsule, position=1.0)
            review, _ = Review.objects.update_or_create(
                book=book,
                user=user,
                defaults={
                    "rating": demo.rating,
                    "title": "",
                    "text": demo.text,
                    "created_at": now - demo.age,
                    "edited_at": None,
                    "status": Review.Status.VISIBLE,
                },
            )
            reviews.append(review)
        book_rating_refresh(book=book)  # locks the aggregate and recounts, in this transaction
    return reviews


def reference_results_load_demo() -> int:
    """The ladders measured for the demo, as the progress pages show them."""
    return sum(reference_results_load(path=path) for path in sorted(REFERENCE_FIXTURES.glob("reference_ladder_*.json")))

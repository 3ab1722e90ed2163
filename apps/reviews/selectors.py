"""Reads of ratings and reviews. The landing page's block costs a fixed number of queries,
however many reviews, ratings and readers there are."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.paginator import Page, Paginator
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, QuerySet

from apps.catalog.models import Book
from apps.reading.models import ReadingProgress
from apps.reading.policy import full_access_condition
from apps.reviews.models import STARS, BookRating, Review

SORTS = {"newest": "Newest", "highest": "Highest rated", "lowest": "Lowest rated"}


class Eligibility(enum.Enum):
    """Whether a visitor may review a book, and if not, what they can do about it."""

    ALLOWED = "allowed"
    SIGN_IN = "sign_in"
    VERIFY_EMAIL = "verify_email"
    READ_FIRST = "read_first"


def review_eligibility(user, book: Book) -> Eligibility:
    """Signed in, a verified email address, and at least one capsule of the book opened
    (a ReadingProgress row). One query."""
    if user is None or not user.is_authenticated:
        return Eligibility.SIGN_IN
    verified = EmailAddress.objects.filter(user_id=OuterRef("pk"), verified=True)
    has_read = ReadingProgress.objects.filter(user_id=OuterRef("pk"), capsule__book=book)
    row = (
        get_user_model().objects.filter(pk=user.pk).values(verified=Exists(verified), has_read=Exists(has_read)).first()
    )
    if row is None:
        return Eligibility.SIGN_IN
    if not row["verified"]:
        return Eligibility.VERIFY_EMAIL
    if not row["has_read"]:
        return Eligibility.READ_FIRST
    return Eligibility.ALLOWED


def _with_reviewer(reviews: QuerySet) -> QuerySet:
    """Reviews with their reviewer loaded and `reviewer_full_access` annotated in the same query:
    the "subscriber" badge is apps.reading.policy.has_full_access, for a whole page of reviews at once."""
    return reviews.select_related("user").annotate(
        reviewer_full_access=ExpressionWrapper(full_access_condition("user"), output_field=BooleanField())
    )


def reviews_public(book: Book) -> QuerySet:
    """What everyone sees: visible reviews with text."""
    return _with_reviewer(Review.objects.for_book(book).visible().with_text())


def reviews_page(book: Book, *, sort: str = "newest", page: str | int | None = 1) -> Page:
    sort = sort if sort in SORTS else "newest"
    paginator = Paginator(reviews_public(book).sorted_by(sort), settings.REVIEWS_PER_PAGE)
    return paginator.get_page(page)


def book_rating(book: Book) -> BookRating:
    """The aggregate row, or an empty one (not saved) before the first rating."""
    return BookRating.objects.filter(book=book).first() or BookRating(book=book)


def reader_count(book: Book) -> int:
    """Readers = accounts that have opened at least one capsule of the book (one query)."""
    return ReadingProgress.objects.filter(capsule__book=book).values("user_id").distinct().count()


def own_review(user, book: Book) -> Review | None:
    if user is None or not user.is_authenticated:
        return None
    return _with_reviewer(Review.objects.for_book(book).filter(user_id=user.pk)).first()


@dataclass(frozen=True)
class StarBar:
    stars: int
    count: int
    percent: int


@dataclass(frozen=True)
class ReviewsSummary:
    """What the reviews block on the landing page shows of the book and the visitor."""

    book: Book
    rating: BookRating
    readers: int
    newest: list[Review]
    own: Review | None
    eligibility: Eligibility
    distribution: list[StarBar] = field(default_factory=list)

    @property
    def can_review(self) -> bool:
        return self.eligibility is Eligibility.ALLOWED and self.own is None

    @property
    def may_write(self) -> bool:
        """The block offers a write form: a new review, or the reader's own to edit."""
        return self.eligibility is Eligibility.ALLOWED or self.own is not None

    @property
    def eligibility_code(self) -> str:
        return self.eligibility.value


def star_distribution(rating: BookRating) -> list[StarBar]:
    total = rating.rating_count
    return [
        StarBar(stars, rating.stars_count(stars), round(100 * rating.stars_count(stars) / total) if total else 0)
        for stars in reversed(STARS)
    ]


def reviews_summary(book: Book, user) -> ReviewsSummary:
    """The landing page's block: aggregate (1 query), readers (1), newest reviews (1) and, for a
    signed-in visitor, their own review (1) and whether they may review (1)."""
    rating = book_rating(book)
    authenticated = user is not None and user.is_authenticated
    newest = reviews_public(book)
    if authenticated:
        # The block shows the reader's own review on its own, above the list: not a second time in it.
        newest = newest.exclude(user=user)
    return ReviewsSummary(
        book=book,
        rating=rating,
        readers=reader_count(book),
        newest=list(newest.sorted_by("newest")[: settings.REVIEWS_ON_LANDING]),
        own=own_review(user, book) if authenticated else None,
        eligibility=review_eligibility(user, book) if authenticated else Eligibility.SIGN_IN,
        distribution=star_distribution(rating),
    )


# What changes whenever the public sees other reviews: one written, edited, moderated or deleted (every write rewrites
# the book's rating row; a deletion also lowers the count). Part of config.caching's public page version.
PUBLIC_VERSION_SQL = (
    "SELECT * FROM"
    " (SELECT COUNT(*) AS reviews, MAX(id) AS last_review, MAX(edited_at) AS review_edited,"
    f" MAX(moderated_at) AS review_moderated FROM {Review._meta.db_table}) AS reviews,"
    f" (SELECT MAX(updated_at) AS rating_changed FROM {BookRating._meta.db_table}) AS ratings"
)

"""Writes of reviews, their moderation and reports. Every write that can change what counts
rewrites the book's aggregate (BookRating) in the same transaction, from a recount taken while
that row is locked: concurrent writers queue on the lock, and the last one to commit counts
everything committed before it, so the aggregate always equals a recount."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from apps.accounts.ratelimit import rate_allows
from apps.accounts.validators import BIDI_CONTROLS
from apps.catalog.models import Book
from apps.reviews import selectors
from apps.reviews.models import STARS, BookRating, Review, ReviewReport

# Addresses as readers type them; links are never made clickable, this only counts them.
_LINK = re.compile(r"(?i)\b(?:https?://|www\.)")
# Control characters other than tab and newlines: invisible, and NUL cannot be stored.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class ReviewError(Exception):
    """A review write that was refused; the message is fit to show the reader."""

    field: str | None = None

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


class NotAllowedToReview(ReviewError):
    def __init__(self, eligibility: selectors.Eligibility):
        messages = {
            selectors.Eligibility.SIGN_IN: "Sign in to rate this book.",
            selectors.Eligibility.VERIFY_EMAIL: "Verify your email address to rate this book.",
            selectors.Eligibility.READ_FIRST: "Open at least one capsule before rating the book.",
        }
        super().__init__(messages[eligibility])
        self.eligibility = eligibility


class ReviewInvalid(ReviewError):
    pass


class AlreadyReviewed(ReviewError):
    def __init__(self):
        super().__init__("You have already reviewed this book: edit your review instead.")


class ReviewNotFound(ReviewError):
    def __init__(self):
        super().__init__("You have not reviewed this book yet.")


class RateLimited(ReviewError):
    pass


class InvalidTransition(ReviewError):
    pass


class ReportRefused(ReviewError):
    pass


# --- input ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReviewInput:
    rating: int
    title: str
    text: str


def review_input_clean(*, rating, title: str = "", text: str = "") -> ReviewInput:
    """The rules for what a review may say, in one place (the form shows the same errors).
    Text is kept as written apart from surrounding whitespace: no HTML or Markdown is
    interpreted, so nothing needs removing; templates escape it."""
    if isinstance(rating, bool) or not isinstance(rating, int) or rating not in STARS:
        raise ReviewInvalid("Choose from 1 to 5 stars.", field="rating")
    title = (title or "").strip()
    text = (text or "").strip()
    if _CONTROL.search(title) or _CONTROL.search(text):
        raise ReviewInvalid(
            "Remove the invisible control characters.", field="text" if _CONTROL.search(text) else "title"
        )
    for field, value in (("title", title), ("text", text)):
        if any(c in BIDI_CONTROLS for c in value):
            # An override reverses the text after it on the page (and a review's neighbours when left open).
            raise ReviewInvalid(
                "Remove the invisible direction-changing characters (Unicode bidi controls such as U+202E).",
                field=field,
            )
    if "\n" in title or "\r" in title:
        raise ReviewInvalid("The title is one line.", field="title")
    if len(title) > Review.TITLE_MAX_CHARS:
        raise ReviewInvalid(
            f"Keep the title to {Review.TITLE_MAX_CHARS} characters (it has {len(title)}).", field="title"
        )
    if title and not text:
        raise ReviewInvalid("A title needs a review to go with it.", field="text")
    if text:
        low, high = Review.TEXT_MIN_CHARS, Review.TEXT_MAX_CHARS
        if len(text) < low:
            raise ReviewInvalid(
                f"Write at least {low} characters, or leave the review empty to give stars only.", field="text"
            )
        if len(text) > high:
            raise ReviewInvalid(f"Keep the review to {high:,} characters (it has {len(text):,}).", field="text")
        if len(_LINK.findall(text)) > settings.REVIEWS_MAX_LINKS:
            raise ReviewInvalid(
                f"A review may mention at most {settings.REVIEWS_MAX_LINKS} web addresses.", field="text"
            )
    return ReviewInput(rating=rating, title=title, text=text)


# --- rate limits ------------------------------------------------------------------------------
def _parse_rate(rate: str) -> tuple[int, int]:
    try:
        count, seconds = (int(part) for part in rate.split("/"))
    except ValueError:
        raise ImproperlyConfigured(f"A review rate must look like '10/3600' (count/seconds), not {rate!r}.") from None
    return count, seconds


def _rate_limit(*, user, action: str, rate: str) -> None:
    """A fixed window per reader and action, counted in the shared cache (Redis in production), so it
    holds across web processes; the site's one window counter, which lets the review through when the
    cache is down rather than failing the page."""
    limit, seconds = _parse_rate(rate)
    if not rate_allows(f"reviews:{action}:{user.pk}", limit=limit, window_s=seconds):
        minutes = max(1, round(seconds / 60))
        raise RateLimited(f"Too many attempts: try again within {minutes} minutes.")


# --- aggregate --------------------------------------------------------------------------------
def _aggregate_lock(book: Book) -> BookRating:
    """Takes the book's aggregate row lock (creating the row once); held until commit."""
    rating, _ = BookRating.objects.select_for_update().get_or_create(book=book)
    return rating


def _aggregate_recount(rating: BookRating) -> BookRating:
    visible = Review.objects.filter(book_id=rating.book_id).visible()
    counts = visible.aggregate(
        total=Count("id"),
        rating_sum=Sum("rating", default=0),
        with_text=Count("id", filter=~Q(text="")),
        **{f"stars_{n}": Count("id", filter=Q(rating=n)) for n in STARS},
    )
    rating.rating_count = counts["total"]
    rating.rating_sum = counts["rating_sum"]
    rating.review_count = counts["with_text"]
    for n in STARS:
        setattr(rating, f"stars_{n}", counts[f"stars_{n}"])
    rating.save()
    return rating


@transaction.atomic
def book_rating_refresh(*, book: Book) -> BookRating:
    """Recounts a book's aggregate (also a repair tool, should rows ever change behind the services)."""
    return _aggregate_recount(_aggregate_lock(book))


@transaction.atomic
def user_reviews_delete(*, users) -> int:
    """Deletes the reviews of `users`, whose accounts are going, and recounts every book they rated,
    so their ratings leave the aggregates at once."""
    reviewed = list(Book.objects.filter(reviews__user__in=users).distinct().order_by("pk"))
    deleted, _ = Review.objects.filter(user__in=users).delete()
    for book in reviewed:
        book_rating_refresh(book=book)
    return deleted


# --- the reader's own review ------------------------------------------------------------------
def review_create(*, user, book: Book, rating, title: str = "", text: str = "") -> Review:
    eligibility = selectors.review_eligibility(user, book)
    if eligibility is not selectors.Eligibility.ALLOWED:
        raise NotAllowedToReview(eligibility)
    cleaned = review_input_clean(rating=rating, title=title, text=text)
    with transaction.atomic():
        aggregate = _aggregate_lock(book)  # also queues a reader's double submit behind the first
        if Review.objects.filter(book=book, user=user).exists():
            raise AlreadyReviewed()
        _rate_limit(user=user, action="write", rate=settings.REVIEWS_WRITE_RATE)
        try:
            with transaction.atomic():
                review = Review.objects.create(
                    book=book,
                    user=user,
                    rating=cleaned.rating,
                    title=cleaned.title,
                    text=cleaned.text,
                    created_at=timezone.now(),
                )
        except IntegrityError:
            raise AlreadyReviewed() from None
        _aggregate_recount(aggregate)
    return review


def review_update(*, user, book: Book, rating, title: str = "", text: str = "") -> Review:
    """Edits keep the original date and mark the review edited. A hidden review stays hidden:
    editing is no way around moderation."""
    if user is None or not user.is_authenticated:
        raise NotAllowedToReview(selectors.Eligibility.SIGN_IN)
    cleaned = review_input_clean(rating=rating, title=title, text=text)
    with transaction.atomic():
        aggregate = _aggregate_lock(book)
        review = Review.objects.select_for_update().filter(book=book, user=user).first()
        if review is None:
            raise ReviewNotFound()
        if (review.rating, review.title, review.text) == (cleaned.rating, cleaned.title, cleaned.text):
            return review
        _rate_limit(user=user, action="write", rate=settings.REVIEWS_WRITE_RATE)
        review.rating, review.title, review.text = cleaned.rating, cleaned.title, cleaned.text
        review.edited_at = timezone.now()
        review.save(update_fields=["rating", "title", "text", "edited_at"])
        _aggregate_recount(aggregate)
    return review


@transaction.atomic
def review_delete(*, user, book: Book) -> None:
    if user is None or not user.is_authenticated:
        raise NotAllowedToReview(selectors.Eligibility.SIGN_IN)
    aggregate = _aggregate_lock(book)
    deleted, _ = Review.objects.filter(book=book, user=user).delete()
    if not deleted:
        raise ReviewNotFound()
    _aggregate_recount(aggregate)


# --- moderation -------------------------------------------------------------------------------
def _moderate(*, review: Review, moderator, reason: str, to: Review.Status) -> Review:
    reason = (reason or "").strip()
    if not reason:
        raise ReviewInvalid("Give a reason: readers may ask, and other moderators will read it.", field="reason")
    with transaction.atomic():
        aggregate = _aggregate_lock(review.book)
        locked = Review.objects.select_for_update().get(pk=review.pk)
        if locked.status == to:
            raise InvalidTransition(f"Review {locked.pk} is already {to.label.lower()}.")
        now = timezone.now()
        locked.status = to
        locked.moderated_at, locked.moderated_by, locked.moderation_reason = now, moderator, reason
        locked.save(update_fields=["status", "moderated_at", "moderated_by", "moderation_reason"])
        # A moderator has looked at it: its open reports are dealt with either way.
        locked.reports.filter(resolved_at__isnull=True).update(resolved_at=now)
        _aggregate_recount(aggregate)
    return locked


def review_hide(*, review: Review, moderator, reason: str) -> Review:
    """Hidden reviews leave the aggregate and every public list; the reader still sees theirs."""
    return _moderate(review=review, moderator=moderator, reason=reason, to=Review.Status.HIDDEN)


def review_restore(*, review: Review, moderator, reason: str) -> Review:
    return _moderate(review=review, moderator=moderator, reason=reason, to=Review.Status.VISIBLE)


# --- reports ----------------------------------------------------------------------------------
def review_report(*, review: Review, reporter, reason: str, note: str = "") -> ReviewReport:
    """A signed-in reader with a verified address flags someone else's visible review, once."""
    eligibility = selectors.review_eligibility(reporter, review.book)
    if eligibility in (selectors.Eligibility.SIGN_IN, selectors.Eligibility.VERIFY_EMAIL):
        raise ReportRefused("Sign in with a verified email address to report a review.")
    if review.user_id == reporter.pk:
        raise ReportRefused("This is your own review: edit or delete it instead.")
    if not Review.objects.visible().filter(pk=review.pk).exists():  # from the database: it may have been hidden since
        raise ReportRefused("This review is no longer shown.")
    if reason not in ReviewReport.Reason.values:
        raise ReviewInvalid("Choose a reason.", field="reason")
    note = (note or "").strip()
    if len(note) > ReviewReport.NOTE_MAX_CHARS or _CONTROL.search(note):
        raise ReviewInvalid(f"Keep the note to {ReviewReport.NOTE_MAX_CHARS} characters of plain text.", field="note")
    if ReviewReport.objects.filter(review=review, reporter=reporter).exists():
        raise ReportRefused("You have already reported this review; a moderator will look at it.")
    _rate_limit(user=reporter, action="report", rate=settings.REVIEWS_REPORT_RATE)
    try:
        with transaction.atomic():
            return ReviewReport.objects.create(review=review, reporter=reporter, reason=reason, note=note)
    except IntegrityError:
        raise ReportRefused("You have already reported this review; a moderator will look at it.") from None

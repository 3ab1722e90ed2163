"""Ratings and reviews of a book, their per-book aggregate, and readers' reports.

A Review is one reader's rating of one book, with an optional title and text. Hidden reviews
(moderated in admin) stay in the table, so a restore brings them back as they were, but leave
the aggregate. BookRating is the aggregate the landing page reads in one query; only
`apps.reviews.services` writes it, under a row lock, so concurrent writes cannot lose a count.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.catalog.models import Book

STARS = (1, 2, 3, 4, 5)


class ReviewQuerySet(models.QuerySet):
    def visible(self):
        return self.filter(status=Review.Status.VISIBLE)

    def for_book(self, book):
        return self.filter(book=book)

    def with_text(self):
        """Reviews that say something (a bare star rating counts in the aggregate only)."""
        return self.exclude(text="")

    def sorted_by(self, sort: str):
        orderings = {
            "newest": ("-created_at", "-id"),
            "highest": ("-rating", "-created_at", "-id"),
            "lowest": ("rating", "-created_at", "-id"),
        }
        return self.order_by(*orderings.get(sort, orderings["newest"]))


class Review(models.Model):
    class Status(models.TextChoices):
        VISIBLE = "visible", "Visible"
        HIDDEN = "hidden", "Hidden by a moderator"

    # What a reader may write: the form shows these limits and services.review_input_clean enforces them.
    TITLE_MAX_CHARS = 120
    TEXT_MIN_CHARS = 20  # the text is optional (stars alone), but a review says something
    TEXT_MAX_CHARS = 4000

    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="reviews")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviews")
    rating = models.PositiveSmallIntegerField(choices=[(n, f"{n} star{'s' if n > 1 else ''}") for n in STARS])
    title = models.CharField(max_length=TITLE_MAX_CHARS, blank=True)
    # Stored exactly as the reader wrote it (trimmed); templates escape it on output. Empty, or
    # TEXT_MIN_CHARS to TEXT_MAX_CHARS characters.
    text = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.VISIBLE)
    created_at = models.DateTimeField(db_index=True)
    edited_at = models.DateTimeField(
        null=True, blank=True, help_text="Last change by the reader; the review keeps its original date."
    )
    moderated_at = models.DateTimeField(null=True, blank=True)
    moderated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    moderation_reason = models.TextField(
        blank=True, help_text="Why it was last hidden or restored (shown to staff only)."
    )

    objects = ReviewQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["book", "user"], name="one_review_per_reader_and_book"),
            models.CheckConstraint(condition=Q(rating__gte=1, rating__lte=5), name="review_rating_1_to_5"),
            models.CheckConstraint(condition=Q(status__in=["visible", "hidden"]), name="review_status_valid"),
        ]
        indexes = [models.Index(fields=["book", "status", "-created_at"], name="review_book_status_created")]

    def __str__(self):
        return f"{self.rating}★ by {self.user} on {self.book}"

    @property
    def is_hidden(self) -> bool:
        return self.status == self.Status.HIDDEN

    @property
    def is_edited(self) -> bool:
        return self.edited_at is not None


class BookRating(models.Model):
    """The aggregate of a book's visible reviews. Rewritten by every review write, in the same
    transaction, from a recount taken while this row is locked."""

    book = models.OneToOneField(Book, on_delete=models.CASCADE, primary_key=True, related_name="rating")
    rating_count = models.PositiveIntegerField(default=0)
    rating_sum = models.PositiveIntegerField(default=0)
    review_count = models.PositiveIntegerField(default=0, help_text="Visible reviews with text.")
    stars_1 = models.PositiveIntegerField(default=0)
    stars_2 = models.PositiveIntegerField(default=0)
    stars_3 = models.PositiveIntegerField(default=0)
    stars_4 = models.PositiveIntegerField(default=0)
    stars_5 = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    rating_count=models.F("stars_1")
                    + models.F("stars_2")
                    + models.F("stars_3")
                    + models.F("stars_4")
                    + models.F("stars_5")
                ),
                name="book_rating_distribution_adds_up",
            ),
        ]

    def __str__(self):
        return f"{self.book}: {self.average_display} from {self.rating_count}"

    @property
    def average(self) -> float | None:
        return self.rating_sum / self.rating_count if self.rating_count else None

    @property
    def average_display(self) -> str:
        """To one decimal, rounded half up (4.25 -> 4.3), as readers expect."""
        if not self.rating_count:
            return "–"
        tenths = (self.rating_sum * 20 + self.rating_count) // (2 * self.rating_count)
        return f"{tenths // 10}.{tenths % 10}"

    def stars_count(self, stars: int) -> int:
        return getattr(self, f"stars_{stars}")


class ReviewReport(models.Model):
    """A reader's flag on someone else's review, for the moderators in admin."""

    class Reason(models.TextChoices):
        SPAM = "spam", "Spam or advertising"
        ABUSE = "abuse", "Abusive or hateful"
        OFF_TOPIC = "off_topic", "Not about the book"
        PERSONAL = "personal", "Personal information"
        OTHER = "other", "Something else"

    NOTE_MAX_CHARS = 500

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="reports")
    reporter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_reports")
    reason = models.CharField(max_length=20, choices=Reason.choices)
    note = models.CharField(max_length=NOTE_MAX_CHARS, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when a moderator hides or restores the review."
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["review", "reporter"], name="one_report_per_reader_and_review")]

    def __str__(self):
        return f"{self.get_reason_display()} on review {self.review_id} by {self.reporter}"

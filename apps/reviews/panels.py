"""The reviews block, as a panel that pages of other apps show (the landing page) and that the
reviews views answer htmx writes with: the selector's data, and the write form built here."""

from __future__ import annotations

from dataclasses import dataclass

from apps.catalog.models import Book
from apps.reviews import selectors
from apps.reviews.forms import ReviewForm


@dataclass(frozen=True)
class ReviewsBlock:
    """What templates/reviews/_block.html shows."""

    summary: selectors.ReviewsSummary
    form: ReviewForm | None  # None when the visitor may not write
    editing: bool = False  # the reader's own review is open in the form


def reviews_block(book: Book, user, *, form: ReviewForm | None = None, editing: bool = False) -> ReviewsBlock:
    """The block for `user`; `form` is a bound form with errors after a refused write, else a new
    one (holding the reader's own review, if any) is built for readers who may write."""
    summary = selectors.reviews_summary(book, user)
    if form is None and summary.may_write:
        own = summary.own
        form = ReviewForm(initial={"rating": own.rating, "title": own.title, "text": own.text} if own else None)
    return ReviewsBlock(summary=summary, form=form, editing=editing)

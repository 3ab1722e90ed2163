"""Reading's parts of pages that other apps compose (apps.pages): plain data for the templates,
each computed through the access policy."""

from __future__ import annotations

from dataclasses import dataclass

from apps.catalog.models import Book, Capsule, Part
from apps.reading import selectors
from apps.reading.models import ReadingProgress
from apps.reading.policy import can_read, has_full_access


@dataclass(frozen=True)
class ProgressPanel:
    """The reading card of a capsule's progress page (templates/reading/_progress_panel.html)."""

    capsule: Capsule
    readable: bool
    progress: ReadingProgress | None


def progress_panel(user, capsule: Capsule) -> ProgressPanel:
    return ProgressPanel(
        capsule=capsule, readable=can_read(user, capsule), progress=selectors.progress_get(user, capsule)
    )


@dataclass(frozen=True)
class BookProgress:
    """The reader in the whole book: progress per capsule (for the contents' rows), where to go on,
    how far they are, and whether every capsule is open to them (lock marks, which EPUB)."""

    by_capsule: dict[int, ReadingProgress]
    continue_capsule: Capsule | None
    summary: dict
    full_access: bool


def book_progress(user, book: Book, parts: list[Part]) -> BookProgress:
    """From the table of contents already loaded for the page: one query for the progress."""
    progress = selectors.progress_by_capsule(user, book)
    return BookProgress(
        by_capsule=progress,
        continue_capsule=selectors.continue_reading(parts, progress),
        summary=selectors.progress_summary(parts, progress),
        full_access=has_full_access(user),
    )

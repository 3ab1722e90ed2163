"""Reads of the book. Query counts stay constant in the number of parts and capsules."""

from django.conf import settings
from django.db.models import Prefetch
from django.http import Http404

from apps.catalog.markdown import prose_text
from apps.catalog.models import Book, Capsule, Figure, Part
from apps.catalog.reading_time import reading_minutes, words_count
from config.caching import local_per_version


def book_get() -> Book:
    """The site's book (the platform serves one book; the first by id if several exist)."""
    book = Book.objects.order_by("id").first()
    if book is None:
        raise Http404("No book has been imported yet: python manage.py import_book content/kernel-engineering")
    return book


def book_parts_with_capsules(book: Book) -> list[Part]:
    """The table of contents: parts in order, each with its published capsules (two queries)."""
    capsules = (
        Capsule.objects.published()
        .in_reading_order()
        .only(
            "id",
            "part_id",
            "book_id",
            "number",
            "slug",
            "title",
            "badge",
            "minutes",
            "words",
            "access",
            "status",
            "is_draft",
        )
    )
    return list(
        book.parts.order_by("number").prefetch_related(
            Prefetch("capsules", queryset=capsules, to_attr="published_capsules")
        )
    )


def capsule_prose_words(*, body_html: str) -> int:
    """The words of a capsule's prose: its rendered text outside code listings (paragraphs, lists, tables, figure
    captions, footnotes, and the maths in them as text), counted by `words_count`. The one count of a capsule's
    length: its stored `words` and reading time, the book's totals, and the book's minimum length test use it."""
    return words_count(prose_text(body_html))


def book_totals(parts: list[Part]) -> dict:
    """The book in numbers, counted from its published capsules (one query, for the figures): what the landing
    page and the EPUB's metadata state. Reading time is the words at READING_WORDS_PER_MINUTE, not the sum of
    the capsules' rounded-up minutes."""
    capsules = [capsule for part in parts for capsule in part.published_capsules]
    words = sum(capsule.words for capsule in capsules)
    minutes = reading_minutes(words) if words else 0
    return {
        "capsule_count": len(capsules),
        "draft_count": sum(1 for capsule in capsules if capsule.is_draft),
        "figure_count": Figure.objects.filter(capsule__in=[c.pk for c in capsules]).count() if capsules else 0,
        "words": words,
        "minutes": minutes,
        "hours": round(minutes / 60),
        "words_per_minute": settings.READING_WORDS_PER_MINUTE,
    }


def capsule_get(slug: str) -> Capsule:
    """A published capsule with its part and book: one query, or none when this process read it at the current public
    version (PUBLIC_VERSION_SQL below covers every capsule's save, so an edit or an unpublish is seen at once)."""
    return local_per_version("capsule", slug, compute=lambda: _capsule_from_db(slug))


def _capsule_from_db(slug: str) -> Capsule:
    try:
        return Capsule.objects.published().select_related("part", "book").get(slug=slug)
    except Capsule.DoesNotExist:
        raise Http404("No such capsule") from None


def capsule_neighbours(parts: list[Part], capsule: Capsule) -> tuple[Capsule | None, Capsule | None]:
    """Previous and next capsule in reading order, from an already loaded table of contents."""
    ordered = [c for part in parts for c in part.published_capsules]
    index = next((i for i, c in enumerate(ordered) if c.pk == capsule.pk), None)
    if index is None:
        return None, None
    return (ordered[index - 1] if index > 0 else None), (ordered[index + 1] if index + 1 < len(ordered) else None)


# What changes whenever the book as the public sees it changes: an import or an edit (the book's revision and time,
# every capsule's last save, a capsule added or removed). Part of config.caching's public page version.
PUBLIC_VERSION_SQL = (
    "SELECT * FROM"
    " (SELECT MAX(revision) AS book_revision, MAX(updated_at) AS book_changed, COUNT(*) AS books"
    f" FROM {Book._meta.db_table}) AS books,"
    " (SELECT MAX(updated_at) AS capsule_changed, MAX(revision) AS capsule_revision, COUNT(*) AS capsules"
    f" FROM {Capsule._meta.db_table}) AS capsules"
)

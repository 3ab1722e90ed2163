"""Reads of reading state, all filtered through the access policy (search: apps/reading/search.py)."""

import hashlib
import json

from django.contrib.auth.models import AnonymousUser
from django.db.models import Prefetch, Q
from django.db.models.functions import MD5
from django.urls import reverse

from apps.catalog.models import Book, Capsule, Figure
from apps.reading.epub import FORMAT_VERSION, Chapter, EpubSources, Section
from apps.reading.models import EpubBuild, ReadingProgress
from apps.reading.policy import has_full_access, readable_capsules
from config import site as config_site


def progress_by_capsule(user, book: Book) -> dict[int, ReadingProgress]:
    """Capsule id -> the reader's progress, for the whole book in one query."""
    if not user.is_authenticated:
        return {}
    return {p.capsule_id: p for p in ReadingProgress.objects.filter(user=user, capsule__book=book)}


def progress_get(user, capsule: Capsule) -> ReadingProgress | None:
    """The reader's progress on one capsule (at most one row: unique per reader and capsule)."""
    if not user.is_authenticated:
        return None
    return ReadingProgress.objects.filter(user_id=user.pk, capsule_id=capsule.pk).first()


def continue_reading(parts, progress: dict[int, ReadingProgress]) -> Capsule | None:
    """The published capsule the reader touched last and has not finished, else None.

    Derived from the table of contents and the progress already loaded for the page: no query."""
    unfinished = [
        (progress[capsule.id].last_read_at, capsule)
        for part in parts
        for capsule in part.published_capsules
        if capsule.id in progress and not progress[capsule.id].is_complete
    ]
    return max(unfinished, key=lambda pair: pair[0])[1] if unfinished else None


def progress_summary(parts, progress: dict[int, ReadingProgress]) -> dict:
    capsules = [c for part in parts for c in part.published_capsules]
    completed = sum(1 for c in capsules if c.id in progress and progress[c.id].is_complete)
    started = sum(1 for c in capsules if c.id in progress and not progress[c.id].is_complete)
    minutes_read = sum(round(c.minutes * progress[c.id].percent / 100) for c in capsules if c.id in progress)
    return {
        "capsules": len(capsules),
        "completed": completed,
        "started": started,
        "percent": round(100 * completed / len(capsules)) if capsules else 0,
        "minutes_read": minutes_read,
    }


# --- EPUB --------------------------------------------------------------------------------------


def epub_edition_readable(user, edition: str) -> bool:
    """The sample is for everyone; the full book only for readers with full access (the policy)."""
    return edition == EpubBuild.Edition.SAMPLE or (edition == EpubBuild.Edition.FULL and has_full_access(user))


def site_url() -> str:
    """This site's address (SITE_URL), for links in files that are built outside a request (EPUB)."""
    return config_site.site_url()


def _epub_capsules(book: Book, edition: str, *, included: bool):
    """The edition's capsules (included=True) or the published ones it leaves out, in reading order.

    The full book holds every published capsule (it is served only to readers with full access);
    the sample exactly what the access policy lets anyone read, signed in or not."""
    capsules = Capsule.objects.published().filter(book=book).in_reading_order()
    if edition == EpubBuild.Edition.FULL:
        return capsules if included else capsules.none()
    readable_by_anyone = Q(pk__in=readable_capsules(AnonymousUser()).values("pk"))
    return capsules.filter(readable_by_anyone) if included else capsules.exclude(readable_by_anyone)


# Of a capsule the sample leaves out, only these public fields are ever loaded for the EPUB.
_LEFT_OUT_FIELDS = ("id", "book_id", "part_id", "number", "slug", "title", "access", "status")


def epub_fingerprint(book: Book, edition: str) -> str:
    """A hash of everything that goes into the edition's file, in five small queries.

    Any change to it (a new book revision, a capsule edited, published or unpublished, a figure
    changed, the site's address, the builder's format) asks for a new build; capsules the edition
    leaves out count only by the public fields its last page shows."""
    included = list(
        _epub_capsules(book, edition, included=True).values_list(
            "id",
            "number",
            "slug",
            "title",
            "part_id",
            "access",
            "badge",
            "minutes",
            "summary",
            "outline",
            "revision",
            "content_hash",
            "updated_at",
        )
    )
    left_out = list(_epub_capsules(book, edition, included=False).values_list(*_LEFT_OUT_FIELDS))
    figures = list(
        Figure.objects.filter(capsule_id__in=[row[0] for row in included])
        .annotate(svg_md5=MD5("svg"))
        .order_by("capsule_id", "number")
        .values_list("capsule_id", "number", "name", "caption", "svg_md5")
    )
    parts = list(book.parts.order_by("number").values_list("id", "number", "title", "description"))
    payload = {
        "format": FORMAT_VERSION,
        "edition": edition,
        "site": site_url(),
        # Read afresh: a caller's Book may predate a revision bump (services bump it with update()).
        "book": list(
            Book.objects.filter(pk=book.pk)
            .values_list("revision", "slug", "title", "subtitle", "blurb", "author", "publisher", "language")
            .get()
        ),
        "parts": parts,
        "included": included,
        "left_out": left_out,
        "figures": figures,
    }
    return hashlib.sha256(json.dumps(payload, default=str, sort_keys=True).encode()).hexdigest()


def epub_sources(book: Book, edition: str) -> EpubSources:
    """What the edition contains, loaded for the builder: parts with their included capsules and
    figures, and for the sample the public titles of what it leaves out (never their text)."""
    included = list(
        _epub_capsules(book, edition, included=True).select_related("part").prefetch_related(Prefetch("figures"))
    )
    left_out = list(_epub_capsules(book, edition, included=False).only(*_LEFT_OUT_FIELDS))
    sections, missing_by_part = [], []
    for part in book.parts.order_by("number"):
        chapters = [Chapter(capsule=c, figures=list(c.figures.all())) for c in included if c.part_id == part.pk]
        if chapters:
            sections.append(Section(part=part, chapters=chapters))
        missing = [c for c in left_out if c.part_id == part.pk]
        if missing:
            missing_by_part.append((part, missing))
    url = site_url()
    return EpubSources(
        book=book,
        sample=edition == EpubBuild.Edition.SAMPLE,
        site_url=url,
        sections=sections,
        left_out=missing_by_part,
        pricing_url=url + reverse("subscriptions:pricing"),
    )

"""Writes to the book: importing it from content/, and rendering a capsule for its revision.

Apps above the catalogue import their own parts of a content folder (submissions: the exercises in
capsules' front matter) with the book: each registers an importer from its AppConfig.ready, and
`book_import` runs them in its transaction, so the catalogue imports none of them.
"""

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.db.models import F
from django.urls import reverse

from apps.catalog.content_files import BookData, CapsuleData, read_book
from apps.catalog.markdown import MEASUREMENT_REFERENCE, render_markdown
from apps.catalog.measurements import Measurement
from apps.catalog.models import Book, Capsule, Figure, Part
from apps.catalog.reading_time import reading_minutes
from apps.catalog.selectors import capsule_prose_words


@dataclass
class ImportReport:
    book: str = ""
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    unpublished: list[str] = field(default_factory=list)
    # Files whose front matter still has a key that is read no more ("05-x.md: minutes"): warnings, not errors.
    ignored: list[str] = field(default_factory=list)
    # What each registered importer changed, by its label: {"exercise": ["created 32 sgemm"]}.
    related: dict[str, list[str]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.unpublished)


# importer(book=Book, capsules=list[CapsuleData]) -> the changes it made, one line each
BookImporter = Callable[..., list[str]]
_importers: dict[str, BookImporter] = {}


def book_importer_register(label: str, importer: BookImporter) -> None:
    """Run `importer` in every book import, after the capsules are written (for AppConfig.ready)."""
    _importers[label] = importer


def _content_hash(capsule: CapsuleData, measurements: dict[str, Measurement] | None = None) -> str:
    # The measurements the body cites are part of its content: a new value re-renders the capsules that state it.
    cited = sorted({match["key"] for match in MEASUREMENT_REFERENCE.finditer(capsule.body)} & set(measurements or {}))
    payload = {
        "title": capsule.title,
        "badge": capsule.badge,
        "access": capsule.access,
        "draft": capsule.draft,
        "summary": capsule.summary,
        "outline": capsule.outline,
        "body": capsule.body,
        "part": capsule.part,
        "figures": [(f.name, f.number, f.caption, hashlib.sha256(f.svg.encode()).hexdigest()) for f in capsule.figures],
    }
    if cited:  # absent where nothing is cited, so the hashes of such capsules stay as they were
        payload["measurements"] = {key: measurements[key].as_dict() for key in cited}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def capsule_render(*, capsule: Capsule, figure_svgs: dict[str, str] | None = None) -> Capsule:
    """Render the capsule's Markdown into its stored HTML, text and table of contents, and count its prose words
    (code listings left out) and its reading time from them. `figure_svgs` (file name: SVG text) sizes the figures;
    by default the capsule's stored ones."""
    if figure_svgs is None:
        figure_svgs = dict(capsule.figures.values_list("name", "svg")) if capsule.pk else {}
    rendered = render_markdown(
        capsule.body,
        figure_url=lambda name: reverse("reading:figure", kwargs={"slug": capsule.slug, "name": name}),
        measurements=book_measurements(capsule.book),
        figure_svg=figure_svgs.get,
    )
    capsule.body_html, capsule.body_text, capsule.toc = rendered.html, rendered.text, rendered.toc
    capsule.words = capsule_prose_words(body_html=rendered.html)
    capsule.minutes = reading_minutes(capsule.words)
    return capsule


def book_measurements(book: Book) -> dict[str, Measurement]:
    """The book's measured figures (stored from measurements.yaml by the import), for rendering its capsules."""
    return {key: Measurement.from_dict(fields) for key, fields in (book.measurements or {}).items()}


def _book_upsert(data: BookData) -> tuple[Book, bool]:
    fields = {
        "title": data.title,
        "subtitle": data.subtitle,
        "blurb": data.blurb,
        "publisher": data.publisher,
        "level": data.level,
        "author": data.author,
        "language": data.language,
        "ereader_pitch": data.ereader_pitch,
        "paywall_pitch": data.paywall_pitch,
        "measurements": {key: entry.as_dict() for key, entry in data.measurements.items()},
    }
    book, created = Book.objects.get_or_create(slug=data.slug, defaults=fields)
    changed = created or any(getattr(book, name) != value for name, value in fields.items())
    if changed and not created:
        for name, value in fields.items():
            setattr(book, name, value)
        book.save()
    return book, changed


def _parts_upsert(book: Book, data: BookData) -> tuple[dict[int, Part], bool]:
    parts, changed = {}, False
    for part_data in data.parts:
        values = {"slug": part_data.slug, "title": part_data.title, "description": part_data.description}
        part, created = Part.objects.get_or_create(book=book, number=part_data.number, defaults=values)
        if not created and any(getattr(part, name) != value for name, value in values.items()):
            Part.objects.filter(pk=part.pk).update(**values)
            changed = True
        changed = changed or created
        parts[part_data.number] = part
    return parts, changed


def _capsule_upsert(
    book: Book, part: Part, data: CapsuleData, report: ImportReport, measurements: dict[str, Measurement]
) -> None:
    label = f"{data.number:02d} {data.slug}"
    content_hash = _content_hash(data, measurements)
    capsule = Capsule.objects.filter(book=book, number=data.number).first()
    if (
        capsule
        and capsule.content_hash == content_hash
        and capsule.slug == data.slug
        and capsule.status == Capsule.Status.PUBLISHED
    ):
        report.unchanged.append(label)
        return
    if capsule is None:
        capsule = Capsule(book=book, number=data.number, revision=1)
        report.created.append(label)
    else:
        capsule.revision += 1
        report.updated.append(label)
    capsule.part, capsule.slug, capsule.title, capsule.badge = part, data.slug, data.title, data.badge
    capsule.access, capsule.is_draft, capsule.summary, capsule.outline = (
        data.access,
        data.draft,
        data.summary,
        data.outline,
    )
    capsule.body, capsule.content_hash, capsule.status = data.body, content_hash, Capsule.Status.PUBLISHED
    capsule_render(capsule=capsule, figure_svgs={f.name: f.svg for f in data.figures})
    capsule.save()
    capsule.figures.all().delete()
    Figure.objects.bulk_create(
        Figure(capsule=capsule, name=f.name, number=f.number, caption=f.caption, svg=f.svg) for f in data.figures
    )


@transaction.atomic
def book_import(*, folder: Path) -> ImportReport:
    """Create or update the book from its content folder. Idempotent: a second run changes nothing.

    Capsules whose files disappeared are unpublished (not deleted), so readers' progress survives.
    """
    data = read_book(folder)  # raises ImportFileError before any write
    report = ImportReport(book=data.slug)
    book, book_changed = _book_upsert(data)
    parts, parts_changed = _parts_upsert(book, data)
    numbers = [c.number for c in data.capsules]
    for capsule_data in data.capsules:
        _capsule_upsert(book, parts[capsule_data.part], capsule_data, report, data.measurements)
        report.ignored += [f"{capsule_data.path.name}: {key}" for key in capsule_data.retired_keys]
    for label, importer in _importers.items():
        report.related[label] = importer(book=book, capsules=data.capsules)
    for gone in book.capsules.exclude(number__in=numbers).filter(status=Capsule.Status.PUBLISHED):
        gone.status = Capsule.Status.DRAFT
        gone.save(update_fields=["status", "updated_at"])
        report.unpublished.append(f"{gone.number:02d} {gone.slug}")
    if report.changed or book_changed or parts_changed:
        Book.objects.filter(pk=book.pk).update(revision=F("revision") + 1)
    return report


@transaction.atomic
def capsule_save(*, capsule: Capsule) -> Capsule:
    """An edit from admin: re-render, and bump the capsule's and the book's revision if content changed."""
    previous = (
        Capsule.objects.filter(pk=capsule.pk)
        .values("body", "title", "summary", "outline", "access", "slug", "is_draft")
        .first()
    )
    capsule_render(capsule=capsule)
    if previous and any(previous[name] != getattr(capsule, name) for name in previous):
        capsule.revision += 1
        Book.objects.filter(pk=capsule.book_id).update(revision=F("revision") + 1)
    capsule.save()
    return capsule

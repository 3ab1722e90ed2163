"""Writes of reading state. Each refuses capsules the reader may not read."""

import logging
import math
import os
import secrets
import tempfile
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.catalog.models import Book, Capsule
from apps.reading import selectors
from apps.reading.epub import write_epub
from apps.reading.models import EpubBuild, ReadingProgress
from apps.reading.policy import can_read
from config.broker import BROKER_ERRORS

logger = logging.getLogger(__name__)


class ReadingError(Exception):
    pass


class NotReadable(ReadingError):
    """The reader may not read this capsule: no progress is recorded for it."""


def _readable_or_raise(user, capsule: Capsule) -> None:
    if not user.is_authenticated:
        raise NotReadable("Sign in to save your place.")
    if not can_read(user, capsule):
        raise NotReadable("This capsule is for subscribers.")


@transaction.atomic
def progress_record(*, user, capsule: Capsule, position: float, heading: str = "") -> ReadingProgress:
    """Save where the reader is; the furthest point reached never goes back."""
    _readable_or_raise(user, capsule)
    if not isinstance(position, (int, float)) or math.isnan(position):
        raise ReadingError("position must be a number between 0 and 1")
    position = min(max(float(position), 0.0), 1.0)
    progress, _ = ReadingProgress.objects.select_for_update().get_or_create(user=user, capsule=capsule)
    progress.position = position
    progress.furthest_position = max(progress.furthest_position, position)
    progress.heading = heading[:200]
    progress.save()
    return progress


def progress_open(*, user, capsule: Capsule) -> ReadingProgress:
    """The reader opened the capsule: their progress row exists from now on (at the top), once."""
    _readable_or_raise(user, capsule)
    progress, _ = ReadingProgress.objects.get_or_create(user=user, capsule=capsule)
    return progress


@transaction.atomic
def progress_set_complete(*, user, capsule: Capsule, complete: bool) -> ReadingProgress:
    _readable_or_raise(user, capsule)
    progress, _ = ReadingProgress.objects.select_for_update().get_or_create(user=user, capsule=capsule)
    if complete and not progress.completed_at:
        progress.completed_at = timezone.now()
        progress.furthest_position = 1.0
    elif not complete:
        progress.completed_at = None
    progress.save()
    return progress


# --- EPUB --------------------------------------------------------------------------------------

# A queued or running build older than this is taken as lost (broker restarted, worker killed past
# its hard limit) and queued again; a failed one is retried after it. Longer than the task's limits.
EPUB_STALE_AFTER = timedelta(minutes=10)

_EPUB_TRANSITIONS = {
    # QUEUED -> READY/FAILED: a slow run finishing after a request had queued its build again as lost.
    EpubBuild.Status.QUEUED: {
        EpubBuild.Status.BUILDING,
        EpubBuild.Status.QUEUED,
        EpubBuild.Status.SUPERSEDED,
        EpubBuild.Status.READY,
        EpubBuild.Status.FAILED,
    },
    EpubBuild.Status.BUILDING: {
        EpubBuild.Status.READY,
        EpubBuild.Status.FAILED,
        EpubBuild.Status.SUPERSEDED,
        EpubBuild.Status.QUEUED,
        EpubBuild.Status.BUILDING,
    },
    EpubBuild.Status.READY: {EpubBuild.Status.SUPERSEDED, EpubBuild.Status.QUEUED},
    EpubBuild.Status.FAILED: {EpubBuild.Status.QUEUED},
    EpubBuild.Status.SUPERSEDED: set(),
}


class EpubBuildError(ReadingError):
    pass


def _epub_move(build: EpubBuild, status: str, **fields) -> None:
    if status not in _EPUB_TRANSITIONS[build.status]:
        raise EpubBuildError(f"EPUB build {build.pk}: cannot go from {build.status} to {status}")
    build.status = status
    for name, value in fields.items():
        setattr(build, name, value)
    build.save()


def _epub_enqueue(build: EpubBuild) -> None:
    """Queue the build once the transaction commits. With the broker down the download page must still answer (it
    says the file is being prepared): the build is marked stale instead, so that the next request for it (the page
    polls its status every few seconds) queues it again, which succeeds once the broker is back."""
    from apps.reading.tasks import build_epub

    def send_or_mark_stale():
        try:
            build_epub.delay(build.pk)
        except BROKER_ERRORS as error:
            logger.warning("EPUB build %s: the broker refused its job (%s); the next request sends it", build.pk, error)
            EpubBuild.objects.filter(pk=build.pk, status=EpubBuild.Status.QUEUED).update(
                updated_at=timezone.now() - EPUB_STALE_AFTER - timedelta(seconds=1)
            )

    transaction.on_commit(send_or_mark_stale)


@transaction.atomic
def epub_request(*, book: Book, edition: str) -> EpubBuild:
    """The build of `edition` for the book's current content, queued if it does not exist yet.

    Concurrent requests share one build (unique per content fingerprint) and only the request
    that created it enqueues the task; a build lost on the way, or failed a while ago, is queued
    once more. Callers check access first (selectors.epub_edition_readable)."""
    if edition not in EpubBuild.Edition.values:
        raise EpubBuildError(f"unknown EPUB edition {edition!r}")
    fingerprint = selectors.epub_fingerprint(book, edition)
    revision = Book.objects.values_list("revision", flat=True).get(pk=book.pk)  # `book` may predate a bump
    build, created = EpubBuild.objects.get_or_create(
        book=book, edition=edition, fingerprint=fingerprint, defaults={"book_revision": revision}
    )
    if created:
        _epub_enqueue(build)
        return build
    build = EpubBuild.objects.select_for_update().get(pk=build.pk)
    stale = build.updated_at < timezone.now() - EPUB_STALE_AFTER
    lost_file = build.status == EpubBuild.Status.READY and not build.is_ready
    if lost_file or (
        stale and build.status in (EpubBuild.Status.QUEUED, EpubBuild.Status.BUILDING, EpubBuild.Status.FAILED)
    ):
        _epub_move(build, EpubBuild.Status.QUEUED, error="", file_name="")
        _epub_enqueue(build)
    return build


def _epub_sweep_partial_files(root) -> None:
    """Remove half-written files of builds whose worker was killed mid-write."""
    cutoff = (timezone.now() - EPUB_STALE_AFTER).timestamp()
    for partial in root.glob(".building-*.epub"):
        if partial.stat().st_mtime < cutoff:
            partial.unlink(missing_ok=True)


def epub_build(*, build_id: int) -> EpubBuild:
    """Build the EPUB file of one queued build (the Celery task's one call). Idempotent.

    Short transactions around the long write, so a download request never waits on a lock for the
    length of a build. The content is read after the build was queued; if it changed since (the
    fingerprint moved on), the build is superseded rather than filed under the old fingerprint."""
    with transaction.atomic():
        build = EpubBuild.objects.select_for_update().select_related("book").get(pk=build_id)
        if build.status in (EpubBuild.Status.SUPERSEDED, EpubBuild.Status.FAILED) or build.is_ready:
            return build
        _epub_move(build, EpubBuild.Status.BUILDING, started_at=timezone.now())

    sources = selectors.epub_sources(build.book, build.edition)
    if selectors.epub_fingerprint(build.book, build.edition) != build.fingerprint:
        with transaction.atomic():
            build = EpubBuild.objects.select_for_update().get(pk=build.pk)
            if build.is_pending:
                _epub_move(build, EpubBuild.Status.SUPERSEDED)
        return build

    root = settings.EPUB_ROOT
    root.mkdir(parents=True, exist_ok=True)
    _epub_sweep_partial_files(root)
    # A random part in the name: nothing about the file can be guessed from the book or edition.
    file_name = f"{build.book.slug}-{build.edition}-{build.fingerprint[:12]}-{secrets.token_hex(8)}.epub"
    handle, temporary = tempfile.mkstemp(dir=root, prefix=".building-", suffix=".epub")
    os.close(handle)
    try:
        write_epub(sources, temporary, modified=timezone.now())
        os.replace(temporary, root / file_name)
    except Exception as error:  # any failure is recorded on the build for the page and admin to show
        logger.exception("EPUB build %s failed", build.pk)
        if os.path.exists(temporary):
            os.unlink(temporary)
        with transaction.atomic():
            build = EpubBuild.objects.select_for_update().get(pk=build.pk)
            if build.is_pending:  # not when a duplicate run of the same build succeeded meanwhile
                _epub_move(build, EpubBuild.Status.FAILED, error=f"{type(error).__name__}: {error}"[:2000])
        return build

    with transaction.atomic():
        build = EpubBuild.objects.select_for_update().get(pk=build.pk)
        others = (
            EpubBuild.objects.select_for_update()
            .filter(book=build.book_id, edition=build.edition, status=EpubBuild.Status.READY)
            .exclude(pk=build.pk)
        )
        if not build.is_pending or others.filter(created_at__gt=build.created_at).exists():
            # A duplicate run of this build finished first, or a build of newer content did: this
            # file is not needed (and in the second case already out of date).
            if build.is_pending:
                _epub_move(build, EpubBuild.Status.SUPERSEDED)
            transaction.on_commit(lambda: (root / file_name).unlink(missing_ok=True))
            return build
        _epub_move(
            build,
            EpubBuild.Status.READY,
            file_name=file_name,
            size_bytes=(root / file_name).stat().st_size,
            built_at=timezone.now(),
            error="",
        )
        for old in others:
            old_path = old.path
            _epub_move(old, EpubBuild.Status.SUPERSEDED, file_name="")
            transaction.on_commit(lambda path=old_path: path.unlink(missing_ok=True))
    return build

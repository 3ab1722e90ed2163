"""EPUB builds: cached per content state, queued once, rebuilt when the content changes, built by
a real Celery worker through Redis, and the "being prepared" page that polls until the file is ready."""

import time
from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from django.test import Client
from django.utils import timezone

from apps.catalog.models import Capsule, Figure
from apps.catalog.services import capsule_save
from apps.reading import services
from apps.reading.models import EpubBuild
from config.celery import app as celery_app
from config.settings.base import EPUB_ROOT as SHARED_EPUB_ROOT
from tests.reading.test_epub import epub_entries, epub_root, ready_build  # noqa: F401  (epub_root: autouse fixture)
from tests.subscriptions.visitors import make_visitor


@pytest.mark.django_db
def test_the_first_download_queues_one_build_and_shows_that_it_is_being_prepared(
    mini_book, django_capture_on_commit_callbacks
):
    client = Client()
    with django_capture_on_commit_callbacks() as enqueued:
        first = client.get("/sample.epub")
        second = client.get("/sample.epub")
        poll = client.get("/epub/sample/status/", headers={"HX-Request": "true"})
    # Three requests for the same content, one build and one task message.
    assert len(enqueued) == 1 and EpubBuild.objects.count() == 1
    for response in (first, second):
        assert (
            response.status_code == 202
            and "private" in response["Cache-Control"]
            and "no-store" in response["Cache-Control"]
        )
        body = response.content.decode()
        assert (
            "Preparing your EPUB" in body
            and 'hx-get="/epub/sample/status/"' in body
            and 'hx-trigger="every 2s"' in body
        )
        assert '<meta http-equiv="refresh" content="5">' in body  # without JavaScript the page reloads instead
    assert poll.status_code == 200 and 'hx-trigger="every 2s"' in poll.content.decode()

    build = services.epub_build(build_id=EpubBuild.objects.get().pk)
    assert build.status == EpubBuild.Status.READY and build.size_bytes == build.path.stat().st_size

    ready = client.get("/epub/sample/status/", headers={"HX-Request": "true"}).content.decode()
    assert 'href="/sample.epub"' in ready and "every 2s" not in ready and "?start=1" in ready
    start = client.get("/epub/sample/status/?start=1", headers={"HX-Request": "true"})
    assert start["HX-Redirect"] == "/sample.epub"
    download = client.get("/sample.epub")
    assert download.status_code == 200 and download["Content-Type"] == "application/epub+zip"
    assert b"".join(download.streaming_content) == build.path.read_bytes()
    assert EpubBuild.objects.count() == 1  # served from the cache: no new build


@pytest.mark.django_db
@pytest.mark.parametrize("change", ["capsule text", "figure", "unpublish", "book revision"])
def test_a_content_change_asks_for_a_new_build_and_retires_the_old_file(
    mini_book, change, django_capture_on_commit_callbacks
):
    old = ready_build(mini_book, "full")
    if change == "capsule text":
        capsule = Capsule.objects.get(slug="free-one")
        capsule.body += "\n\nA NEW PARAGRAPH about warps."
        capsule_save(capsule=capsule)
    elif change == "figure":  # edited in admin: no capsule revision, but the file must change
        Figure.objects.filter(name="01-tiles.svg").update(
            svg='<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 2 2"><title>NEW TILES</title></svg>'
        )
    elif change == "unpublish":
        Capsule.objects.filter(slug="locked-three").update(status=Capsule.Status.DRAFT)
    else:
        type(mini_book).objects.filter(pk=mini_book.pk).update(revision=mini_book.revision + 1)

    subscriber = Client()
    subscriber.force_login(make_visitor("active"))
    with django_capture_on_commit_callbacks() as enqueued:
        # The cached file is out of date: not served, the new one is being prepared.
        assert subscriber.get("/book.epub").status_code == 202
    new = EpubBuild.objects.exclude(pk=old.pk).get()
    assert new.status == EpubBuild.Status.QUEUED and len(enqueued) == 1
    new = services.epub_build(build_id=new.pk)
    entries = epub_entries(new.path)
    expected = {
        "capsule text": (b"A NEW PARAGRAPH about warps.", "EPUB/capsule-01.xhtml"),
        "figure": (b"NEW TILES", "EPUB/figures/01/01-tiles.svg"),
    }
    if change in expected:
        text, name = expected[change]
        assert text in entries[name]
    if change == "unpublish":
        assert "EPUB/capsule-03.xhtml" not in entries
    old.refresh_from_db()
    assert old.status == EpubBuild.Status.SUPERSEDED and old.file_name == ""
    assert new.book_revision == old.book_revision + (change in ("capsule text", "book revision"))


@pytest.mark.django_db
def test_a_build_whose_content_changed_while_queued_is_superseded_not_filed_under_the_old_state(mini_book):
    queued = services.epub_request(book=mini_book, edition="sample")
    capsule = Capsule.objects.get(slug="free-one")
    capsule.title = "Free one, renamed"
    capsule_save(capsule=capsule)
    built = services.epub_build(build_id=queued.pk)
    assert built.status == EpubBuild.Status.SUPERSEDED and not built.file_name
    assert b"Free one, renamed" in epub_entries(ready_build(mini_book, "sample").path)["EPUB/capsule-01.xhtml"]


@pytest.mark.django_db
def test_a_lost_build_is_queued_again_once_it_is_stale_and_a_failed_one_is_retried(
    mini_book, django_capture_on_commit_callbacks
):
    build = services.epub_request(book=mini_book, edition="sample")
    with django_capture_on_commit_callbacks() as enqueued:
        services.epub_request(book=mini_book, edition="sample")
    assert enqueued == []  # fresh: the queued task is on its way
    long_ago = timezone.now() - services.EPUB_STALE_AFTER - timedelta(seconds=1)
    for status in (EpubBuild.Status.QUEUED, EpubBuild.Status.BUILDING, EpubBuild.Status.FAILED):
        EpubBuild.objects.filter(pk=build.pk).update(status=status, updated_at=long_ago)
        with django_capture_on_commit_callbacks() as enqueued:
            again = services.epub_request(book=mini_book, edition="sample")
        assert again.pk == build.pk and again.status == EpubBuild.Status.QUEUED and len(enqueued) == 1, status
    # A ready build whose file disappeared from disk is rebuilt rather than served as an error.
    ready = services.epub_build(build_id=build.pk)
    ready.path.unlink()
    with django_capture_on_commit_callbacks() as enqueued:
        response = Client().get("/sample.epub")
    assert response.status_code == 202 and len(enqueued) == 1


@pytest.mark.django_db
def test_a_failed_build_says_so_and_stops_polling(mini_book):
    Capsule.objects.filter(slug="free-one").update(body_html='<p><img src="/not-a-figure.svg" alt=""></p>')
    services.epub_build(build_id=services.epub_request(book=mini_book, edition="sample").pk)
    body = Client().get("/sample.epub").content.decode()
    assert "We could not prepare the EPUB" in body and "every 2s" not in body and "http-equiv" not in body


@pytest.mark.django_db
def test_an_unknown_edition_is_not_found(mini_book):
    assert Client().get("/epub/everything/status/").status_code == 404


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_builds_the_queued_epub_through_redis(mini_book, settings):
    """The enqueue glue end to end: the view queues the task on commit, a Celery worker (solo pool,
    the project's Redis broker, queue "default") runs it, and the next request gets the file.

    Any worker on the queue may take the task (the suite's session-wide worker processes of
    tests/submissions too), so this test uses the EPUB folder that every process of the run
    shares, as web and worker share it in production, and removes its file afterwards."""
    settings.EPUB_ROOT = SHARED_EPUB_ROOT
    celery_app.control.purge()  # messages left by earlier tests (whose rows are gone) are not ours
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, queues=["default"], shutdown_timeout=10):
            client = Client()
            assert client.get("/sample.epub").status_code == 202
            deadline = time.monotonic() + 30
            while not EpubBuild.objects.filter(status=EpubBuild.Status.READY).exists():
                assert time.monotonic() < deadline, list(EpubBuild.objects.values("status", "error"))
                time.sleep(0.1)
        response = client.get("/sample.epub")
        assert response.status_code == 200 and response["Content-Type"] == "application/epub+zip"
        assert EpubBuild.objects.count() == 1
    finally:
        for build in EpubBuild.objects.exclude(file_name=""):
            build.path.unlink(missing_ok=True)

"""The EPUB download in a real browser: the first click shows that the file is being prepared and
the download then starts by itself (htmx polling); once the file is cached, a click downloads at once."""

import zipfile

import pytest
from playwright.sync_api import expect

from apps.catalog.services import book_import
from apps.reading.models import EpubBuild
from config.celery import app as celery_app
from tests.conftest import LOCKED_SENTINELS, MINI_BOOK
from tests.e2e.pages import axe_problems

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def eager_builds(settings, tmp_path):
    """The build task runs in the web process as soon as it is queued (no worker in this test;
    tests/reading/test_epub_builds.py proves the queue with a real one)."""
    settings.EPUB_ROOT = tmp_path / "epub"
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_eager_propagates
    conf.task_always_eager, conf.task_eager_propagates = True, True
    yield
    conf.task_always_eager, conf.task_eager_propagates = saved


def test_the_sample_is_prepared_then_downloads_by_itself_and_then_at_once(page, live_server, eager_builds, tmp_path):
    book_import(folder=MINI_BOOK)
    page.goto(live_server.url + "/")
    card = page.locator("section.ereader")
    expect(card.get_by_role("link", name="Download the free sample (EPUB)")).to_have_attribute("href", "/sample.epub")
    expect(card.get_by_role("link", name="Download the EPUB")).to_have_count(0)

    with page.expect_download(timeout=20_000) as first:
        card.get_by_role("link", name="Download the free sample (EPUB)").click()
        expect(page.get_by_text("Preparing your EPUB")).to_be_visible()
        assert not axe_problems(page)
    download = first.value
    assert download.suggested_filename == "mini-book-sample.epub"
    expect(page.get_by_text("Your EPUB is ready")).to_be_visible()
    saved = tmp_path / "sample.epub"
    download.save_as(saved)
    with zipfile.ZipFile(saved) as archive:
        assert archive.namelist()[0] == "mimetype" and archive.read("mimetype") == b"application/epub+zip"
        assert not any(s.encode() in archive.read(name) for name in archive.namelist() for s in LOCKED_SENTINELS)

    # Cached now: from the landing page the download starts at once, without the waiting page.
    page.goto(live_server.url + "/")
    with page.expect_download(timeout=10_000) as second:
        page.locator("section.ereader").get_by_role("link", name="Download the free sample (EPUB)").click()
    assert second.value.suggested_filename == "mini-book-sample.epub"
    expect(page).to_have_url(live_server.url + "/")
    assert EpubBuild.objects.filter(status=EpubBuild.Status.READY).count() == 1

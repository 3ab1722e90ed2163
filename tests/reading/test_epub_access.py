"""Who gets which EPUB: the full book only for readers with full access (the one policy), the
sample for everyone, and no locked text in the sample (checked with the mini book's sentinels)."""

import io
import zipfile

import pytest
from django.conf import settings
from django.test import Client

from apps.reading.models import EpubBuild
from tests.conftest import LOCKED_SENTINELS
from tests.reading.test_epub import epub_entries, epub_root, ready_build  # noqa: F401  (epub_root: autouse fixture)
from tests.subscriptions.visitors import FULL_ACCESS_KINDS, VISITOR_KINDS, client_for

MAY_READ_LOCKED = FULL_ACCESS_KINDS | {"staff"}


def downloaded_entries(response) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def holds_locked_text(entries: dict[str, bytes]) -> bool:
    return any(sentinel.encode() in content for content in entries.values() for sentinel in LOCKED_SENTINELS)


@pytest.mark.django_db
def test_the_sample_holds_the_free_capsules_and_no_locked_text_while_the_full_book_holds_it(mini_book):
    sample = epub_entries(ready_build(mini_book, "sample").path)
    full = epub_entries(ready_build(mini_book, "full").path)
    assert not holds_locked_text(sample)
    # The same check finds both sentinels (paragraph and figure) in the full book: it can fail.
    assert all(any(s.encode() in c for c in full.values()) for s in LOCKED_SENTINELS)
    assert "EPUB/capsule-01.xhtml" in sample and "EPUB/capsule-02.xhtml" not in sample
    assert not [name for name in sample if name.startswith("EPUB/figures/02/")]
    # Locked capsules appear in the sample only by their public titles, on the last page.
    assert b"Locked two: tiling" in sample["EPUB/get-the-rest.xhtml"]


@pytest.mark.django_db
@pytest.mark.parametrize("kind", VISITOR_KINDS)
def test_the_full_epub_downloads_only_for_visitors_with_full_access_and_the_sample_for_everyone(mini_book, kind):
    # Both files already built (a subscriber downloaded them earlier): a cached file is no way in.
    ready_build(mini_book, "full"), ready_build(mini_book, "sample")
    client = client_for(kind)

    response = client.get("/book.epub")
    assert "private" in response["Cache-Control"] and "no-store" in response["Cache-Control"]
    if kind in MAY_READ_LOCKED:
        assert response.status_code == 200 and response["Content-Type"] == "application/epub+zip"
        assert response["Content-Disposition"] == 'attachment; filename="mini-book.epub"'
        assert holds_locked_text(downloaded_entries(response))
    else:
        assert response.status_code == 403 and response["Content-Type"].startswith("text/html")
        body = response.content.decode()
        assert not any(sentinel in body for sentinel in LOCKED_SENTINELS)
        assert "/pricing/" in body and "/sample.epub" in body
        assert client.get("/epub/full/status/").status_code == 403  # the polling route asks the policy too

    response = client.get("/sample.epub")
    assert (
        response.status_code == 200
        and response["Content-Disposition"] == 'attachment; filename="mini-book-sample.epub"'
    )
    assert "private" in response["Cache-Control"] and "no-store" in response["Cache-Control"]
    assert not holds_locked_text(downloaded_entries(response))


@pytest.mark.django_db
def test_a_visitor_without_access_does_not_even_queue_a_full_build(mini_book, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as enqueued:
        assert client_for("canceled").get("/book.epub").status_code == 403
    assert enqueued == [] and not EpubBuild.objects.exists()


@pytest.mark.django_db
def test_the_stored_file_has_no_public_address(mini_book, epub_root):
    build = ready_build(mini_book, "full")
    # Outside every folder the site serves files from, and named with a random part.
    public = [settings.MEDIA_ROOT, settings.STATIC_ROOT, *settings.STATICFILES_DIRS]
    assert not any(build.path.resolve().is_relative_to(folder.resolve()) for folder in public)
    assert build.path.parent == epub_root and build.path.stem.startswith("mini-book-full-")
    assert len(build.path.stem.rsplit("-", 1)[1]) == 16
    client = Client()
    for guess in (
        f"/media/{build.file_name}",
        f"/static/{build.file_name}",
        f"/{build.file_name}",
        "/mini-book.epub",
        "/epub/full/",
    ):
        assert client.get(guess).status_code == 404, guess
    # Another build of the same edition gets another name: nothing to learn from one file name.
    other = ready_build(mini_book, "sample")
    assert other.path.name.rsplit("-", 1)[1] != build.path.name.rsplit("-", 1)[1]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "link", "other"),
    [
        ("anonymous", "/sample.epub", "/book.epub"),
        ("free", "/sample.epub", "/book.epub"),
        ("active", "/book.epub", "/sample.epub"),
        ("staff", "/book.epub", "/sample.epub"),
    ],
)
def test_the_landing_and_account_pages_offer_the_edition_the_visitor_may_download(mini_book, kind, link, other):
    client = client_for(kind)
    pages = ["/"] + ([] if kind == "anonymous" else ["/accounts/profile/"])
    for page in pages:
        body = client.get(page).content.decode()
        assert f'href="{link}"' in body and f'href="{other}"' not in body, page

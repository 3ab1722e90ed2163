"""A capsule marked `draft: true` says so on its page, in the contents (landing page and reader) and in the EPUB;
the others carry no such mark."""

import shutil

import pytest
from django.test import Client

from apps.catalog.models import Book
from apps.catalog.services import book_import
from tests.conftest import MINI_BOOK
from tests.reading.test_epub import NS, ReadBack, epubcheck_problems, ready_build
from tests.subscriptions.visitors import make_visitor


@pytest.fixture
def draft_book(db, tmp_path, settings):
    settings.EPUB_ROOT = tmp_path / "epub"
    folder = tmp_path / "book"
    shutil.copytree(MINI_BOOK, folder)
    for name in ("01-free-one.md", "02-locked-two.md"):
        path = folder / "capsules" / name
        path.write_text(path.read_text().replace("\nsummary:", "\ndraft: true\nsummary:", 1))
    book_import(folder=folder)
    return Book.objects.get(slug="mini-book")


def test_a_draft_says_so_on_its_page_and_in_the_contents(draft_book):
    anonymous = Client()
    free = anonymous.get("/capsules/free-one/").content.decode()
    assert '<span class="badge badge--warning">draft</span>' in free
    assert "This capsule is a draft: its text is not finished yet" in free
    locked = anonymous.get("/capsules/locked-two/").content.decode()  # a teaser, still marked
    assert '<span class="badge badge--warning">draft</span>' in locked
    start = free.index('<nav class="reader-nav"')
    nav = free[start : free.index("</nav>", start)]
    assert nav.count('<span class="reader-nav__mark">draft</span>') == 2
    finished = anonymous.get("/capsules/locked-three/").content.decode()
    assert 'badge--warning">draft' not in finished and "is a draft" not in finished

    landing = anonymous.get("/").content.decode()
    assert landing.count('title="Not finished yet">draft</span>') == 2
    assert "<strong>3</strong> capsules (2 in draft)" in landing


def test_a_signed_in_reader_sees_the_draft_mark_too(draft_book):
    client = Client()
    client.force_login(make_visitor("active", name="Sub Scriber"))
    page = client.get("/capsules/locked-two/").content.decode()
    assert '<span class="badge badge--warning">draft</span>' in page and "This capsule is a draft" in page


@pytest.mark.slow  # epubcheck
def test_a_draft_chapter_is_marked_in_the_epub_and_the_file_stays_valid(draft_book):
    build = ready_build(draft_book, "full")
    epub = ReadBack(build.path)
    assert epub.chapter_title("capsule-01") == "01 Free one: welcome (draft)"
    assert epub.chapter_title("capsule-03") == "03 Locked three: warps"
    nav = [id for id in epub.manifest if "nav" in id]
    titles = " ".join(" ".join(epub.tree(nav[0]).xpath("//x:nav//x:a//text()", namespaces=NS)).split())
    assert "01 · Free one: welcome (draft)" in titles and "02 · Locked two: tiling (draft)" in titles
    assert "Locked three: warps (draft)" not in titles
    description = epub.package.metadata.description
    assert "3 capsules (2 in draft), 2 figures" in description
    assert epubcheck_problems([build.path]) == {str(build.path): []}

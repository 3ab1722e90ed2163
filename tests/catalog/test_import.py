import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.catalog.content_files import ImportFileError
from apps.catalog.models import Book, Capsule, Figure
from apps.catalog.reading_time import reading_minutes, words_count
from apps.catalog.selectors import capsule_prose_words
from apps.catalog.services import book_import, capsule_save
from tests.conftest import MINI_BOOK


@pytest.fixture
def book_folder(tmp_path):
    folder = tmp_path / "book"
    shutil.copytree(MINI_BOOK, folder)
    return folder


def snapshot():
    return sorted(Capsule.objects.values_list("number", "slug", "title", "revision", "status", "body_html")), list(
        Book.objects.values_list("slug", "revision")
    )


def test_import_creates_the_book_parts_capsules_and_figures(db, book_folder):
    report = book_import(folder=book_folder)
    assert report.created == ["01 free-one", "02 locked-two", "03 locked-three"]
    book = Book.objects.get()
    assert (book.title, book.author) == ("Mini Book", "Ada Tester")
    assert list(book.parts.values_list("number", "title")) == [(0, "Start"), (1, "Deep")]
    locked = Capsule.objects.get(slug="locked-two")
    assert (locked.access, locked.badge, locked.is_draft, locked.part.number) == ("locked", "12.8%", False, 1)
    assert locked.words == capsule_prose_words(body_html=locked.body_html) > 0 and locked.minutes == 1
    assert locked.words < words_count(locked.body_text)  # its code listing is not prose
    assert locked.outline == ["Tiles", "Code"]
    assert '<span class="kt">float</span>' in locked.body_html
    assert 'src="/capsules/locked-two/figures/02-secret.svg"' in locked.body_html
    assert Figure.objects.get(capsule=locked).caption == "The locked figure."


def test_import_is_idempotent(db, book_folder):
    book_import(folder=book_folder)
    before = snapshot()
    report = book_import(folder=book_folder)
    assert report.unchanged == ["01 free-one", "02 locked-two", "03 locked-three"]
    assert not report.changed
    assert snapshot() == before


def test_a_changed_capsule_gets_a_new_revision_and_so_does_the_book(db, book_folder):
    book_import(folder=book_folder)
    book_revision = Book.objects.get().revision
    path = book_folder / "capsules" / "03-locked-three.md"
    path.write_text(path.read_text().replace("Warp tiles sit", "Warp tiles now sit"))
    report = book_import(folder=book_folder)
    assert report.updated == ["03 locked-three"] and len(report.unchanged) == 2
    capsule = Capsule.objects.get(slug="locked-three")
    assert capsule.revision == 2 and "Warp tiles now sit" in capsule.body_html
    assert Book.objects.get().revision == book_revision + 1


def test_a_changed_figure_counts_as_a_change(db, book_folder):
    book_import(folder=book_folder)
    svg = book_folder / "figures" / "01-tiles.svg"
    svg.write_text(svg.read_text().replace("#369", "#963"))
    assert book_import(folder=book_folder).updated == ["01 free-one"]
    assert "#963" in Figure.objects.get(name="01-tiles.svg").svg


def test_a_capsule_whose_file_is_gone_is_unpublished_not_deleted(db, book_folder):
    book_import(folder=book_folder)
    (book_folder / "capsules" / "03-locked-three.md").unlink()
    assert book_import(folder=book_folder).unpublished == ["03 locked-three"]
    assert Capsule.objects.get(slug="locked-three").status == Capsule.Status.DRAFT
    assert not Capsule.objects.published().filter(slug="locked-three").exists()


BROKEN = [
    (
        "capsules/02-locked-two.md",
        'title: "Locked two: tiling"',
        "title: [unclosed",
        "02-locked-two.md:5: invalid YAML",
    ),
    ("capsules/02-locked-two.md", "number: 2", "number: two", "02-locked-two.md:2: number must be"),
    (
        "capsules/02-locked-two.md",
        "access: locked",
        "access: locked\ndarft: true",
        "unknown front-matter field(s): darft",
    ),
    ("capsules/02-locked-two.md", "access: locked", "access: locked\ndraft: yes please", "draft must be true or false"),
    ("book.yaml", "language: en", "language: en\nfigure_count: 518", "book.yaml: unknown field(s): figure_count"),
    ("capsules/02-locked-two.md", "access: locked", "access: secret", "access must be 'free' or 'locked'"),
    ("capsules/02-locked-two.md", "part: 1", "part: 9", "part 9 is not a part"),
    (
        "capsules/02-locked-two.md",
        "## Code",
        "## Code\n\nBad maths $\\frac{1}{$ here.",
        "02-locked-two.md:17: cannot render the maths",
    ),
    (
        "capsules/02-locked-two.md",
        "figures/02-secret.svg",
        "figures/missing.svg",
        "02-locked-two.md:21: figure file not found",
    ),
    ("capsules/02-locked-two.md", "slug: locked-two", "slug: free-one", "slug 'free-one' is also used by"),
    ("figures/02-secret.svg", "<rect", "<script>alert(1)</script><rect", "02-secret.svg:1: SVG may not contain script"),
    (  # a LaTeX "\approx" written through a Python string: BEL + "pprox", which no XHTML (the EPUB) may hold
        "capsules/02-locked-two.md",
        "## Code",
        "## Code\n\nAbout $x \x07pprox 2$.",
        "02-locked-two.md:17: holds the control character U+0007",
    ),
    ("book.yaml", "author: Ada Tester", "author:", "book.yaml:1: missing required field(s): author"),
]


@pytest.mark.parametrize("relative, old, new, message", BROKEN)
def test_a_broken_file_fails_the_import_naming_file_and_line_and_changes_nothing(
    db, book_folder, relative, old, new, message
):
    book_import(folder=book_folder)
    (book_folder / "capsules" / "03-locked-three.md").write_text(
        (book_folder / "capsules" / "03-locked-three.md").read_text().replace("Warp tiles", "Changed warp tiles")
    )
    before = snapshot()
    path = book_folder / relative
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises(ImportFileError) as error:
        book_import(folder=book_folder)
    assert message in str(error.value)
    assert snapshot() == before  # the valid change to capsule 3 was not applied either


def test_script_in_markdown_is_stored_escaped(db, book_folder):
    path = book_folder / "capsules" / "01-free-one.md"
    path.write_text(path.read_text() + "\n<script>alert('x')</script>\n")
    book_import(folder=book_folder)
    html = Capsule.objects.get(slug="free-one").body_html
    assert "<script" not in html and "&lt;script&gt;" in html


def test_the_command_reports_changes_and_fails_cleanly(db, book_folder, capsys):
    call_command("import_book", str(book_folder))
    assert "3 created, 0 updated, 0 unpublished, 0 unchanged" in capsys.readouterr().out
    call_command("import_book", str(book_folder))
    assert "0 created, 0 updated, 0 unpublished, 3 unchanged" in capsys.readouterr().out
    (book_folder / "capsules" / "01-free-one.md").write_text("no front matter\n")
    with pytest.raises(
        CommandError, match=r"01-free-one.md:1: must start with YAML front matter.*\nNothing was changed"
    ):
        call_command("import_book", str(book_folder))


def test_a_missing_folder_is_a_clear_error(db, tmp_path):
    with pytest.raises(ImportFileError, match="not a folder"):
        book_import(folder=Path(tmp_path / "nope"))


def test_words_and_reading_time_are_counted_from_the_prose(db, book_folder, settings):
    settings.READING_WORDS_PER_MINUTE = 10
    path = book_folder / "capsules" / "03-locked-three.md"
    listing = "int listing_words = never + counted * as + prose"
    path.write_text(
        path.read_text() + "\n" + "word " * 95 + "\n\n= + - * / ->\n\n```cuda\n" + listing + "\n```\n"
    )  # operators are not words, and a code listing is not read as prose
    book_import(folder=book_folder)
    capsule = Capsule.objects.get(slug="locked-three")
    assert listing in capsule.body_text  # search still finds the listing's words
    prose = capsule.body_text.replace(listing, " ")
    assert capsule.words == len([t for t in prose.split() if any(c.isalnum() for c in t)])
    assert capsule.words >= 95 and capsule.minutes == -(-capsule.words // 10)  # rounded up
    assert (words_count("a b, c += d_e 4096³ — -> ..."), reading_minutes(0), reading_minutes(11)) == (5, 1, 2)


def test_a_stated_reading_time_is_ignored_and_reported(db, book_folder, capsys):
    path = book_folder / "capsules" / "02-locked-two.md"
    path.write_text(path.read_text().replace("access: locked", "access: locked\nminutes: 99", 1))
    report = book_import(folder=book_folder)
    assert report.ignored == ["02-locked-two.md: minutes"]
    assert Capsule.objects.get(slug="locked-two").minutes == 1
    call_command("import_book", str(book_folder))
    assert "ignored     1 retired front-matter key(s), e.g. 02-locked-two.md: minutes" in capsys.readouterr().out


def test_draft_comes_from_the_front_matter_and_changes_the_revision(db, book_folder):
    book_import(folder=book_folder)
    path = book_folder / "capsules" / "02-locked-two.md"
    path.write_text(path.read_text().replace("access: locked", "access: locked\ndraft: true", 1))
    assert book_import(folder=book_folder).updated == ["02 locked-two"]
    capsule = Capsule.objects.get(slug="locked-two")
    assert capsule.is_draft and capsule.status == Capsule.Status.PUBLISHED and capsule.revision == 2
    path.write_text(path.read_text().replace("draft: true\n", "", 1))
    book_import(folder=book_folder)
    assert not Capsule.objects.get(slug="locked-two").is_draft


def test_a_reimport_keeps_an_admin_edit_until_the_file_changes(db, book_folder):
    """What README and the admin page say: an edit in admin survives imports of an unchanged file, and the
    file's text replaces it once the file changes."""
    book_import(folder=book_folder)
    capsule = Capsule.objects.get(slug="locked-three")
    capsule.body += "\n\nAn edit made in admin.\n"
    capsule_save(capsule=capsule)
    assert book_import(folder=book_folder).unchanged == ["01 free-one", "02 locked-two", "03 locked-three"]
    assert "An edit made in admin." in Capsule.objects.get(slug="locked-three").body_html
    path = book_folder / "capsules" / "03-locked-three.md"
    path.write_text(path.read_text().replace("Warp tiles sit", "Warp tiles now sit"))
    assert book_import(folder=book_folder).updated == ["03 locked-three"]
    html = Capsule.objects.get(slug="locked-three").body_html
    assert "An edit made in admin." not in html and "Warp tiles now sit" in html

import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.catalog.content_files import ImportFileError
from apps.catalog.models import Book, Capsule, Figure
from apps.catalog.services import book_import
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
    assert (book.title, book.author, book.stated_figure_count) == ("Mini Book", "Ada Tester", 7)
    assert list(book.parts.values_list("number", "title")) == [(0, "Start"), (1, "Deep")]
    locked = Capsule.objects.get(slug="locked-two")
    assert (locked.access, locked.badge, locked.minutes, locked.part.number) == ("locked", "12.8%", 20, 1)
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
    ("capsules/02-locked-two.md", "minutes: 20", "minutes: twenty", "02-locked-two.md:2: minutes must be"),
    ("capsules/02-locked-two.md", "access: locked", "access: secret", "access must be 'free' or 'locked'"),
    ("capsules/02-locked-two.md", "part: 1", "part: 9", "part 9 is not a part"),
    (
        "capsules/02-locked-two.md",
        "## Code",
        "## Code\n\nBad maths $\\frac{1}{$ here.",
        "02-locked-two.md:18: cannot render the maths",
    ),
    (
        "capsules/02-locked-two.md",
        "figures/02-secret.svg",
        "figures/missing.svg",
        "02-locked-two.md:22: figure file not found",
    ),
    ("capsules/02-locked-two.md", "slug: locked-two", "slug: free-one", "slug 'free-one' is also used by"),
    ("figures/02-secret.svg", "<rect", "<script>alert(1)</script><rect", "02-secret.svg:1: SVG may not contain script"),
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

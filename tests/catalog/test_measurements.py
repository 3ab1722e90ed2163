"""Measured figures written once (issue 44): content/<book>/measurements.yaml, cited in the Markdown as {{m:KEY}} and
filled in by the pipeline; a test that finds a measurement stated twice with two values; the tool that updates the
file (content/README.md, "Measured figures")."""

import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from apps.catalog.content_files import ImportFileError, read_book
from apps.catalog.markdown import ContentError, render_markdown
from apps.catalog.measurements import (
    FILE_NAME,
    Measurement,
    MeasurementError,
    measurements_dump,
    measurements_parse,
    measurements_read,
)
from apps.catalog.models import Book, Capsule
from apps.catalog.services import book_import, capsule_save
from tests.catalog.measured_statements import CAPSULE_SUBJECT, OTHER_RUN, disagreements
from tests.conftest import MINI_BOOK

K7 = Measurement("78.3", "%", "NVIDIA H200", "2026-12-02", "python -m kernels bench 07_autotuned.cu --problem sgemm")
MS = Measurement("15.760", "ms", "NVIDIA H200", "2026-12-02", "python -m kernels bench 03_smem_tiling.cu")
FIGURES = {"sgemm.k07.pct_cublas": K7, "sgemm.k03.ms": MS}
ENTRY = """
sgemm.k07.pct_cublas:
  value: "78.3"
  unit: "%"
  gpu: "NVIDIA H200"
  date: "2026-12-02"
  command: "python -m kernels bench kernels/reference/07_autotuned.cu --problem sgemm --json"
"""


def render(source: str, measurements=FIGURES):
    return render_markdown(source, figure_url=lambda name: f"/fig/{name}", measurements=measurements)


# The renderer


def test_a_reference_is_filled_in_with_value_and_unit_or_the_bare_number():
    html = render("Kernel 7 reaches {{m:sgemm.k07.pct_cublas}} of cuBLAS in {{m:sgemm.k03.ms}}.").html
    assert "reaches <span" in html and ">78.3%</span> of cuBLAS" in html and ">15.760 ms</span>." in html
    assert 'title="Measured on the NVIDIA H200, 2026-12-02"' in html
    table = render("| kernel | % |\n| --- | --- |\n| 7 | {{m:sgemm.k07.pct_cublas:bare}} |\n").html
    assert ">78.3</span></td>" in table
    assert "{{" not in render("**{{m:sgemm.k07.pct_cublas}}** and _{{m:sgemm.k03.ms}}_").html


def test_the_text_for_search_and_word_counts_and_a_figure_caption_hold_the_value():
    rendered = render(
        "Kernel 7: {{m:sgemm.k07.pct_cublas}}.\n\n![Kernel 7 at {{m:sgemm.k07.pct_cublas}}.](figures/a.svg)\n"
    )
    assert "Kernel 7: 78.3%" in rendered.text
    assert rendered.figures[0].caption == "Kernel 7 at 78.3%."
    assert 'alt="Kernel 7 at 78.3%."' in rendered.html


def test_code_is_never_filled_in_and_an_escaped_reference_stays_text():
    html = render(
        "Write `{{m:sgemm.k07.pct_cublas}}`.\n\n```text\n{{m:sgemm.k07.pct_cublas}}\n```\n\n\\{{m:nope}}\n"
    ).html
    assert "<code>{{m:sgemm.k07.pct_cublas}}</code>" in html
    assert '<code class="language-text">{{m:sgemm.k07.pct_cublas}}\n</code>' in html
    assert "<p>{{m:nope}}</p>" in html and "78.3" not in html


@pytest.mark.parametrize(
    "source", ["Text.\n\n$x = {{m:sgemm.k07.pct_cublas}}$\n", "Text.\n\n$$\n{{m:sgemm.k03.ms}}\n$$\n"]
)
def test_a_reference_in_maths_is_an_error_with_its_line(source):
    with pytest.raises(ContentError, match="inside maths") as error:
        render(source)
    assert error.value.line == 3


def test_an_unknown_key_is_an_error_with_its_line():
    with pytest.raises(ContentError, match="unknown measurement 'sgemm.k99.ms'") as error:
        render("One.\n\nTwo.\n\n| a |\n| --- |\n| {{m:sgemm.k99.ms:bare}} |\n")
    assert error.value.line == 7  # the row's own line
    with pytest.raises(ContentError, match="unknown measurement"):
        render("{{m:sgemm.k07.pct_cublas}}", measurements=None)  # no measurements given: nothing to cite


# The data file


def test_the_file_is_read_in_order_with_every_field_checked_and_a_bad_entry_named_by_line():
    entry = measurements_parse("# comment\n" + ENTRY)["sgemm.k07.pct_cublas"]
    assert (entry.value, entry.unit, entry.gpu, entry.date, entry.source) == (
        "78.3",
        "%",
        "NVIDIA H200",
        "2026-12-02",
        "",
    )
    for broken, message in [
        (ENTRY.replace('"78.3"', '"78.3%"'), "must be one number"),
        (ENTRY.replace('  gpu: "NVIDIA H200"\n', ""), "missing field"),
        (ENTRY.replace('"2026-12-02"', '"Dec 2"'), "YYYY-MM-DD"),
        (ENTRY + '  seen: "yes"\n', "unknown field"),
        (ENTRY + ENTRY, "appears twice"),
        (ENTRY.replace("sgemm.k07.pct_cublas:", "Sgemm K07:"), "lowercase"),
    ]:
        with pytest.raises(MeasurementError, match=message) as error:
            measurements_parse("# comment\n" + broken)
        assert error.value.line in (3, 10), message


def test_a_value_keeps_its_digits_and_the_written_file_reads_back_the_same():
    entries = {"sgemm.k03.ms": MS, "sgemm.k07.pct_cublas": K7}
    text = measurements_dump(entries)
    assert '  value: "15.760"' in text
    assert measurements_parse(text) == entries
    assert measurements_parse(ENTRY.replace('"78.3"', "78.3"))["sgemm.k07.pct_cublas"].value == "78.3"


def test_the_demo_books_figures_are_copied_from_the_judges_record():
    """Every figure sourced from kernels/BENCHMARKS.md is in that file's row of its rung; the file is in the form
    the update tool writes (so a tool run changes only the entry it updates)."""
    folder = Path(settings.DEMO_BOOK_DIR)
    text = (folder / FILE_NAME).read_text()
    entries = measurements_parse(text)
    assert measurements_dump(entries) == text
    benchmarks = (Path(settings.BASE_DIR) / "kernels" / "BENCHMARKS.md").read_text()
    ladder = {m[1]: m[0] for m in re.finditer(r"^\| (\d\d)_\w+ \| `.*$", benchmarks, re.M)}
    columns = {"ms": 4, "tflops": 5, "cublas_ms": 6, "pct_cublas": 7, "pct_roofline": 8}
    checked = 0
    for key, entry in entries.items():
        assert entry.gpu and entry.command and entry.date
        rung = re.match(r"^[sh]gemm\.k(\d\d)\.(\w+)$", key)
        if rung and entry.source == "kernels/BENCHMARKS.md, The ladder":
            cells = [cell.strip() for cell in ladder[rung[1]].split("|")]
            assert cells[columns[rung[2]]].split(" ")[0] == entry.value, key
            assert f"kernels/reference/{cells[1]}.cu" in entry.command, key
            checked += 1
    assert checked == 60


# The import


@pytest.fixture
def book_folder(tmp_path):
    folder = tmp_path / "book"
    shutil.copytree(MINI_BOOK, folder)
    (folder / FILE_NAME).write_text(ENTRY)
    path = folder / "capsules" / "03-locked-three.md"
    text = path.read_text()
    text = text.replace("summary: ", "summary: Kernel 7 at {{m:sgemm.k07.pct_cublas}}. ", 1)
    path.write_text(text + "\nKernel 7 measures {{m:sgemm.k07.pct_cublas}} of cuBLAS.\n")
    return folder


def test_the_import_stores_the_figures_and_renders_the_capsules_that_cite_them(db, book_folder):
    book_import(folder=book_folder)
    book = Book.objects.get()
    assert book.measurements["sgemm.k07.pct_cublas"]["value"] == "78.3"
    capsule = Capsule.objects.get(slug="locked-three")
    assert ">78.3%</span> of cuBLAS" in capsule.body_html and "78.3% of cuBLAS" in capsule.body_text
    assert capsule.summary.startswith("Kernel 7 at 78.3%.")
    assert "{{m:sgemm.k07.pct_cublas}}" in capsule.body  # the source keeps the reference
    capsule.body += "\nAgain: {{m:sgemm.k07.pct_cublas}}.\n"  # an edit in admin renders it the same way
    capsule_save(capsule=capsule)
    assert "Again: 78.3%" in Capsule.objects.get(pk=capsule.pk).body_text


def test_a_new_value_rerenders_only_the_capsules_that_cite_it(db, book_folder):
    book_import(folder=book_folder)
    call_command("measurement_set", "sgemm.k07.pct_cublas", "78.4", book=book_folder, stdout=None)
    report = book_import(folder=book_folder)
    assert report.updated == ["03 locked-three"] and len(report.unchanged) == 2
    assert "78.4% of cuBLAS" in Capsule.objects.get(slug="locked-three").body_text
    assert book_import(folder=book_folder).unchanged == ["01 free-one", "02 locked-two", "03 locked-three"]


def test_an_unknown_key_fails_the_import_with_the_file_and_line_and_changes_nothing(db, book_folder):
    path = book_folder / "capsules" / "01-free-one.md"
    lines = path.read_text().splitlines()
    lines.insert(len(lines) - 1, "Kernel 9 took {{m:sgemm.k09.ms}}.")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFileError) as error:
        book_import(folder=book_folder)
    assert error.value.path == path and error.value.line == len(lines) - 1
    assert "unknown measurement 'sgemm.k09.ms'" in str(error.value)
    assert not Book.objects.exists()
    with pytest.raises(CommandError, match=r"01-free-one\.md:\d+: unknown measurement"):
        call_command("import_book", str(book_folder))


def test_a_bad_entry_of_the_file_fails_the_import_with_its_line(db, book_folder):
    (book_folder / FILE_NAME).write_text("# figures\n" + ENTRY.replace('"78.3"', '"about 78"'))
    with pytest.raises(ImportFileError, match="must be one number") as error:
        read_book(book_folder)
    assert error.value.path == book_folder / FILE_NAME and error.value.line == 3


def test_a_reference_in_a_summary_needs_a_known_key(db, book_folder):
    path = book_folder / "capsules" / "02-locked-two.md"
    path.write_text(path.read_text().replace("summary: A locked", "summary: At {{m:nope.pct}} a locked"))
    with pytest.raises(ImportFileError, match="unknown measurement 'nope.pct'"):
        read_book(book_folder)


# The update tool


def test_measurement_set_updates_one_entry_and_keeps_the_files_header(tmp_path):
    (tmp_path / FILE_NAME).write_text("# Our figures.\n# Second line.\n" + ENTRY)
    call_command("measurement_set", "sgemm.k07.pct_cublas", "78.4", book=tmp_path, date="2026-12-08", stdout=None)
    text = (tmp_path / FILE_NAME).read_text()
    assert text.startswith("# Our figures.\n# Second line.\n\nsgemm.k07.pct_cublas:\n")
    entry = measurements_read(tmp_path)["sgemm.k07.pct_cublas"]
    assert (entry.value, entry.unit, entry.gpu, entry.date) == ("78.4", "%", "NVIDIA H200", "2026-12-08")
    assert entry.command.startswith("python -m kernels bench kernels/reference/07_autotuned.cu")


def test_measurement_set_adds_a_key_only_with_its_unit_gpu_and_command(tmp_path):
    with pytest.raises(CommandError, match="missing field"):
        call_command("measurement_set", "vector_add.plain.ms", "0.94", book=tmp_path, stdout=None)
    assert not (tmp_path / FILE_NAME).exists()
    call_command(
        "measurement_set",
        "vector_add.plain.ms",
        "0.94",
        book=tmp_path,
        unit="ms",
        gpu="NVIDIA H200",
        measured_by="python -m kernels bench example.cu --problem vector_add",
        stdout=None,
    )
    assert measurements_read(tmp_path)["vector_add.plain.ms"].text() == "0.94 ms"
    with pytest.raises(CommandError, match="must be one number"):
        call_command("measurement_set", "vector_add.plain.ms", "fast", book=tmp_path, stdout=None)


# One measurement, one value


def _statements(capsule) -> str:
    return "\n".join([capsule.summary, *capsule.outline, capsule.body])


def test_no_measured_figure_is_stated_anywhere_with_another_value():
    """A number close to a measured subject's figure (kernel 7's 78.3%) but not equal to it is the same
    measurement stated twice with two values (tests/catalog/measured_statements.py says how it is found)."""
    book = read_book(Path(settings.DEMO_BOOK_DIR))
    measured = {key: (entry.value, entry.unit) for key, entry in book.measurements.items()}
    found = []
    for capsule in book.capsules:
        subject = CAPSULE_SUBJECT.get(capsule.number)
        found += disagreements(capsule.path.name, _statements(capsule), measured, subject)
        for figure in capsule.figures:
            labels = " ".join(re.findall(r">([^<]+)<", figure.svg))
            if OTHER_RUN.search(labels):  # a figure of another run (a plan screen) says so in its title
                continue
            found += disagreements(figure.name, labels, measured, subject)
    assert [str(item) for item in found] == []


LADDER = {
    "sgemm.k07.pct_cublas": ("78.3", "%"),
    "sgemm.k07.ms": ("3.463", "ms"),
    "sgemm.k07.tflops": ("39.7", "TFLOP/s"),
    "sgemm.k08.pct_cublas": ("92.6", "%"),
    "sgemm.k03.ms": ("15.760", "ms"),
    "vector_add.plain.ms": ("0.94", "ms"),
}


@pytest.mark.parametrize(
    ("where", "text", "subject", "stated"),
    [
        # capsule 39's table before issue 44, beside capsule 43's 78.3 for the same rung
        ("39", "| 7: autotuned | 127 | 2 | 3.468 | 39.6 | 78.2 |", None, ["3.468", "39.6", "78.2"]),
        ("38", "The book's A6000 figure is 84.8%, ours 78.2%.", "sgemm.k07", ["78.2%"]),
        ("41", "our rung 08 reaches 93.0% of the library", None, ["93.0%"]),
        ("16", "Tiled SGEMM (kernel 3) runs the same FLOPs in 15.75 ms.", None, ["15.75 ms"]),
        ("2", "a straightforward one-element-per-thread kernel takes 0.92 ms", None, ["0.92 ms"]),
    ],
)
def test_the_check_finds_the_errata_of_the_first_edition(where, text, subject, stated):
    assert [item.stated for item in disagreements(where, text, LADDER, subject)] == stated


@pytest.mark.parametrize(
    "text",
    [
        "| 7: autotuned | 127 | 2 | 3.463 | 39.7 | 78.3 |",  # the same figures
        "| 07 | {{m:sgemm.k07.ms:bare}} | {{m:sgemm.k07.pct_cublas:bare}} |",  # references
        "Kernel 7 reaches 78% of cuBLAS with 128 x 128 x 32 tiles and 16.0 KB of shared memory.",  # rounded, other
        "Kernel 3 takes 15.76 ms.",  # 15.760 to two places
        "Kernel 7 and kernel 8: 78.2 and 92.7.",  # two subjects named: attributed to neither
        "The book's A6000 figure for kernel 8 is 93.7%.",  # a quoted figure of another GPU, listed in the checker
        "```text\nkernel 7: 78.2%\n```",  # code is not a statement
    ],
)
def test_the_check_leaves_right_rounded_and_unattributed_numbers_alone(text):
    assert disagreements("x", text, LADDER) == []

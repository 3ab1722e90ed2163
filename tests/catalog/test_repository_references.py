"""The book is self-contained (issue 44, second edition): its text names no file, command, document or issue of the
repository that the site is built from. A reader cannot open `kernels/BENCHMARKS.md`, run `python -m kernels` or
read a rung's header comment; what they should open is a page of the site (a rung's page, /rungs/<problem>/<step>/,
a capsule). C++ headers such as `cuda_bf16.h` are API names, not repository references, and other projects'
repositories (CUTLASS's, KernelBench's) are citations.

The book is read from its files (no import, no database), so these run in the quick loop."""

import html
import re
from pathlib import Path

import pytest
from django.conf import settings

from apps.catalog.content_files import read_book
from apps.submissions import rungs

KERNELS = Path(settings.BASE_DIR) / "kernels"
RUNG_PROBLEMS = sorted({rung.problem for rung in rungs.rungs_all()})
# Every file of the judge library by name (rungs, scripts, problem definitions, READMEs), however it is cited.
REPOSITORY_FILES = sorted(
    {path.name for path in KERNELS.rglob("*") if path.is_file() and "__pycache__" not in path.parts},
    key=len,
    reverse=True,
)

# What counts as a repository reference, by kind. Each is checked against examples below, so none is vacuous.
REPOSITORY_REFERENCES = {
    "a path of the repository": (
        r"(?<![\w.-])(?:kernels|apps|tests|content|templates|config|bench|static|docker)/[\w.<>-]"
    ),
    "the benchmarks document": r"\bBENCHMARKS\b",
    "a README of the repository": r"\bREADME\.md\b",
    "an issue of the project": (
        r"\b(?:[Tt]he|[Tt]his|[Oo]ur|[Ss]ee|[Ii]n|[Bb]y)\s+issue(?:'s\b|\s+#?\d+\b)|\([Ii]ssue #?\d+\)|\b[Ii]ssue #\d+"
    ),
    "the judge's command line": r"\bpython3? -m kernels\b",
    "a file of the judge library": r"(?<![\w-])(?:" + "|".join(map(re.escape, REPOSITORY_FILES)) + r")(?![\w-])",
    "a rung named by its folder": r"\b(?:" + "|".join(RUNG_PROBLEMS) + r")/\d\d(?![\d])",
    "the repository itself": (
        r"\b(?:[Oo]ur|[Tt]his|[Tt]he book's|[Tt]he platform's|[Tt]he site's|[Tt]he project's) "
        r"(?:repo|repository|source tree|code ?base)\b"
    ),
    "a rung's header comment": (
        r"\b(?:[Rr]ung(?: \d+)?'s|[Ii]ts|[Tt]he file|[Tt]he) header\b(?![-\w])|\bheader of (?:the )?rung\b"
    ),
}
PATTERNS = {kind: re.compile(pattern) for kind, pattern in REPOSITORY_REFERENCES.items()}
RUNG_LINK = re.compile(r"\]\((/rungs/([\w-]+)/([\w-]+)/)\)")


@pytest.fixture(scope="module")
def book():
    return read_book(Path(settings.DEMO_BOOK_DIR))


def _texts(book):
    """Everything of the book a reader reads: the book's own words, each capsule's summary, outline, body (captions
    and footnotes included), figures and exercise."""
    yield "book.yaml", "\n".join([book.title, book.subtitle, book.blurb, book.ereader_pitch, book.paywall_pitch])
    for part in book.parts:
        yield f"book.yaml, part {part.number}", f"{part.title}\n{part.description}"
    for capsule in book.capsules:
        where = capsule.path.name
        yield where, "\n".join([capsule.title, capsule.summary, *capsule.outline, capsule.body])
        for figure in capsule.figures:  # the words drawn in a figure: its title, description and labels
            yield f"{where}, {figure.name}", html.unescape(re.sub(r"<[^>]*>", "\n", figure.svg))
        if capsule.exercise is not None:
            yield f"{where}, exercise", f"{capsule.exercise.title}\n{capsule.exercise.statement}"


SITE_LINK_TARGET = re.compile(r"\]\(/[^)\s]*\)")  # [rung 07](/rungs/sgemm/07_autotuned/): an address of the site


def repository_references(text: str) -> list[tuple[str, str]]:
    text = SITE_LINK_TARGET.sub("]()", text)
    return [(kind, match[0]) for kind, pattern in PATTERNS.items() for match in pattern.finditer(text)]


def test_the_book_has_no_repository_references(book):
    found = [
        f"{where}, line {text[: text.find(match)].count(chr(10)) + 1}: {kind}: {match!r}"
        for where, text in _texts(book)
        for kind, match in repository_references(text)
    ]
    assert len(found) == 0, "\n".join(found)


@pytest.mark.parametrize(
    "sentence, kind",
    [
        ("the ladder run (kernels/BENCHMARKS.md, H200)", "a path of the repository"),
        ("The plan screens of BENCHMARKS.md show it", "the benchmarks document"),
        ('Then, in order (kernels/README.md, "What a GPU run does")', "a README of the repository"),
        ("the issue's target of 95% is not met", "an issue of the project"),
        ("a race fixed since (issue 29)", "an issue of the project"),
        ("python -m kernels bench my_kernel.cu --problem sgemm", "the judge's command line"),
        ("The starter is `03_warp_specialized.cu`.", "a file of the judge library"),
        ("the library's version of our `autotune.py`", "a file of the judge library"),
        ("the problem's `example.cu`, already a WMMA GEMM", "a file of the judge library"),
        ("(`bf16_gemm/04`), all measured", "a rung named by its folder"),
        ("as our repository's tests show", "the repository itself"),
        ("The rung's header predicted 85 to 90%", "a rung's header comment"),
        ("Rung 12's header had predicted 60 to 70%", "a rung's header comment"),
        ("The header of rung 11 predicted 3x", "a rung's header comment"),
    ],
)
def test_each_kind_of_reference_is_caught(sentence, kind):
    assert kind in {found for found, _ in repository_references(sentence)}


@pytest.mark.parametrize(
    "sentence",
    [
        "An SM can issue 128 FMAs per clock; the warps issue 16-byte `cp.async` copies",
        "`cuda_bf16.h` and `mma.h` are the headers the judge allows; packet headers and flow control",
        "nvcc -arch=sm_90 -Xptxas -v kernel.cu; compute-sanitizer python repro.py",
        "CUTLASS is a header-only C++ template library; the NVIDIA/cutlass repository's examples",
        "The kernel's page, [rung 01](/rungs/sgemm/01_naive/), shows its figures",
    ],
)
def test_the_books_own_words_are_not_references(sentence):
    assert repository_references(sentence) == []


def test_every_rung_the_book_links_to_has_a_page(book):
    linked = {(m[2], m[3]) for capsule in book.capsules for m in RUNG_LINK.finditer(capsule.body)}
    assert len(linked) >= 20  # the rungs a capsule discusses are links, not file names
    missing = sorted(f"{problem}/{step}" for problem, step in linked if rungs.rung_get(problem, step) is None)
    assert missing == []


def test_the_rung_pages_notes_name_nothing_of_the_repository():
    # A rung's page shows its header comment as prose ("what it changes", what it measured): the same rule holds
    # there. Commands for whoever works in the repository stay in the source listing, out of the notes. The Triton
    # rungs' pages show their docstrings so (issue 46).
    assert rungs.triton_rungs()
    found = [
        (str(rung), kind, match)
        for rung in rungs.every_rung()
        for note in [rung.title, *rung.notes]
        for kind, match in repository_references(note)
    ]
    assert found == []

"""The reference ladder as the site shows it: one page per rung of kernels/reference (its source, what it changes
from the rung before, what it measured). This module reads the rung files; who may open a rung's page is the
capsule that teaches it (selectors.rung_capsule), and its figures are the stored ReferenceResults.

A rung is named in URLs by its problem and its file's stem: /rungs/sgemm/07_autotuned/, /rungs/attention/03_fa2/.
The GEMM rungs share one folder (01-09 sgemm, 10-13 hgemm): the rung before 10 is 09.

The Triton rungs (kernels/reference/<problem>/triton_NN_*.py, issue 46) are rungs a reader can read too, with pages
of their own (/rungs/softmax/triton_01_rows/), but they climb no CUDA ladder: each problem's Triton rungs are a
sequence of their own ("Triton rung 01"), and their header is the file's docstring, not `//` comments.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from django.urls import reverse

# "// Step 07 - autotuned block and thread tiles." -> "autotuned block and thread tiles."; a Triton rung's docstring
# opens "Triton 01 - ..." the same way.
_STEP_PREFIX = re.compile(r"^(?:Step|Triton)\s+\d+\s*[-–:]\s*")
# A header line that opens a paragraph of its own: "Change versus 06:", "Prediction:", "Plan:", "AUTOTUNE-RESULT:".
_LABELLED = re.compile(r"^[A-Z][^.:]{0,60}:\s")
# A header line that is a command for whoever works in the repository ("python -m kernels bench FILE ..."): code,
# shown in the source listing, not prose for the reader's notes.
_COMMAND = re.compile(r"^python3?\s+-m\s")
TRITON_PREFIX = "triton_"  # triton_01_rows.py: the Triton rungs' file names
LANGUAGES = {"cuda": "CUDA C++", "triton": "Triton"}  # how a page names a rung's language


@dataclass(frozen=True)
class Rung:
    problem: str  # the judge's problem: sgemm, hgemm, attention, ...
    path: Path

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def filename(self) -> str:
        return self.path.name

    @property
    def language(self) -> str:
        """ "triton" for a Triton rung (a .py file of @triton.jit kernels), else "cuda"."""
        return "triton" if self.path.suffix == ".py" else "cuda"

    @property
    def is_triton(self) -> bool:
        return self.language == "triton"

    @property
    def language_name(self) -> str:
        return LANGUAGES[self.language]

    @property
    def number(self) -> int:
        """Its place in its own sequence: 07 on the CUDA ladder, 01 among the problem's Triton rungs."""
        return int(self.stem.removeprefix(TRITON_PREFIX)[:2])

    @property
    def label(self) -> str:
        """How pages name it: "rung 07", or "Triton rung 01" (the Triton rungs do not share the ladder's numbers)."""
        return f"{'Triton rung' if self.is_triton else 'rung'} {self.number:02d}"

    @property
    def ref(self) -> str:
        """As an exercise's `reference:` names it, less "reference/": "02_coalesced.cu", "transpose/02_smem_tile.cu"."""
        return self.path.relative_to(_reference_dir()).as_posix()

    @property
    def folder(self) -> str:
        """The ladder it climbs: "gemm" for the shared GEMM folder, else the problem's folder; a Triton rung's
        sequence is its folder's Triton rungs ("softmax:triton")."""
        parent = self.path.parent.relative_to(_reference_dir()).as_posix()
        folder = "gemm" if parent == "." else parent
        return f"{folder}:triton" if self.is_triton else folder

    @property
    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @property
    def highlighted(self) -> list[tuple[int, str]]:
        """(line number, highlighted line) pairs, coloured as the book's code blocks are in the rung's language."""
        from django.utils.safestring import mark_safe

        from apps.catalog.markdown import highlight_lines

        lexer = "python" if self.is_triton else "cuda"
        return [(n, mark_safe(line)) for n, line in enumerate(highlight_lines(self.source, lexer), start=1)]

    @property
    def header(self) -> list[str]:
        """The file's opening comment, a line per line, without the `//`; a Triton rung's docstring (blank lines
        kept: they end its paragraphs)."""
        if self.is_triton:
            docstring = ast.get_docstring(ast.parse(self.source)) or ""
            return [line.strip() for line in docstring.splitlines()]
        lines = []
        for line in self.source.splitlines():
            if not line.startswith("//"):
                break
            lines.append(line[2:].strip())
        return lines

    @property
    def title(self) -> str:
        """The header's first line, without "Step NN - "."""
        header = self.header
        return _STEP_PREFIX.sub("", header[0]) if header else self.stem

    @property
    def notes(self) -> list[str]:
        """The rest of the header in paragraphs: what changed versus the rung before, the plan, the prediction,
        what was measured, each where the author labelled it."""
        paragraphs: list[list[str]] = []
        blank = False
        for line in self.header[1:]:
            if not line:
                blank = self.is_triton  # a docstring's paragraph ends at a blank line; a CUDA header's at a label
                continue
            if _COMMAND.match(line):
                continue
            if not paragraphs or _LABELLED.match(line) or blank:
                paragraphs.append([])
            blank = False
            paragraphs[-1].append(line)
        return [" ".join(words) for words in paragraphs]

    def get_absolute_url(self) -> str:
        return reverse("submissions:rung", args=[self.problem, self.stem])

    def __str__(self) -> str:
        return f"{self.problem} {self.stem}"


def _reference_dir() -> Path:
    from kernels.tools.ladder import REFERENCE_DIR

    return REFERENCE_DIR.resolve()


@functools.cache
def rungs_all() -> tuple[Rung, ...]:
    """Every rung of the CUDA ladder, in ladder order: the GEMM folder, then each problem's folder
    (kernels.tools.ladder.LADDER)."""
    from kernels.tools.ladder import LADDER, problem_of

    return tuple(Rung(problem=problem_of(path), path=path.resolve()) for path in LADDER)


@functools.cache
def triton_rungs() -> tuple[Rung, ...]:
    """Every Triton rung, by problem folder then number (kernels.tools.ladder.TRITON_RUNGS)."""
    from kernels.tools.ladder import TRITON_RUNGS, problem_of

    return tuple(Rung(problem=problem_of(path), path=path.resolve()) for path in TRITON_RUNGS)


def every_rung() -> tuple[Rung, ...]:
    """The CUDA ladder, then the Triton rungs: every rung with a page."""
    return rungs_all() + triton_rungs()


def rungs_to_measure(steps: list[str] | None = None) -> list[Rung]:
    """The rungs the reference ladder's measurement judges (services.reference_ladder_measure): every rung with a
    page, the Triton rungs included, so that each page has figures to read; or those `steps` names, each by file name
    ("01_naive.cu": that file in every problem's folder), stem, ladder step ("softmax/triton_01_rows") or reference
    ("softmax/triton_01_rows.py")."""
    rungs = list(every_rung())
    if not steps:
        return rungs
    named = set(steps)
    return [r for r in rungs if named & {r.filename, r.stem, r.ref, r.ref.removesuffix(r.path.suffix)}]


def rung_get(problem: str, stem: str) -> Rung | None:
    """The rung a URL names; None for anything else (no file is opened from what the URL says)."""
    return next((r for r in every_rung() if r.problem == problem and r.stem == stem), None)


def rung_named(problem: str, name: str) -> Rung | None:
    """The rung an exercise names: its `reference` ("02_coalesced.cu", "transpose/03_eight_per_thread.cu",
    "bf16_gemm/triton_01_tiled_dot.py") or its starter's file name, for the exercise's problem."""
    file = name.rsplit("/", 1)[-1]
    if file.endswith(".cu"):
        return rung_get(problem, file.removesuffix(".cu"))
    if file.startswith(TRITON_PREFIX) and file.endswith(".py"):
        return rung_get(problem, file.removesuffix(".py"))
    return None


def rungs_of(rung: Rung) -> list[Rung]:
    """The ladder `rung` belongs to, in order (a Triton rung: its problem's Triton rungs)."""
    return [r for r in every_rung() if r.folder == rung.folder]


def rungs_beside(rung: Rung) -> list[Rung]:
    """The same problem's rungs in the other language: a CUDA rung's Triton counterparts, a Triton rung's CUDA
    ladder (for the GEMM folder, the rungs of the rung's own problem)."""
    return [r for r in every_rung() if r.problem == rung.problem and r.is_triton != rung.is_triton]


def rung_neighbours(rung: Rung) -> tuple[Rung | None, Rung | None]:
    """The rungs before and after it on its ladder."""
    ladder = rungs_of(rung)
    at = ladder.index(rung)
    return (ladder[at - 1] if at else None, ladder[at + 1] if at + 1 < len(ladder) else None)


@dataclass(frozen=True)
class RungPage:
    """templates/submissions/rung.html: a rung with what it changed and what it measured."""

    rung: Rung
    previous: Rung | None
    next: Rung | None
    ladder: list[Rung]
    beside: list[Rung]  # the same problem's rungs in the other language (rungs_beside)
    diff: object | None  # apps.submissions.diff.SourceDiff against the previous rung
    results: list  # ReferenceResult, one per GPU kind
    measure: object  # selectors.Measure of the rung's problem


def rung_page(rung: Rung) -> RungPage:
    from apps.submissions import selectors
    from apps.submissions.diff import source_diff

    previous, following = rung_neighbours(rung)
    return RungPage(
        rung=rung,
        previous=previous,
        next=following,
        ladder=rungs_of(rung),
        beside=rungs_beside(rung),
        diff=source_diff(previous.source, rung.source) if previous else None,
        results=selectors.rung_results(rung),
        measure=selectors.problem_measure(rung.problem),
    )

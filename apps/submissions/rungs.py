"""The reference ladder as the site shows it: one page per rung of kernels/reference (its source, what it changes
from the rung before, what it measured). This module reads the rung files; who may open a rung's page is the
capsule that teaches it (selectors.rung_capsule), and its figures are the stored ReferenceResults.

A rung is named in URLs by its problem and its file's stem: /rungs/sgemm/07_autotuned/, /rungs/attention/03_fa2/.
The GEMM rungs share one folder (01-09 sgemm, 10-13 hgemm): the rung before 10 is 09.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from django.urls import reverse

# "// Step 07 - autotuned block and thread tiles." -> "autotuned block and thread tiles."
_STEP_PREFIX = re.compile(r"^Step\s+\d+\s*[-–:]\s*")
# A header line that opens a paragraph of its own: "Change versus 06:", "Prediction:", "Plan:", "AUTOTUNE-RESULT:".
_LABELLED = re.compile(r"^[A-Z][^.:]{0,60}:\s")
# A header line that is a command for whoever works in the repository ("python -m kernels bench FILE ..."): code,
# shown in the source listing, not prose for the reader's notes.
_COMMAND = re.compile(r"^python3?\s+-m\s")


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
    def number(self) -> int:
        return int(self.stem[:2])

    @property
    def ref(self) -> str:
        """As an exercise's `reference:` names it, less "reference/": "02_coalesced.cu", "transpose/02_smem_tile.cu"."""
        return self.path.relative_to(_reference_dir()).as_posix()

    @property
    def folder(self) -> str:
        """The ladder it climbs: "gemm" for the shared GEMM folder, else the problem's folder."""
        parent = self.path.parent.relative_to(_reference_dir()).as_posix()
        return "gemm" if parent == "." else parent

    @property
    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @property
    def header(self) -> list[str]:
        """The file's opening comment, a line per line, without the `//`."""
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
        for line in self.header[1:]:
            if not line or _COMMAND.match(line):
                continue
            if not paragraphs or _LABELLED.match(line):
                paragraphs.append([])
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
    """Every rung, in ladder order: the GEMM folder, then each problem's folder (kernels.tools.ladder.LADDER)."""
    from kernels.tools.ladder import LADDER, problem_of

    return tuple(Rung(problem=problem_of(path), path=path.resolve()) for path in LADDER)


def rung_get(problem: str, stem: str) -> Rung | None:
    """The rung a URL names; None for anything else (no file is opened from what the URL says)."""
    return next((r for r in rungs_all() if r.problem == problem and r.stem == stem), None)


def rung_named(problem: str, name: str) -> Rung | None:
    """The rung an exercise names: its `reference` ("02_coalesced.cu", "transpose/03_eight_per_thread.cu") or its
    starter's file name, for the exercise's problem."""
    if not name.endswith(".cu"):
        return None
    return rung_get(problem, name.rsplit("/", 1)[-1].removesuffix(".cu"))


def rungs_of(rung: Rung) -> list[Rung]:
    """The ladder `rung` belongs to, in order."""
    return [r for r in rungs_all() if r.folder == rung.folder]


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
        diff=source_diff(previous.source, rung.source) if previous else None,
        results=selectors.rung_results(rung),
        measure=selectors.problem_measure(rung.problem),
    )

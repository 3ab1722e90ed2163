"""Reading the book from content/ (see content/README.md) into plain, validated dataclasses.

Everything is parsed and checked before the database is touched, so a broken file fails the
whole import with its path and line, and changes nothing.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from apps.catalog.markdown import MEASUREMENT_REFERENCE, ContentError, render_markdown
from apps.catalog.measurements import FILE_NAME as MEASUREMENTS_FILE
from apps.catalog.measurements import Measurement, MeasurementError, measurements_read

FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<yaml>.*?\n)---[ \t]*\n", re.S)
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
BOOK_FIELDS = ("slug", "title", "author")
CAPSULE_FIELDS = ("number", "slug", "title", "part", "access", "summary")
# Every key a capsule's front matter may have: anything else (a typo such as `darft: true`) fails the import.
# `minutes` is the one retired key: reading time is computed from the text, and a stated one is ignored (the
# import lists the files that still carry it, so that authors remove it).
CAPSULE_KEYS = set(CAPSULE_FIELDS) | {"badge", "outline", "exercise", "draft", "minutes"}
RETIRED_CAPSULE_KEYS = {"minutes"}
BOOK_KEYS = set(BOOK_FIELDS) | {
    "parts",
    "subtitle",
    "blurb",
    "publisher",
    "level",
    "language",
    "ereader_pitch",
    "paywall_pitch",
}
MAX_SVG_BYTES = 200_000
SVG_FORBIDDEN = re.compile(r"<script|<foreignObject|\son[a-z]+\s*=|(?:xlink:)?href\s*=\s*[\"'](?!#)", re.I)


class ImportFileError(Exception):
    """A content file is invalid. Renders as `path:line: message`."""

    def __init__(self, path: Path, message: str, line: int | None = None):
        self.path, self.message, self.line = path, message, line
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass
class PartData:
    number: int
    slug: str
    title: str
    description: str


@dataclass
class FigureData:
    name: str
    number: int
    caption: str
    svg: str


@dataclass
class ExerciseData:
    """An exercise attached to the capsule (front matter `exercise:`; content/README.md)."""

    problem: str
    title: str
    statement: str
    starter_source: str
    starter_name: str
    reference_step: str  # a file name of kernels/reference, or "" where the book has no kernel for the step
    arch: str
    gpu_time_limit_s: int
    is_open: bool


@dataclass
class CapsuleData:
    path: Path
    number: int
    slug: str
    title: str
    part: int
    badge: str
    access: str
    draft: bool
    summary: str
    outline: list[str]
    body: str
    figures: list[FigureData] = field(default_factory=list)
    exercise: ExerciseData | None = None
    # Front-matter keys that are read no more (RETIRED_CAPSULE_KEYS), for the import's report.
    retired_keys: list[str] = field(default_factory=list)


@dataclass
class BookData:
    slug: str
    title: str
    subtitle: str
    blurb: str
    publisher: str
    level: str
    author: str
    language: str
    ereader_pitch: str
    paywall_pitch: str
    parts: list[PartData]
    capsules: list[CapsuleData]
    # measurements.yaml: the measured figures the capsules cite as {{m:KEY}} (apps.catalog.measurements)
    measurements: dict[str, Measurement] = field(default_factory=dict)


def _load_yaml(path: Path, text: str, line_offset: int = 0):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 + line_offset if mark else None
        problem = getattr(error, "problem", None) or str(error)
        raise ImportFileError(path, f"invalid YAML: {problem}", line) from error


def _require(path: Path, data: dict, names, line: int | None = 1):
    if not isinstance(data, dict):
        raise ImportFileError(path, "expected a mapping of fields", line)
    missing = [name for name in names if data.get(name) in (None, "")]
    if missing:
        raise ImportFileError(path, f"missing required field(s): {', '.join(missing)}", line)


def _int(path: Path, data: dict, name: str, line: int = 1) -> int:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ImportFileError(path, f"{name} must be a non-negative whole number, got {value!r}", line)
    return value


def _read_book_yaml(folder: Path) -> dict:
    path = folder / "book.yaml"
    if not path.is_file():
        raise ImportFileError(path, "missing: every book folder has a book.yaml")
    data = _load_yaml(path, path.read_text(encoding="utf-8"))
    _require(path, data, BOOK_FIELDS + ("parts",))
    unknown = sorted(set(data) - BOOK_KEYS)
    if unknown:
        # figure_count is gone: the site counts the figures of the imported capsules.
        raise ImportFileError(path, f"unknown field(s): {', '.join(unknown)} (content/README.md lists the fields)")
    if not SLUG.match(str(data["slug"])):
        raise ImportFileError(path, f"slug {data['slug']!r} must be lowercase letters, digits and hyphens")
    return data


def _read_parts(path: Path, raw_parts) -> list[PartData]:
    if not isinstance(raw_parts, list) or not raw_parts:
        raise ImportFileError(path, "parts must be a non-empty list")
    parts, seen = [], set()
    for raw in raw_parts:
        _require(path, raw, ("slug", "title"))
        number = _int(path, raw, "number")
        if number in seen:
            raise ImportFileError(path, f"part number {number} appears twice")
        seen.add(number)
        parts.append(
            PartData(
                number=number,
                slug=str(raw["slug"]),
                title=str(raw["title"]),
                description=str(raw.get("description") or ""),
            )
        )
    return parts


def _read_measurements(folder: Path) -> dict[str, Measurement]:
    try:
        return measurements_read(folder)
    except MeasurementError as error:
        raise ImportFileError(folder / MEASUREMENTS_FILE, error.message, error.line) from error


def _fill_plain(path: Path, text: str, measurements: dict[str, Measurement], line: int) -> str:
    """Measurement references in plain front-matter text (summary, outline), which is never rendered as Markdown."""

    def value(match):
        if match["key"] not in measurements:
            raise ImportFileError(path, f"unknown measurement {match['key']!r}: not a key of measurements.yaml", line)
        return measurements[match["key"]].text(bare=bool(match["bare"]))

    return MEASUREMENT_REFERENCE.sub(value, text)


def _read_capsule(
    path: Path, part_numbers: set[int], figures_folder: Path, measurements: dict[str, Measurement] | None = None
) -> CapsuleData:
    measurements = measurements or {}
    text = path.read_text(encoding="utf-8")
    _refuse_control_characters(path, text)
    match = FRONT_MATTER.match(text)
    if not match:
        raise ImportFileError(path, "must start with YAML front matter between '---' lines", 1)
    meta = _load_yaml(path, match.group("yaml"), line_offset=1)
    _require(path, meta, CAPSULE_FIELDS, line=2)
    unknown = sorted(set(meta) - CAPSULE_KEYS)
    if unknown:
        raise ImportFileError(path, f"unknown front-matter field(s): {', '.join(unknown)}", 2)
    draft = meta.get("draft", False)
    if not isinstance(draft, bool):
        raise ImportFileError(path, f"draft must be true or false, got {draft!r}", 2)
    body_first_line = match.group(0).count("\n") + 1
    number, part = _int(path, meta, "number", 2), _int(path, meta, "part", 2)
    if part not in part_numbers:
        raise ImportFileError(path, f"part {part} is not a part of book.yaml", 2)
    if meta["access"] not in ("free", "locked"):
        raise ImportFileError(path, f"access must be 'free' or 'locked', got {meta['access']!r}", 2)
    if not SLUG.match(str(meta["slug"])):
        raise ImportFileError(path, f"slug {meta['slug']!r} must be lowercase letters, digits and hyphens", 2)
    outline = meta.get("outline") or []
    if not isinstance(outline, list) or not all(isinstance(item, str) for item in outline):
        raise ImportFileError(path, "outline must be a list of section titles", 2)

    body = text[match.end() :]
    try:
        # A dry render: figure URLs do not matter here, only that the Markdown renders.
        rendered = render_markdown(body, figure_url=lambda name: name, measurements=measurements)
    except ContentError as error:
        line = error.line + body_first_line - 1 if error.line else None
        raise ImportFileError(path, error.message, line) from error
    figures = [
        FigureData(
            name=ref.name,
            number=ref.number,
            caption=ref.caption,
            svg=_read_svg(path, figures_folder / ref.name, ref.line + body_first_line - 1),
        )
        for ref in rendered.figures
    ]
    return CapsuleData(
        path=path,
        number=number,
        slug=str(meta["slug"]),
        title=str(meta["title"]),
        part=part,
        badge=str(meta.get("badge") or ""),
        access=meta["access"],
        draft=draft,
        summary=_fill_plain(path, " ".join(str(meta["summary"]).split()), measurements, 2),
        outline=[_fill_plain(path, item, measurements, 2) for item in outline],
        body=body,
        figures=figures,
        exercise=_read_exercise(path, meta.get("exercise"), figures_folder.parent)
        if meta.get("exercise") is not None
        else None,
        retired_keys=sorted(RETIRED_CAPSULE_KEYS & set(meta)),
    )


EXERCISE_FIELDS = ("problem", "title", "statement", "starter")
MAX_GPU_TIME_LIMIT_S = 600


def _read_exercise(path: Path, raw, book_folder: Path) -> ExerciseData:
    """Validated like the rest of the file: a bad problem, starter or limit fails the import here."""
    from kernels import available_problems
    from kernels.compiler import SUPPORTED_ARCHS
    from kernels.plan import PlanError, extract_plan

    _require(path, raw, EXERCISE_FIELDS, line=2)
    where = "exercise"
    problem = str(raw["problem"])
    if problem not in available_problems():
        raise ImportFileError(path, f"{where}: problem {problem!r} is not one of {', '.join(available_problems())}", 2)
    arch = str(raw.get("arch") or "sm_90")
    if arch not in SUPPORTED_ARCHS:
        raise ImportFileError(path, f"{where}: arch {arch!r} is not one of {', '.join(SUPPORTED_ARCHS)}", 2)
    limit = raw.get("gpu_time_limit_s", 120)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_GPU_TIME_LIMIT_S:
        raise ImportFileError(
            path, f"{where}: gpu_time_limit_s must be a whole number of seconds from 1 to {MAX_GPU_TIME_LIMIT_S}", 2
        )
    is_open = raw.get("open", True)
    if not isinstance(is_open, bool):
        raise ImportFileError(path, f"{where}: open must be true or false", 2)
    starter_path = _starter_path(path, str(raw["starter"]), problem, book_folder)
    starter = starter_path.read_text(encoding="utf-8")
    try:
        extract_plan(starter)
    except PlanError as error:
        raise ImportFileError(
            path, f"{where}: the starter {starter_path.name} has no valid launch plan: {error}", 2
        ) from error
    reference = str(raw.get("reference") or "")
    if reference:
        if not reference.startswith("reference/"):
            raise ImportFileError(
                path,
                f"{where}: reference {reference!r} must name a rung of the ladder, e.g. reference/08_warptiling.cu",
                2,
            )
        _starter_path(path, reference, problem, book_folder, field="reference", suffixes=(".cu", ".py"))
    return ExerciseData(
        problem=problem,
        title=str(raw["title"]),
        statement=str(raw["statement"]).strip() + "\n",
        starter_source=starter,
        starter_name=starter_path.name,
        reference_step=reference.removeprefix("reference/"),
        arch=arch,
        gpu_time_limit_s=limit,
        is_open=is_open,
    )


def _starter_path(
    path: Path, starter: str, problem: str, book_folder: Path, field: str = "starter", suffixes: tuple = (".cu",)
) -> Path:
    """`reference/NN_name.cu` is a rung of the judge's ladder (kernels/reference), `example` the problem's
    example.cu, anything else a file inside the book folder. A `reference` may also be a Triton rung,
    `reference/<problem>/triton_NN_name.py` (issue 46: the book's kernel for a step written in Triton); a starter is
    CUDA (the editor's Triton text is the problem's own Triton starter)."""
    import kernels

    library = Path(kernels.__file__).parent
    if starter == "example":
        candidate, root = library / "problems" / problem / "example.cu", library / "problems"
    elif starter.startswith("reference/"):
        candidate, root = library / starter, library / "reference"
    else:
        candidate, root = book_folder / starter, book_folder
    candidate = candidate.resolve()
    if not candidate.is_relative_to(root.resolve()) or candidate.suffix not in suffixes:
        kinds = " or ".join(suffixes)
        raise ImportFileError(path, f"exercise: {field} {starter!r} must be a {kinds} file inside {root.name}/", 2)
    if candidate.suffix == ".py" and not candidate.name.startswith("triton_"):
        raise ImportFileError(path, f"exercise: {field} {starter!r}: a Triton rung's name is triton_NN_name.py", 2)
    if not candidate.is_file():
        raise ImportFileError(path, f"exercise: {field} file not found: {starter}", 2)
    return candidate


# Characters that no XML document may hold (the EPUB is XHTML): a LaTeX "\approx" written through a Python string
# once became BEL + "pprox" and broke the EPUB build. Tabs and line ends are fine.
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _refuse_control_characters(path: Path, text: str) -> None:
    bad = CONTROL_CHARACTERS.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise ImportFileError(path, f"holds the control character U+{ord(bad.group()):04X}", line)


def _read_svg(capsule_path: Path, path: Path, line: int) -> str:
    if not path.is_file():
        raise ImportFileError(capsule_path, f"figure file not found: {path}", line)
    data = path.read_bytes()
    if len(data) > MAX_SVG_BYTES:
        raise ImportFileError(path, f"figure is {len(data)} bytes; the limit is {MAX_SVG_BYTES}")
    svg = data.decode("utf-8")
    _refuse_control_characters(path, svg)
    if "<svg" not in svg:
        raise ImportFileError(path, "not an SVG file")
    bad = SVG_FORBIDDEN.search(svg)
    if bad:
        line_no = svg.count("\n", 0, bad.start()) + 1
        raise ImportFileError(
            path,
            f"SVG may not contain script, event attributes, foreignObject or external links ({bad.group(0).strip()!r})",
            line_no,
        )
    return svg


def read_book(folder: Path) -> BookData:
    folder = Path(folder)
    if not folder.is_dir():
        raise ImportFileError(folder, "not a folder")
    meta = _read_book_yaml(folder)
    parts = _read_parts(folder / "book.yaml", meta["parts"])
    part_numbers = {part.number for part in parts}
    measurements = _read_measurements(folder)
    capsules = [
        _read_capsule(path, part_numbers, folder / "figures", measurements)
        for path in sorted((folder / "capsules").glob("*.md"))
    ]
    if not capsules:
        raise ImportFileError(folder / "capsules", "no capsule files (*.md) found")
    for attribute in ("number", "slug"):
        seen: dict = {}
        for capsule in capsules:
            value = getattr(capsule, attribute)
            if value in seen:
                raise ImportFileError(capsule.path, f"{attribute} {value!r} is also used by {seen[value].name}", 2)
            seen[value] = capsule.path
    return BookData(
        slug=str(meta["slug"]),
        title=str(meta["title"]),
        subtitle=str(meta.get("subtitle") or ""),
        blurb=str(meta.get("blurb") or ""),
        publisher=str(meta.get("publisher") or ""),
        level=str(meta.get("level") or ""),
        author=str(meta["author"]),
        language=str(meta.get("language") or "en"),
        ereader_pitch=str(meta.get("ereader_pitch") or ""),
        paywall_pitch=str(meta.get("paywall_pitch") or ""),
        parts=parts,
        capsules=sorted(capsules, key=lambda c: c.number),
        measurements=measurements,
    )

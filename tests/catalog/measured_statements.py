"""Finding a measurement stated with two values (issue 44): the checker behind tests/catalog/test_measurements.py.

A measured figure is cited as `{{m:KEY}}` (content/README.md, "Measured figures"), which cannot disagree with
itself; the errata came from figures typed by hand: kernel 7 at 78.2% in one capsule and 78.3% in another,
kernel 3 at 15.75 and 15.760 ms. So every literal number the book states next to the label of a measured
subject (kernel 7, the plain vector-add kernel) must not lie close to one of that subject's measured values
without being equal to it: within a few percent is a second statement of the same measurement, a value far away
is another quantity (a tile size, another kernel's figure).

Where a number belongs to a subject: a sentence or table row naming exactly one subject belongs to it; one naming
none belongs to the capsule's own subject (capsule 38 is kernel 7, so "the winner measures 3.468 ms" there is
kernel 7's time); one naming several is not attributed (a figure's list of every kernel's value).
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

# Within this relative distance, a literal number is the same measurement stated again.
CLOSE = Decimal("0.025")
RUNG_WORDS = r"(?:[Kk]ernel|[Rr]ung|[Ss]tep)s?"


def rung_label(number: int) -> str:
    """Kernel 7, rung 07, step 07 in prose; a table row whose first cell is 7, 07, "7: autotuned" or 07_autotuned."""
    n = rf"0?{number}"
    return rf"\b{RUNG_WORDS} {n}\b(?![.,]\d)|^\| *(?:{RUNG_WORDS} )?{n}(?:[:_ ][^|]*)?\|"


# The measured subjects, by the prefix of their keys in measurements.yaml, and the words that name them.
LABELS: dict[str, str] = {
    **{f"sgemm.k{n:02d}": rung_label(n) for n in range(1, 10)},
    **{f"hgemm.k{n:02d}": rung_label(n) for n in range(10, 13)},
    "vector_add.plain": r"\bplain (?:vector-add )?kernel\b|one-element-per-thread",
    "vector_add.cupy": r"\bcupy\.add\b|\bCuPy's (?:elementwise )?add\b",
}
# The capsule whose subject a sentence without a label is about.
CAPSULE_SUBJECT = {
    **{32 + i: f"sgemm.k{i + 1:02d}" for i in range(8)},
    40: "sgemm.k09",
    44: "hgemm.k10",
    45: "hgemm.k11",
    46: "hgemm.k12",
}
# Figures of other runs or other books that lie close to one of our measurements, stated as such where they stand:
# subject -> {value: what it is}. Anything added here needs the text beside it to say which run it is.
OTHER_FIGURES: dict[str, dict[str, str]] = {
    # siboehm's A6000 figures, which the book quotes beside ours (kernels/BENCHMARKS.md, "Against the issue's
    # targets"): 1.3, 8.5, 12.8, 36.5, 68.7, 78.4, 84.8 and 93.7% for kernels 1 to 8
    "sgemm.k03": {
        "8.5": "kernel 2's A6000 figure, in the caption listing kernels 1-3",
        "15.5": "GB from L2 into the SM, a label of figure 34-traffic",
    },
    "sgemm.k07": {"78.5": "the autotuner's own screen (kernels/BENCHMARKS.md, Autotune), figure 38-candidates"},
    "sgemm.k08": {"93.7": "the A6000 figure", "92.8": "the plan screen's figure (capsule 43 names it)"},
    "sgemm.k09": {"89.1": "the plan screen's 3-stage figure (capsule 40's table and figure 40-measured)"},
    # capsule 36's and 37's launch-bounds sessions time the kernel as shipped beside its variant
    "sgemm.k05": {"8.571": "kernel 5 as shipped, capsule 36's session", "8.57": "the same", "31.8": "the same"},
    "sgemm.k06": {"7.333": "kernel 6 as shipped, capsule 37's session", "37.2": "the same"},
}
# A sentence (or a figure) that names another run than the ladder's: its figures are that run's, stated as such.
OTHER_RUN = re.compile(r"\bplan screen\b|\bas shipped\b", re.I)
RUNG_MENTION = re.compile(
    rf"\b{RUNG_WORDS} 0?(\d{{1,2}})\b(?![.,]\d)|^\| *(?:{RUNG_WORDS} )?0?(\d{{1,2}})(?:[:_ ][^|]*)?\|", re.M
)
# A measured figure has decimals (78.3, 0.94, 15.760); whole numbers are counts and sizes (32 lanes, 16 warps).
# The unit written after it, if any, must be the measurement's for the two to be compared.
NUMBER = re.compile(r"(?<![\w.,])(\d+\.\d+)(?![\d.]*\d)(?:\s*(%|ms|µs|us|ns|TFLOP/s|GB/s|TB/s|GB|MB|KB|GHz|B))?")
REFERENCE = re.compile(r"\{\{m:[^}]*\}\}")


@dataclass(frozen=True)
class Disagreement:
    where: str
    subject: str
    stated: str
    measured: str
    key: str
    text: str

    def __str__(self):
        return f"{self.where}: {self.stated} where {self.key} is {self.measured}: {self.text[:160]!r}"


def same(stated: Decimal, value: Decimal) -> bool:
    """Equal at the coarser of the two precisions: 275.9 states 275.899 rounded, 0.51 states 0.5 more finely;
    15.75 is not 15.760."""
    places = min(-stated.as_tuple().exponent, -value.as_tuple().exponent)
    step = Decimal(1).scaleb(-places)
    return stated.quantize(step) == value.quantize(step)


def segments(text: str) -> Iterable[str]:
    """Table rows one by one; prose as sentences (a paragraph's line breaks joined first)."""
    paragraph: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            yield line.strip()
        elif line.strip():
            paragraph.append(line.strip())
            continue
        if paragraph:
            yield from re.split(r"(?<=[.;!?])\s+(?=[A-Z(*])", " ".join(paragraph))
            paragraph = []


def without_code(markdown: str) -> str:
    """The Markdown without fenced code and inline code spans (maths stays: its numbers are statements too)."""
    text = re.sub(r"^(```|~~~).*?^\1\s*$", "", markdown, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", " ", text)


def disagreements(
    where: str, text: str, measured: Mapping[str, tuple[str, str]], subject: str | None = None
) -> list[Disagreement]:
    """The literal numbers in `text` that restate a measurement with another value. `measured`: key -> (value,
    unit), as in measurements.yaml; references are not literal numbers and are skipped. `subject`: the prefix of
    the keys the text is about where a sentence names none (a capsule's own kernel)."""
    groups: dict[str, dict[str, tuple[Decimal, str]]] = {}
    for key, (value, unit) in measured.items():
        groups.setdefault(key.rsplit(".", 1)[0], {})[key] = (Decimal(value), unit)
    everything = [figure for group in groups.values() for figure in group.values()]
    found = []
    for segment in segments(without_code(text)):
        named = [prefix for prefix, label in LABELS.items() if prefix in groups and re.search(label, segment, re.M)]
        rungs = {int(a or b) for a, b in RUNG_MENTION.findall(segment)}
        in_prose = not segment.startswith("|")  # a table row without a label is about something else
        if len(named) == 1 and len(rungs) <= 1:
            owner = named[0]
        else:
            owner = subject if not named and not rungs and in_prose else None
        if owner is None or owner not in groups or OTHER_RUN.search(segment):
            continue
        for match in NUMBER.finditer(REFERENCE.sub(" ", segment)):
            stated, unit = Decimal(match[1]), match[2]
            if match[1] in OTHER_FIGURES.get(owner, {}):
                continue
            if any(same(stated, value) and unit in (None, its) for value, its in everything):
                continue  # a measured figure (this subject's or, in a sentence that compares, another's)
            for key, (value, its) in groups[owner].items():
                if unit in (None, its) and value and abs(stated - value) <= CLOSE * abs(value):
                    found.append(Disagreement(where, owner, match[0], str(value), key, segment))
    return found

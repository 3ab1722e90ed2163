"""Errata of the book's first edition (issue 44) that a machine can check in the demo book's files: the part
ranges the prose states, maths that renders to valid MathML, and measurements stated with one value each.

The book is read from its files (no import, no database), so these run in the quick loop."""

import html
import re
from collections import defaultdict
from pathlib import Path
from xml.etree import ElementTree

import pytest
from django.conf import settings

from apps.catalog.content_files import read_book
from apps.catalog.markdown import MEASUREMENT_REFERENCE, render_markdown

MATHML = "{http://www.w3.org/1998/Math/MathML}"
# Token elements hold text only. `\mathrel{+}=` once put an <mrow> inside an <mo>, which is not MathML; the
# sanitiser's HTML parser then dropped the <mrow> and its "+", and the page showed an empty <mo> and "x = y".
TOKEN_ELEMENTS = {"mi", "mn", "mo", "mtext", "ms"}
RANGE = r"(\d+)\s*[-–]\s*(\d+)"
# "Part 1, The GPU from silicon up (6-19)" or "Part 0, Start Here (capsules 1-5)": the whole part.
PART_RANGE = re.compile(rf"\bPart (\d)\b[^.()]{{0,80}}?\((?:capsules )?{RANGE}\)")
# "capsules 20-23 of Part 2", "Part 3, exercises on capsules 32-40": some capsules of a part.
CAPSULES_OF_PART = re.compile(rf"\bcapsules {RANGE} of Part (\d)\b")
PART_THEN_CAPSULES = re.compile(rf"\bPart (\d),[^.();]{{0,40}}?\bcapsules {RANGE}")
XML_ENTITIES = {"amp", "lt", "gt", "quot", "apos"}


@pytest.fixture(scope="module")
def book():
    return read_book(Path(settings.DEMO_BOOK_DIR))


def _prose(capsule, measurements=None) -> str:
    """The capsule's body, summary and outline, with line breaks as spaces (statements wrap across lines), and its
    {{m:KEY}} references to measured figures filled in as the reader sees them."""
    body = MEASUREMENT_REFERENCE.sub(lambda m: measurements[m["key"]].text(bare=bool(m["bare"])), capsule.body)
    return re.sub(r"\s+", " ", "\n".join([capsule.summary, *capsule.outline, body]))


def _part_ranges(book) -> dict[int, tuple[int, int]]:
    numbers = defaultdict(list)
    for capsule in book.capsules:
        numbers[capsule.part].append(capsule.number)
    ranges = {part: (min(found), max(found)) for part, found in numbers.items()}
    for part, (first, last) in ranges.items():  # parts are contiguous, so a range describes one exactly
        assert sorted(numbers[part]) == list(range(first, last + 1)), part
    return ranges


def test_every_part_range_stated_in_the_prose_matches_the_catalogue(book):
    ranges = _part_ranges(book)
    assert sorted(ranges) == [part.number for part in book.parts]
    stated, wrong = set(), []
    for capsule in book.capsules:
        text = _prose(capsule, book.measurements)
        for match in PART_RANGE.finditer(text):
            part, first, last = int(match[1]), int(match[2]), int(match[3])
            stated.add(part)
            if (first, last) != ranges[part]:
                wrong.append((capsule.number, match[0], ranges[part]))
        subsets = [(int(m[3]), int(m[1]), int(m[2]), m[0]) for m in CAPSULES_OF_PART.finditer(text)]
        subsets += [(int(m[1]), int(m[2]), int(m[3]), m[0]) for m in PART_THEN_CAPSULES.finditer(text)]
        for part, first, last, words in subsets:
            low, high = ranges[part]
            if not low <= first <= last <= high:
                wrong.append((capsule.number, words, ranges[part]))
    assert wrong == []
    assert stated == set(ranges), "capsule 5 states the range of every part"


def _maths(rendered: str):
    for match in re.finditer(r"<math\b.*?</math>", rendered, flags=re.S):
        yield match[0]


def test_every_formula_renders_to_well_formed_mathml_without_tex_left_in_it(book):
    problems = []
    formulas = 0
    for capsule in book.capsules:
        rendered = render_markdown(
            capsule.body, figure_url=lambda name: f"/figures/{name}", measurements=book.measurements
        ).html
        for mathml in _maths(rendered):
            formulas += 1
            shown = re.sub(r'\salttext="[^"]*"', "", mathml)  # the LaTeX source is kept there on purpose
            if "\\" in shown:  # `\text{max\_threads}` rendered its backslash; `\mathrel` its name
                problems.append((capsule.number, "TeX in the output", shown[:160]))
            try:  # HTML's named entities (nh3 writes &nbsp;) as the numeric references XML knows
                root = ElementTree.fromstring(
                    re.sub(
                        r"&([A-Za-z]+);",
                        lambda m: m[0] if m[1] in XML_ENTITIES else f"&#{ord(html.unescape(m[0]))};",
                        mathml,
                    )
                )
            except ElementTree.ParseError as error:
                problems.append((capsule.number, f"not XML: {error}", mathml[:160]))
                continue
            for element in root.iter():
                name = element.tag.removeprefix(MATHML)
                if name in TOKEN_ELEMENTS and (len(element) or not element.text):  # a space (\ ) is text
                    problems.append((capsule.number, f"<{name}> holds elements or nothing", mathml[:160]))
        if "\\mathrel" in capsule.body:
            problems.append((capsule.number, "\\mathrel in the source", ""))
    assert formulas > 1000 and problems == []


# One measurement, one value: the value the tables derive, everywhere it is quoted (prose and figures alike).
# (measurement, the value no longer stated, the value kept, capsules that must state the kept one)
MEASUREMENTS = [
    ("vector add, 2^28 floats, plain kernel", r"\b0\.92 m(?:s|illiseconds)|\b3\.49 T", r"\b0\.94 ms", (2, 3, 29)),
    ("kernel 8, % of cuBLAS", r"\b93\.0\b", r"\b92\.6\b", (39, 40, 41, 43, 44)),
    ("A100 ridge point, FLOP/byte", r"\b153\b", r"\b156\b", (13, 15)),
    ("loaded HBM latency", r"\b600 ns\b|600 \\times 10\^\{-9\}", r"1 µs|microsecond|10\^\{-6\}", (9, 13, 17, 27)),
    ("kernel 3, median ms", r"\b15\.750?(?!\d)", r"\b15\.76", (16, 34, 35, 43)),
]


def _figure_text(svg: str) -> str:
    """The words of a figure (its title, description and labels), not its coordinates."""
    return " ".join(re.findall(r">([^<]+)<", svg))


@pytest.mark.parametrize(("measurement", "old", "kept", "capsules"), MEASUREMENTS, ids=[m[0] for m in MEASUREMENTS])
def test_each_measurement_is_stated_with_one_value(book, measurement, old, kept, capsules):
    texts = {capsule.number: _prose(capsule, book.measurements) for capsule in book.capsules}
    figures = {figure.name: _figure_text(figure.svg) for capsule in book.capsules for figure in capsule.figures}
    stale = [n for n, text in texts.items() if re.search(old, text)]
    stale += [name for name, text in figures.items() if re.search(old, text)]
    assert stale == [], f"{measurement}: {old!r} still in {stale}"
    missing = [n for n in capsules if not re.search(kept, texts[n])]
    assert missing == [], f"{measurement}: {kept!r} not in capsules {missing}"

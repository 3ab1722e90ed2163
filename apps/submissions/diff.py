"""A line diff between two submissions' sources, as rows a template renders (and escapes).

difflib's opcodes, grouped with a few lines of context like `diff -u`, become rows carrying the old
and the new line number, so the page can show both columns and jump between hunks.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class DiffRow:
    kind: str  # "context", "removed", "added" or "gap" (lines left out between hunks)
    old_number: int | None
    new_number: int | None
    text: str


@dataclass(frozen=True)
class SourceDiff:
    rows: list[DiffRow]
    added: int
    removed: int

    @property
    def identical(self) -> bool:
        return not self.added and not self.removed


def source_diff(old: str, new: str, *, context: int = 3) -> SourceDiff:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    rows: list[DiffRow] = []
    added = removed = 0
    for group_index, group in enumerate(matcher.get_grouped_opcodes(context)):
        if group_index or group[0][1] > 0:
            rows.append(DiffRow("gap", None, None, ""))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend(DiffRow("context", i + 1, j1 + (i - i1) + 1, old_lines[i]) for i in range(i1, i2))
                continue
            if tag in ("replace", "delete"):
                rows.extend(DiffRow("removed", i + 1, None, old_lines[i]) for i in range(i1, i2))
                removed += i2 - i1
            if tag in ("replace", "insert"):
                rows.extend(DiffRow("added", None, j + 1, new_lines[j]) for j in range(j1, j2))
                added += j2 - j1
        last_old_end, last_new_end = group[-1][2], group[-1][4]
        # Unchanged lines after the last hunk are left out too: say so.
    if rows and (last_old_end < len(old_lines) or last_new_end < len(new_lines)):
        rows.append(DiffRow("gap", None, None, ""))
    return SourceDiff(rows=rows, added=added, removed=removed)

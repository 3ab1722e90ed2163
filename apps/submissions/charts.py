"""Charts drawn as SVG on the server: no chart library, no script, readable without colour.

Each chart is an inline `<svg role="img">` named by its `<title>` and described by its `<desc>`
(which lists the figures, for screen readers), with every value also written as a text label.
Colours come from CSS classes (static/css/submissions.css), so the charts follow the site's
light and dark themes. All text passes through `escape`: labels may carry readers' file names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

FONT_PX = 13
# Each chart is drawn twice, wide and narrow, and CSS shows the one that fits its box (`.chart-pair`, a size
# container: static/css/submissions.css). Scaled down to a phone's card, the wide drawing's 13-unit labels were
# about 5 px high; the narrow one is drawn for boxes of 17.5 to 34 rem, where its labels stay between 10.5 and
# 14 px. WIDE_MIN_PX is where the wide drawing's labels reach 10 px.
NARROW_WIDTH = 340
WIDE_MIN_PX = 544  # 34rem; keep equal to the container query in submissions.css


@dataclass(frozen=True)
class Bar:
    label: str
    value: float | None  # None: nothing to draw (not measured, or no passing result)
    highlight: bool = False  # the reader's own bar among the reference rungs
    note: str = ""  # written after the value, e.g. "flagged"
    marker: float | None = None  # a tick across the row: a value to compare with (the book's kernel for the step)
    marker_label: str = ""  # what the marker is, for the description, e.g. "book's kernel"


@dataclass(frozen=True)
class Point:
    label: str  # e.g. "#3 · 2 Dec 14:05"
    value: float | None  # None: the submission did not pass (drawn as a cross on the axis)


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k at or above `value` (axis ends that read well)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        candidate = step * 10**exponent
        if candidate >= value * (1 - 1e-9):
            return float(candidate)
    return float(10 ** (exponent + 1))


def fmt_pct(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}%"
    if value >= 10:
        return f"{value:.1f}%"
    return f"{value:.2f}%"


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _svg(chart_id: str, width: int, height: int, title: str, desc: str, body: list[str], css_class: str) -> str:
    cid = escape(chart_id)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {css_class}" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-labelledby="{cid}-title {cid}-desc" '
        f'font-size="{FONT_PX}" preserveAspectRatio="xMinYMin meet">'
        f'<title id="{cid}-title">{escape(title)}</title><desc id="{cid}-desc">{escape(desc)}</desc>'
    )
    return head + "".join(body) + "</svg>"


def _pair(wide: str, narrow: str) -> SafeString:
    # The one not shown is display: none, so screen readers meet each chart once.
    return mark_safe(f'<div class="chart-pair">{wide}{narrow}</div>')


def bar_chart(
    bars: list[Bar], *, chart_id: str, title: str, desc: str = "", reference_line: float | None = 100.0
) -> SafeString:
    """Horizontal bars, one row per entry, value labels at the bar ends; the axis ends at a round
    number above the largest value, and a dashed line marks 100% where that is in range. Wide: the labels left
    of the bars; narrow: each label on its own line above its bar."""
    wide = _bar_svg(bars, chart_id=chart_id, title=title, desc=desc, reference_line=reference_line, narrow=False)
    narrow = _bar_svg(
        bars, chart_id=f"{chart_id}-narrow", title=title, desc=desc, reference_line=reference_line, narrow=True
    )
    return _pair(wide, narrow)


def _bar_svg(
    bars: list[Bar], *, chart_id: str, title: str, desc: str, reference_line: float | None, narrow: bool
) -> str:
    if narrow:
        # a label line (16) above each bar row (22), the value after the bar end; bars start 12 units in, so that
        # the axis's "0%" stays whole
        label_w, value_w, bar_w, row_h, label_h, top, bottom = 12, 96, NARROW_WIDTH - 96 - 12 - 4, 22, 16, 8, 26
        max_label = 44
    else:
        label_w, value_w, bar_w, row_h, label_h, top, bottom = 230, 110, 360, 26, 0, 8, 26
        max_label = 32
    pitch = row_h + label_h
    width = label_w + bar_w + value_w
    height = top + pitch * max(len(bars), 1) + bottom
    values = [v for b in bars for v in (b.value, b.marker) if v is not None]
    axis_max = nice_ceiling(max(values, default=1.0))
    scale = bar_w / axis_max
    body = []
    for tick in (0, axis_max / 2, axis_max):
        x = label_w + tick * scale
        body.append(f'<line class="chart__grid" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}"/>')
        body.append(
            f'<text class="chart__tick" x="{x:.1f}" y="{height - 8}" text-anchor="middle">{escape(_num(tick))}%</text>'
        )
    if reference_line is not None and reference_line <= axis_max:
        x = label_w + reference_line * scale
        body.append(f'<line class="chart__reference" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}"/>')
    if not bars:
        body.append(f'<text class="chart__empty" x="{label_w + 8}" y="{top + pitch * 0.65:.1f}">No figures yet</text>')
    described = []
    for index, bar in enumerate(bars):
        label = bar.label if len(bar.label) <= max_label else bar.label[: max_label - 1] + "…"
        weight = ' font-weight="700"' if bar.highlight else ""
        if narrow:
            body.append(
                f'<text class="chart__label" x="2" y="{top + index * pitch + 12:.1f}"{weight}>{escape(label)}</text>'
            )
        else:
            body.append(
                f'<text class="chart__label" x="{label_w - 8}" y="{top + index * pitch + row_h * 0.65:.1f}" '
                f'text-anchor="end"{weight}>{escape(label)}</text>'
            )
        y = top + index * pitch + label_h
        if bar.value is None:
            text = "no result"
            body.append(
                f'<text class="chart__value chart__value--none" x="{label_w + 6}" y="{y + row_h * 0.65:.1f}">'
                f"{text}</text>"
            )
        else:
            w = max(bar.value * scale, 1.5)  # a hairline still shows that a (tiny) value exists
            cls = "chart__bar chart__bar--highlight" if bar.highlight else "chart__bar"
            body.append(f'<rect class="{cls}" x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" rx="2"/>')
            text = fmt_pct(bar.value) + (f" ({bar.note})" if bar.note else "")
            body.append(
                f'<text class="chart__value" x="{label_w + w + 6:.1f}" y="{y + row_h * 0.65:.1f}">{escape(text)}</text>'
            )
        if bar.marker is not None:
            x = label_w + bar.marker * scale
            body.append(f'<line class="chart__marker" x1="{x:.1f}" y1="{y + 1}" x2="{x:.1f}" y2="{y + row_h - 1}"/>')
            text += f", {bar.marker_label or 'marker'} {fmt_pct(bar.marker)}"
        described.append(f"{bar.label}: {text}")
    full_desc = (desc + " " if desc else "") + "; ".join(described)
    return _svg(chart_id, width, height, title, full_desc.strip(), body, f"chart--bars {_variant(narrow)}")


def _variant(narrow: bool) -> str:
    return "chart--narrow" if narrow else "chart--wide"


def line_chart(
    points: list[Point], *, chart_id: str, title: str, desc: str = "", reference_line: float | None = 100.0
) -> SafeString:
    """A reader's history: one mark per finished submission in order, passing ones joined by a line,
    the others as crosses on the axis; the y axis ends at a round number above the best value."""
    wide = _line_svg(points, chart_id=chart_id, title=title, desc=desc, reference_line=reference_line, narrow=False)
    narrow = _line_svg(
        points, chart_id=f"{chart_id}-narrow", title=title, desc=desc, reference_line=reference_line, narrow=True
    )
    return _pair(wide, narrow)


def _line_svg(
    points: list[Point], *, chart_id: str, title: str, desc: str, reference_line: float | None, narrow: bool
) -> str:
    left, right, top, bottom, plot_w, plot_h = 56, 16, 12, 34, (NARROW_WIDTH - 72 if narrow else 560), 200
    width, height = left + plot_w + right, top + plot_h + bottom
    values = [p.value for p in points if p.value is not None]
    y_max = nice_ceiling(max(values, default=1.0))
    step = plot_w / max(len(points) - 1, 1)

    def xy(index: int, value: float) -> tuple[float, float]:
        x = left + (index * step if len(points) > 1 else plot_w / 2)
        return x, top + plot_h - value / y_max * plot_h

    body = []
    for tick in (0, y_max / 2, y_max):
        _, y = xy(0, tick)
        body.append(f'<line class="chart__grid" x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}"/>')
        body.append(
            f'<text class="chart__tick" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(_num(tick))}%</text>'
        )
    if reference_line is not None and reference_line <= y_max:
        _, y = xy(0, reference_line)
        body.append(f'<line class="chart__reference" x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}"/>')
    if not points:
        body.append(
            f'<text class="chart__empty" x="{left + 8}" y="{top + plot_h / 2:.1f}">No finished submissions yet</text>'
        )
    line = [xy(i, p.value) for i, p in enumerate(points) if p.value is not None]
    if len(line) > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in line)
        body.append(f'<polyline class="chart__line" fill="none" points="{path}"/>')
    described = []
    for index, point in enumerate(points):
        if point.value is None:
            x, y = xy(index, 0)
            body.append(
                f'<path class="chart__miss" d="M{x - 4:.1f},{y - 4:.1f} l8,8 m0,-8 l-8,8">'
                f"<title>{escape(point.label)}: did not pass</title></path>"
            )
            described.append(f"{point.label}: did not pass")
        else:
            x, y = xy(index, point.value)
            body.append(
                f'<circle class="chart__dot" cx="{x:.1f}" cy="{y:.1f}" r="4">'
                f"<title>{escape(point.label)}: {fmt_pct(point.value)}</title></circle>"
            )
            described.append(f"{point.label}: {fmt_pct(point.value)}")
    if values:
        best_index = max((i for i, p in enumerate(points) if p.value is not None), key=lambda i: points[i].value)
        x, y = xy(best_index, points[best_index].value)
        anchor = "end" if x > left + plot_w * 0.8 else "start"
        dx = -8 if anchor == "end" else 8
        body.append(
            f'<text class="chart__value" x="{x + dx:.1f}" y="{max(y - 8, top + 10):.1f}" text-anchor="{anchor}">'
            f"best {fmt_pct(points[best_index].value)}</text>"
        )
    if points:
        body.append(f'<text class="chart__tick" x="{left}" y="{height - 10}">first</text>')
        body.append(f'<text class="chart__tick" x="{left + plot_w}" y="{height - 10}" text-anchor="end">latest</text>')
    full_desc = (desc + " " if desc else "") + "; ".join(described)
    return _svg(chart_id, width, height, title, full_desc.strip(), body, f"chart--line {_variant(narrow)}")

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


# --- The roofline (issue 43) -------------------------------------------------------------------------


@dataclass(frozen=True)
class RooflineShape:
    """One benchmark shape of a result: where the kernel and the library baseline sit on the roofline."""

    label: str  # the shape, e.g. "M=4096 N=4096 K=4096"
    intensity: float  # FLOP per byte: the problem's FLOPs / its minimum bytes moved at this shape
    tflops: float  # the reader's kernel
    baseline_tflops: float | None = None
    headline: bool = False  # the shape the report's figures are quoted at (the largest); labelled in the chart


@dataclass(frozen=True)
class Roofline:
    """A GPU's roofline as its worker measured it (kernels.results.Ceilings) and a result's shapes on it."""

    copy_gbps: float  # the memory roof: measured device-to-device copy bandwidth
    roof_tflops: float | None  # the compute roof: the problem's own ceiling (None: not measured, no flat roof)
    roof_label: str  # "FP32", "FP16 tensor", "BF16 tensor"
    shapes: tuple[RooflineShape, ...]
    baseline: str = "baseline"  # the library's short name: cuBLAS, PyTorch, CUB

    @property
    def ridge(self) -> float | None:
        """The intensity (FLOP/byte) where the memory roof meets the compute roof: TFLOP/s over GB/s, x 1000."""
        if not self.roof_tflops:
            return None
        return 1000 * self.roof_tflops / self.copy_gbps

    def attainable(self, intensity: float) -> float:
        """TFLOP/s the roofline allows at this intensity: min(compute roof, intensity x copy bandwidth)."""
        memory = intensity * self.copy_gbps / 1000
        return min(self.roof_tflops, memory) if self.roof_tflops else memory

    def is_compute_bound(self, intensity: float) -> bool:
        return self.ridge is not None and intensity >= self.ridge

    @property
    def headline(self) -> RooflineShape:
        return next((s for s in self.shapes if s.headline), self.shapes[-1])


def _sig(value: float) -> str:
    """A figure to about three significant digits, with thousands separated: 0.125, 4.27, 17.9, 682, 3,350."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _pct_words(value: float) -> str:
    if value < 0.01:
        return "under 0.01%"
    if value >= 10:
        return f"{value:.0f}%"
    if value >= 1:
        return f"{value:.1f}%"
    return f"{value:.2f}%"


def _decade(exponent: int) -> str:
    return f"{10.0**exponent:,.0f}" if exponent >= 0 else f"{10.0**exponent:g}"


def roofline_caption(roofline: Roofline) -> str:
    """The chart in words, at the headline shape: which roof bounds the kernel there and how near it comes."""
    shape = roofline.headline
    at = f"At {_sig(shape.intensity)} FLOP/byte ({shape.label})"
    pct = 100 * shape.tflops / roofline.attainable(shape.intensity)
    if roofline.is_compute_bound(shape.intensity):
        words = (
            f"{at} this kernel is compute-bound (right of the ridge at {_sig(roofline.ridge)} FLOP/byte); it reaches "
            f"{_pct_words(pct)} of the {roofline.roof_label} roof ({_sig(roofline.roof_tflops)} TFLOP/s)."
        )
    else:
        ridge = f" (left of the ridge at {_sig(roofline.ridge)} FLOP/byte)" if roofline.ridge else ""
        words = (
            f"{at} this kernel is memory-bound{ridge}; it reaches {_pct_words(pct)} of the memory roof "
            f"({_sig(roofline.copy_gbps)} GB/s of measured copy bandwidth: "
            f"{_sig(roofline.attainable(shape.intensity))} TFLOP/s at this intensity)."
        )
    if shape.baseline_tflops:
        base_pct = 100 * shape.baseline_tflops / roofline.attainable(shape.intensity)
        words += f" {roofline.baseline} reaches {_pct_words(base_pct)} of the same roof."
    return words


@dataclass(frozen=True)
class RooflineGeometry:
    """Where values land in a roofline drawing: log10 of intensity across, log10 of TFLOP/s up, between whole
    decades (10^x_lo .. 10^x_hi FLOP/byte, 10^y_lo .. 10^y_hi TFLOP/s)."""

    left: float
    top: float
    plot_w: float
    plot_h: float
    x_lo: int
    x_hi: int
    y_lo: int
    y_hi: int

    def x(self, intensity: float) -> float:
        return self.left + (math.log10(intensity) - self.x_lo) / (self.x_hi - self.x_lo) * self.plot_w

    def y(self, tflops: float) -> float:
        return self.top + self.plot_h - (math.log10(tflops) - self.y_lo) / (self.y_hi - self.y_lo) * self.plot_h


def _span(low: float, high: float, *, minimum: int = 2) -> tuple[int, int]:
    lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(high))
    while hi - lo < minimum:
        hi += 1
        if hi - lo < minimum:
            lo -= 1
    return lo, hi


def roofline_geometry(roofline: Roofline, *, narrow: bool = False) -> RooflineGeometry:
    """Decades that hold every point, the ridge and the compute roof, with room around them."""
    intensities = [s.intensity for s in roofline.shapes] + ([roofline.ridge] if roofline.ridge else [])
    x_lo, x_hi = _span(min(intensities) / 2.5, max(intensities) * 2.5)
    values = [v for s in roofline.shapes for v in (s.tflops, s.baseline_tflops) if v]
    top_value = max([*values, roofline.roof_tflops or roofline.attainable(10.0**x_hi)])
    y_lo, y_hi = _span(min(values) / 1.5, top_value * 1.5)
    if math.log10(top_value) > y_hi - 0.35:  # room above the top roof for its label
        y_hi += 1
    if roofline.ridge:  # the memory roof shown over 1.5 decades at least, so that it reads as a slope
        x_lo = min(x_lo, math.floor(math.log10(roofline.ridge) - 1.5))
        y_lo = min(y_lo, math.floor(math.log10(roofline.roof_tflops) - 1.5))
    y_lo = max(y_lo, y_hi - 8)  # a kernel a hundred million times below its roof is drawn on the axis
    if narrow:
        return RooflineGeometry(
            left=46, top=30, plot_w=NARROW_WIDTH - 46 - 12, plot_h=230, **_decades(x_lo, x_hi, y_lo, y_hi)
        )
    return RooflineGeometry(left=60, top=30, plot_w=520, plot_h=260, **_decades(x_lo, x_hi, y_lo, y_hi))


def _decades(x_lo: int, x_hi: int, y_lo: int, y_hi: int) -> dict:
    return {"x_lo": x_lo, "x_hi": x_hi, "y_lo": y_lo, "y_hi": y_hi}


def roofline_chart(roofline: Roofline, *, chart_id: str, title: str, desc: str = "") -> SafeString:
    """A log-log roofline: the memory roof (intensity x measured copy bandwidth) rising to the ridge, the compute
    roof flat after it, and per benchmark shape the reader's kernel (dot) above the baseline's (square) or below
    it; the headline shape's two are labelled with their TFLOP/s."""
    wide = _roofline_svg(roofline, chart_id=chart_id, title=title, desc=desc, narrow=False)
    narrow = _roofline_svg(roofline, chart_id=f"{chart_id}-narrow", title=title, desc=desc, narrow=True)
    return _pair(wide, narrow)


def _roofline_svg(roofline: Roofline, *, chart_id: str, title: str, desc: str, narrow: bool) -> str:
    g = roofline_geometry(roofline, narrow=narrow)
    right = 12 if narrow else 24
    legend_y = g.top + g.plot_h + 60
    ridge_row = roofline.ridge is not None and narrow  # narrow: the ridge's legend entry on a line of its own
    width, height = g.left + g.plot_w + right, legend_y + (30 if ridge_row else 10)
    bottom = g.top + g.plot_h
    x_min, x_max, y_min, y_max = 10.0**g.x_lo, 10.0**g.x_hi, 10.0**g.y_lo, 10.0**g.y_hi
    body = []
    x_step = 1 if g.x_hi - g.x_lo <= 6 else 2
    for k in range(g.x_lo, g.x_hi + 1):
        x = g.x(10.0**k)
        body.append(f'<line class="chart__grid" x1="{x:.1f}" y1="{g.top}" x2="{x:.1f}" y2="{bottom}"/>')
        if (k - g.x_lo) % x_step == 0:
            body.append(
                f'<text class="chart__tick" x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{_decade(k)}</text>'
            )
    y_step = 1 if g.y_hi - g.y_lo <= 6 else 2
    for k in range(g.y_lo, g.y_hi + 1):
        y = g.y(10.0**k)
        body.append(f'<line class="chart__grid" x1="{g.left}" y1="{y:.1f}" x2="{g.left + g.plot_w}" y2="{y:.1f}"/>')
        if (k - g.y_lo) % y_step == 0:
            body.append(
                f'<text class="chart__tick" x="{g.left - 6}" y="{y + 4:.1f}" text-anchor="end">{_decade(k)}</text>'
            )
    body.append(f'<text class="chart__tick" x="2" y="{g.top - 12}">TFLOP/s (log scale)</text>')
    body.append(
        f'<text class="chart__tick" x="{g.left + g.plot_w / 2:.1f}" y="{bottom + 36}" text-anchor="middle">'
        "FLOP per byte moved (log scale)</text>"
    )

    # The memory roof, from where it enters the plot to the ridge (or the plot's right edge).
    ridge = roofline.ridge
    start = max(x_min, y_min * 1000 / roofline.copy_gbps)
    end = min(ridge or x_max, x_max, y_max * 1000 / roofline.copy_gbps)
    if start < end:
        x1, y1 = g.x(start), g.y(roofline.attainable(start))
        x2, y2 = g.x(end), g.y(end * roofline.copy_gbps / 1000)
        body.append(f'<line class="chart__roof" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>')
        angle = math.degrees(math.atan2(y2 - y1, x2 - x1))
        lx, ly = x1 + (x2 - x1) * 0.06, y1 + (y2 - y1) * 0.06 - 6
        body.append(
            f'<text class="chart__value" x="{lx:.1f}" y="{ly:.1f}" transform="rotate({angle:.1f} {lx:.1f} {ly:.1f})">'
            f"copy {escape(_sig(roofline.copy_gbps))} GB/s</text>"
        )
    if roofline.roof_tflops and ridge:
        y = g.y(roofline.roof_tflops)
        x1 = g.x(max(ridge, x_min))
        body.append(f'<line class="chart__roof" x1="{x1:.1f}" y1="{y:.1f}" x2="{g.left + g.plot_w:.1f}" y2="{y:.1f}"/>')
        label_y = y - 6 if y - g.top >= 18 else y + 16
        body.append(
            f'<text class="chart__value" x="{g.left + g.plot_w - 4:.1f}" y="{label_y:.1f}" text-anchor="end">'
            f"{escape(roofline.roof_label)} {escape(_sig(roofline.roof_tflops))} TFLOP/s</text>"
        )
        if x_min <= ridge <= x_max:
            rx = g.x(ridge)
            body.append(f'<line class="chart__reference" x1="{rx:.1f}" y1="{y:.1f}" x2="{rx:.1f}" y2="{bottom}"/>')
            body.append(f'<circle class="chart__ridge" cx="{rx:.1f}" cy="{y:.1f}" r="4"/>')

    described = []
    for shape in roofline.shapes:
        x, yk = g.x(shape.intensity), g.y(shape.tflops)
        pct = 100 * shape.tflops / roofline.attainable(shape.intensity)
        words = f"{shape.label}: {_sig(shape.intensity)} FLOP/byte, your kernel {_sig(shape.tflops)} TFLOP/s"
        words += f" ({_pct_words(pct)} of the roof there)"
        yb = None
        if shape.baseline_tflops:
            yb = g.y(shape.baseline_tflops)
            body.append(f'<line class="chart__gap" x1="{x:.1f}" y1="{yk:.1f}" x2="{x:.1f}" y2="{yb:.1f}"/>')
            words += f", {roofline.baseline} {_sig(shape.baseline_tflops)} TFLOP/s"
            size = 9 if shape.headline else 7
            body.append(
                f'<rect class="chart__base-dot" x="{x - size / 2:.1f}" y="{yb - size / 2:.1f}" width="{size}" '
                f'height="{size}"><title>{escape(roofline.baseline)} at {escape(shape.label)}: '
                f"{escape(_sig(shape.baseline_tflops))} TFLOP/s</title></rect>"
            )
        body.append(
            f'<circle class="chart__dot" cx="{x:.1f}" cy="{yk:.1f}" r="{5 if shape.headline else 3.5}">'
            f"<title>Your kernel at {escape(shape.label)}: {escape(_sig(shape.tflops))} TFLOP/s</title></circle>"
        )
        described.append(words)
        if shape.headline:
            body.extend(_point_labels(g, roofline, shape, x, yk, yb))
    # The legend, below the axis title: the markers are told apart by shape as well as colour.
    lx = g.left if not narrow else 8
    body.append(f'<circle class="chart__dot" cx="{lx + 5}" cy="{legend_y - 4}" r="5"/>')
    body.append(f'<text class="chart__label" x="{lx + 14}" y="{legend_y}">your kernel</text>')
    bx = lx + 110
    body.append(f'<rect class="chart__base-dot" x="{bx}" y="{legend_y - 9}" width="9" height="9"/>')
    body.append(f'<text class="chart__label" x="{bx + 15}" y="{legend_y}">{escape(roofline.baseline)}</text>')
    if ridge:
        rx, ry = (lx, legend_y + 20) if narrow else (bx + 30 + 7.5 * len(roofline.baseline), legend_y)
        body.append(f'<circle class="chart__ridge" cx="{rx + 5}" cy="{ry - 4}" r="4"/>')
        body.append(
            f'<text class="chart__label" x="{rx + 14}" y="{ry}">ridge at {escape(_sig(ridge))} FLOP/byte</text>'
        )

    roofs = f"memory roof: measured copy bandwidth {_sig(roofline.copy_gbps)} GB/s"
    if roofline.roof_tflops and ridge:
        roofs += (
            f"; compute roof: {roofline.roof_label} {_sig(roofline.roof_tflops)} TFLOP/s; "
            f"ridge at {_sig(ridge)} FLOP/byte"
        )
    full_desc = (desc + " " if desc else "") + f"Log-log roofline, {roofs}. " + "; ".join(described) + "."
    return _svg(chart_id, width, height, title, full_desc.strip(), body, f"chart--roofline {_variant(narrow)}")


def _point_labels(g: RooflineGeometry, roofline: Roofline, shape: RooflineShape, x: float, yk: float, yb):
    """The headline shape's two points labelled on the side with more room, pushed apart when they are close."""
    right_side = x < g.left + g.plot_w * 0.6
    dx, anchor = (9, "start") if right_side else (-9, "end")
    ky, by = yk + 4, (yb + 4 if yb is not None else None)
    # Under the flat roof, the labels stay below its own label and line; two labels stay a line apart.
    floor = g.y(roofline.roof_tflops) + 16 if roofline.ridge and shape.intensity >= roofline.ridge else g.top + 12
    if by is None:
        ky = max(ky, floor)
    elif ky <= by:
        ky = max(ky, floor)
        by = max(by, ky + 15)
    else:
        by = max(by, floor)
        ky = max(ky, by + 15)
    out = [
        f'<text class="chart__value" x="{x + dx:.1f}" y="{ky:.1f}" text-anchor="{anchor}" font-weight="700">'
        f"you {escape(_sig(shape.tflops))}</text>"
    ]
    if by is not None:
        out.append(
            f'<text class="chart__value" x="{x + dx:.1f}" y="{by:.1f}" text-anchor="{anchor}">'
            f"{escape(roofline.baseline)} {escape(_sig(shape.baseline_tflops))}</text>"
        )
    return out

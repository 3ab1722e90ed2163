"""A small SVG kit for the figures of capsules 01-18 (issue 44): narrow figures that stay legible on a phone.

Every figure is 480 units wide (drawn at 480 px on a wide screen, about 340 px on a 390 px phone) and no
text is smaller than 15 units, so nothing renders under about 10.5 px once scaled. `Fig.save` refuses a
text that would run outside the viewBox, estimated from its length (an average glyph of 0.56 em, 0.6 em bold).
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

FIGURES = Path(__file__).resolve().parent.parent
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
W = 480
MIN_FONT = 15

INK = "#222222"
GREY = "#555555"
GRID = "#dddddd"
BLUE = "#1f5fa8"
BLUE_MID = "#5dade2"
BLUE_LIGHT = "#aed6f1"
BLUE_DARK = "#0b3d6b"
RED = "#c0392b"
GREEN = "#117a65"
ORANGE = "#b9770e"
PURPLE = "#7d3c98"
FILL_BLUE = "#eaf2f8"
FILL_GREEN = "#e8f6f3"
FILL_ORANGE = "#fdf2e9"
FILL_PURPLE = "#f4ecf7"
FILL_YELLOW = "#fef9e7"
FILL_RED = "#fdedec"
FILL_GREY = "#f2f3f4"


def fmt(v: float) -> str:
    return f"{round(v, 4):g}" if isinstance(v, float) else str(v)


def text_width(s: str, size: float, bold: bool = False) -> float:
    return len(s) * size * (0.6 if bold else 0.56)


class Fig:
    def __init__(self, name: str, h: int, title: str, desc: str, w: int = W):
        self.name, self.w, self.h, self.title, self.desc = name, w, h, title, desc
        self.parts: list[str] = []
        self.problems: list[str] = []

    # primitives -------------------------------------------------------------------------------------
    def rect(self, x, y, w, h, fill="#ffffff", stroke=GREY, sw=1.2, rx=4, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<rect x="{fmt(x)}" y="{fmt(y)}" width="{fmt(w)}" height="{fmt(h)}" rx="{rx}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{sw}"{d}/>'
        )

    def line(self, x1, y1, x2, y2, stroke=GREY, sw=1.2, dash=None, arrow=False):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        m = ' marker-end="url(#arr)"' if arrow else ""
        self.parts.append(
            f'<line x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}" stroke="{stroke}" '
            f'stroke-width="{sw}"{d}{m}/>'
        )

    def path(self, d, stroke=GREY, sw=1.5, fill="none", dash=None, arrow=False):
        da = f' stroke-dasharray="{dash}"' if dash else ""
        m = ' marker-end="url(#arr)"' if arrow else ""
        self.parts.append(f'<path d="{d}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"{da}{m}/>')

    def circle(self, cx, cy, r, fill=BLUE, stroke=None, sw=1.5):
        s = f' stroke="{stroke}" stroke-width="{sw}"' if stroke else ""
        self.parts.append(f'<circle cx="{fmt(cx)}" cy="{fmt(cy)}" r="{r}" fill="{fill}"{s}/>')

    def text(self, x, y, s, size=15, anchor="start", bold=False, fill=INK, rotate=None, italic=False):
        if size < MIN_FONT:
            self.problems.append(f"{s!r}: font-size {size} < {MIN_FONT}")
        width = text_width(s, size, bold)
        left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
        if rotate is None and (left < 0 or left + width > self.w):
            self.problems.append(f"{s!r} runs outside the figure ({left:.0f} to {left + width:.0f} of {self.w})")
        attrs = f' font-size="{size}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if bold:
            attrs += ' font-weight="bold"'
        if italic:
            attrs += ' font-style="italic"'
        if fill != INK:
            attrs += f' fill="{fill}"'
        if rotate is not None:
            attrs += f' transform="rotate({rotate} {fmt(x)} {fmt(y)})"'
        self.parts.append(f'<text x="{fmt(x)}" y="{fmt(y)}"{attrs}>{escape(s, quote=False)}</text>')
        return width

    def box(self, x, y, w, h, lines, fill=FILL_BLUE, stroke=BLUE, size=15, bold_first=False, fill_text=INK, sw=1.5):
        """A box with centred lines of text, checked to fit inside it."""
        self.rect(x, y, w, h, fill=fill, stroke=stroke, sw=sw)
        if isinstance(lines, str):
            lines = [lines]
        lh = size * 1.25
        top = y + h / 2 - lh * len(lines) / 2 + size * 0.95
        for i, s in enumerate(lines):
            bold = bold_first and i == 0
            if text_width(s, size, bold) > w - 6:
                self.problems.append(f"{s!r} is wider than its box ({text_width(s, size, bold):.0f} > {w - 6})")
            self.text(x + w / 2, top + i * lh, s, size=size, anchor="middle", bold=bold, fill=fill_text)

    def arrow(self, x1, y1, x2, y2, stroke=GREY, sw=1.6, dash=None):
        self.line(x1, y1, x2, y2, stroke=stroke, sw=sw, dash=dash, arrow=True)

    def heading(self, s, y=26):
        self.text(16, y, s, size=17, bold=True)

    def note(self, y, s, size=15, fill=GREY):
        self.text(16, y, s, size=size, fill=fill)

    # output -----------------------------------------------------------------------------------------
    def svg(self) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.w} {self.h}" width="{self.w}" '
            f'height="{self.h}" role="img" aria-labelledby="t d" font-family="{FONT}" font-size="15" '
            f'fill="{INK}">\n'
            f'<title id="t">{escape(self.title, quote=False)}</title>\n'
            f'<desc id="d">{escape(self.desc, quote=False)}</desc>\n'
            '<defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555555"/></marker></defs>\n'
            f'<rect x="0" y="0" width="{self.w}" height="{self.h}" fill="#ffffff"/>\n'
        )
        return head + "\n".join(self.parts) + "\n</svg>\n"

    def save(self):
        if self.problems:
            raise SystemExit(f"{self.name}: " + "; ".join(self.problems))
        (FIGURES / self.name).write_text(self.svg(), encoding="utf-8")
        return self.name


# charts -------------------------------------------------------------------------------------------------
class Scale:
    """Maps a value to a coordinate, linearly or on a log scale."""

    def __init__(self, v0, v1, p0, p1, log=False):
        self.v0, self.v1, self.p0, self.p1, self.log = v0, v1, p0, p1, log

    def __call__(self, v):
        if self.log:
            t = (math.log10(v) - math.log10(self.v0)) / (math.log10(self.v1) - math.log10(self.v0))
        else:
            t = (v - self.v0) / (self.v1 - self.v0)
        return self.p0 + t * (self.p1 - self.p0)


def hbars(f: Fig, rows, top: float, scale: Scale, bar_h=20, gap=50, label_size=15, value_inside=False):
    """Horizontal bars with the label on a line above each bar and the value text after its end.

    rows: (label, value, colour, value_text). Returns the y below the last bar.
    """
    y = top
    for label, value, colour, vtext in rows:
        f.text(scale.p0, y, label, size=label_size)
        x1 = scale(value)
        f.rect(scale.p0, y + 6, max(x1 - scale.p0, 2), bar_h, fill=colour, stroke=colour, sw=1, rx=2)
        if vtext:
            tw = text_width(vtext, 15, True)
            if x1 + 6 + tw <= f.w - 4:
                f.text(x1 + 6, y + 6 + bar_h / 2 + 5.5, vtext, bold=True)
            else:
                f.text(x1 - 6, y + 6 + bar_h / 2 + 5.5, vtext, anchor="end", bold=True, fill="#ffffff")
        y += gap
    return y


def vaxis(f: Fig, scale: Scale, x0, x1, ticks, label_fmt=fmt, unit=None, unit_x=None):
    """Horizontal grid lines with tick labels to the left of x0 (for vertical bar charts and plots)."""
    for t in ticks:
        y = scale(t)
        f.line(x0, y, x1, y, stroke=GRID, sw=1)
        f.text(x0 - 6, y + 5, label_fmt(t), anchor="end")


def haxis(f: Fig, scale: Scale, y0, y1, ticks, label_fmt=fmt, label_y=None):
    for t in ticks:
        x = scale(t)
        f.line(x, y0, x, y1, stroke=GRID, sw=1)
        s = label_fmt(t)
        half = text_width(s, 15) / 2
        if x - half < 2:
            f.text(2, (label_y or y1 + 18), s)
        elif x + half > f.w - 2:
            f.text(f.w - 2, (label_y or y1 + 18), s, anchor="end")
        else:
            f.text(x, (label_y or y1 + 18), s, anchor="middle")

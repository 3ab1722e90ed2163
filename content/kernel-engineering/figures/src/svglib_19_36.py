"""Small SVG toolkit for the figures of capsules 19-36 (issue 44): narrow drawings that stay legible on a phone.

Every drawing is 480 units wide (width attribute = viewBox width) and no text is smaller than 14 units, so a
figure shown 340 px wide on a 390 px phone keeps its smallest text near 10 px. `Fig.text` refuses smaller text
and text that would run past the edge (estimated from the font size), so a layout mistake fails at generation.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent  # content/kernel-engineering/figures
W = 480
MIN_FONT = 14
SANS = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
MONO = "ui-monospace, Menlo, Consolas, monospace"

INK = "#1a202c"
MUTED = "#4a5568"
BLUE = "#2b6cb0"
ORANGE = "#c05621"
GREEN = "#2f855a"
RED = "#c53030"
PURPLE = "#6b46c1"
LBLUE = "#bee3f8"
LORANGE = "#fbd38d"
LGREEN = "#c6f6d5"
LGREY = "#edf2f7"
LRED = "#fed7d7"
LPURPLE = "#e9d8fd"
GRID = "#e2e8f0"
GREY = "#a0aec0"


def fmt(v: float) -> str:
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return s


def text_width(s: str, size: float, bold: bool = False, mono: bool = False) -> float:
    if mono:
        return len(s) * size * 0.61
    w = 0.0
    for ch in s:
        if ch in "il.,:;'|!()[]1 ":
            w += 0.33
        elif ch in "mwMW%@":
            w += 0.85
        elif ch.isupper() or ch in "&#":
            w += 0.66
        else:
            w += 0.57
    return w * size * (1.16 if bold else 1.0)


def wrap(s: str, max_width: float, size: float, bold: bool = False, mono: bool = False) -> list[str]:
    words, lines, cur = s.split(), [], ""
    for word in words:
        trial = f"{cur} {word}".strip()
        if text_width(trial, size, bold, mono) <= max_width or not cur:
            cur = trial
        else:
            lines.append(cur)
            cur = word
    if cur:
        lines.append(cur)
    return lines


class Fig:
    def __init__(self, name: str, title: str, desc: str, height: int, width: int = W):
        self.name, self.title, self.desc, self.h, self.w = name, title, desc, height, width
        self.parts: list[str] = []

    # primitives -------------------------------------------------------------------------------------------
    def rect(self, x, y, w, h, fill="#ffffff", stroke=None, sw=1.0, rx=0, dash=None, opacity=None):
        extra = f' stroke="{stroke}" stroke-width="{fmt(sw)}"' if stroke else ""
        if dash:
            extra += f' stroke-dasharray="{dash}"'
        if rx:
            extra += f' rx="{fmt(rx)}"'
        if opacity is not None:
            extra += f' fill-opacity="{fmt(opacity)}"'
        self.parts.append(f'<rect x="{fmt(x)}" y="{fmt(y)}" width="{fmt(w)}" height="{fmt(h)}" fill="{fill}"{extra}/>')

    def line(self, x1, y1, x2, y2, stroke=MUTED, sw=1.0, dash=None, arrow=False, arrow_start=False):
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        if arrow:
            extra += ' marker-end="url(#arr)"'
        if arrow_start:
            extra += ' marker-start="url(#arr)"'
        self.parts.append(
            f'<line x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}" stroke="{stroke}" '
            f'stroke-width="{fmt(sw)}"{extra}/>'
        )

    def path(self, d, stroke=MUTED, sw=1.0, fill="none", arrow=False, dash=None):
        extra = ' marker-end="url(#arr)"' if arrow else ""
        if dash:
            extra += f' stroke-dasharray="{dash}"'
        self.parts.append(f'<path d="{d}" stroke="{stroke}" stroke-width="{fmt(sw)}" fill="{fill}"{extra}/>')

    def text(self, x, y, s, size=MIN_FONT, anchor="start", fill=INK, bold=False, mono=False, italic=False):
        if size < MIN_FONT:
            raise ValueError(f"{self.name}: font {size} < {MIN_FONT}: {s!r}")
        width = text_width(s, size, bold, mono)
        left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
        if left < 2 or left + width > self.w - 2:
            raise ValueError(f"{self.name}: text runs off the drawing ({left:.0f}..{left + width:.0f}): {s!r}")
        attrs = f' font-size="{fmt(size)}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if fill != INK:
            attrs += f' fill="{fill}"'
        if bold:
            attrs += ' font-weight="bold"'
        if italic:
            attrs += ' font-style="italic"'
        if mono:
            attrs += f' font-family="{MONO}"'
        self.parts.append(f'<text x="{fmt(x)}" y="{fmt(y)}"{attrs}>{escape(s, quote=False)}</text>')
        return width

    # composites -------------------------------------------------------------------------------------------
    def para(self, x, y, s, max_width, size=MIN_FONT, lh=None, **kw) -> float:
        """Wrapped text from baseline y; returns the baseline after the last line."""
        lh = lh or size * 1.3
        for i, line in enumerate(wrap(s, max_width, size, kw.get("bold", False), kw.get("mono", False))):
            self.text(x, y + i * lh, line, size, **kw)
        return y + (len(wrap(s, max_width, size, kw.get("bold", False), kw.get("mono", False))) - 1) * lh

    def heading(self, s, sub=None, y=26):
        self.text(16, y, s, 16, bold=True)
        if sub:
            return self.para(16, y + 22, sub, self.w - 32, 14, fill=MUTED) + 10
        return y + 10

    def box(
        self,
        x,
        y,
        w,
        h,
        lines,
        fill=LGREY,
        stroke=MUTED,
        size=MIN_FONT,
        bold_first=False,
        rx=6,
        color=INK,
        mono=False,
        sw=1.0,
    ):
        self.rect(x, y, w, h, fill, stroke, sw, rx)
        if isinstance(lines, str):
            lines = wrap(lines, w - 12, size, bold_first, mono)
        lh = size * 1.25
        top = y + h / 2 - (len(lines) - 1) * lh / 2 + size * 0.35
        for i, s in enumerate(lines):
            self.text(x + w / 2, top + i * lh, s, size, "middle", color, bold=bold_first and i == 0, mono=mono)

    def save(self):
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.w} {self.h}" width="{self.w}" '
            f'height="{self.h}" role="img" aria-labelledby="t d" font-family="{SANS}">\n'
            f'<title id="t">{escape(self.title, quote=False)}</title>\n'
            f'<desc id="d">{escape(self.desc, quote=False)}</desc>\n'
            '<defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{MUTED}"/></marker></defs>\n'
            f'<rect x="0" y="0" width="{self.w}" height="{self.h}" fill="#ffffff"/>\n'
        )
        (OUT / f"{self.name}.svg").write_text(head + "\n".join(self.parts) + "\n</svg>\n")
        return self.name


def hbars(
    fig: Fig,
    y: float,
    rows,
    vmax: float,
    x0: float = 16,
    x1: float = W - 16,
    log: bool = False,
    vmin: float = 1.0,
    bar_h: float = 18,
    gap: float = 14,
    ticks=None,
    tick_fmt=str,
    label_size=14,
):
    """Horizontal bars, each with its label on the line above: rows = (label, value, colour, value_text).

    Returns the y below the last bar (and below the tick labels, if any)."""

    def scale(v):
        if log:
            return x0 + (x1 - x0) * (math.log10(max(v, vmin)) - math.log10(vmin)) / (
                math.log10(vmax) - math.log10(vmin)
            )
        return x0 + (x1 - x0) * v / vmax

    n = len(rows)
    bottom = y + n * (label_size + 8 + bar_h + gap)
    if ticks:
        for t in ticks:
            xt = scale(t)
            fig.line(xt, y + 4, xt, bottom - gap + 4, GRID, 1)
            fig.text(xt, bottom + 8, tick_fmt(t), 14, "middle", MUTED)
    cur = y
    for label, value, colour, value_text in rows:
        cur += label_size + 2
        fig.text(x0, cur, label, label_size, fill=INK)
        cur += 6
        end = scale(value)
        fig.rect(x0, cur, max(end - x0, 1.5), bar_h, colour)
        tw = text_width(value_text, 14, bold=True)
        light = colour in (LBLUE, LGREEN, LORANGE, LGREY, LPURPLE, LRED, GREY)
        if end + 6 + tw <= fig.w - 4:
            fig.text(end + 6, cur + bar_h - 4, value_text, 14, fill=MUTED if light else colour, bold=True)
        else:
            fig.text(end - 6, cur + bar_h - 4, value_text, 14, "end", INK if light else "#ffffff", bold=True)
        cur += bar_h + gap
    if ticks:
        cur += 22
    return cur

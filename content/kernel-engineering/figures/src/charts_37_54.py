"""Figures for capsules 37 to 54 (issue 44), drawn as plain SVG.

Run from the repository root:  python content/kernel-engineering/figures/src/charts_37_54.py [name ...]
Every figure is 480 units wide and sized so that it is legible on a 390 px phone: the smallest text is
14 units (about 10.5 px at 360 px), titles 17. Every number drawn comes from the capsule's own text.
"""

import math
import sys
from pathlib import Path
from xml.sax.saxutils import escape

OUT = Path(__file__).resolve().parent.parent
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
W = 480
MIN_FONT = 14

INK = "#1a202c"
GREY = "#4a5568"
LIGHT = "#cbd5e0"
# (fill, stroke) pairs, as in the book's other figures
BLUE = ("#bee3f8", "#2b6cb0")
GREEN = ("#c6f6d5", "#2f855a")
RED = ("#fed7d7", "#c53030")
ORANGE = ("#feebc8", "#c05621")
PURPLE = ("#e9d8fd", "#6b46c1")
YELLOW = ("#fefcbf", "#b7791f")
GREYS = ("#edf2f7", "#4a5568")
WHITE = ("#ffffff", "#4a5568")

FIGURES = {}


def figure(fn):
    FIGURES[fn.__name__.replace("_", "-").removeprefix("f")] = fn
    return fn


def fmt(v):
    return f"{v:.1f}".rstrip("0").rstrip(".") if isinstance(v, float) else str(v)


class Svg:
    def __init__(self, height, title, desc, width=W):
        self.w, self.h = width, height
        self.title, self.desc = title, desc
        self.parts = []

    # primitives -----------------------------------------------------------------------------------------
    def text(self, x, y, s, size=14, anchor="start", fill=INK, bold=False, italic=False):
        assert size >= MIN_FONT, (s, size)
        extra = ' font-weight="bold"' if bold else ""
        extra += ' font-style="italic"' if italic else ""
        self.parts.append(
            f'<text x="{fmt(x)}" y="{fmt(y)}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{extra}>'
            f"{escape(s)}</text>"
        )

    def rect(self, x, y, w, h, colors=WHITE, sw=1, dash=None, rx=0):
        fill, stroke = colors
        d = f' stroke-dasharray="{dash}"' if dash else ""
        r = f' rx="{rx}"' if rx else ""
        self.parts.append(
            f'<rect x="{fmt(x)}" y="{fmt(y)}" width="{fmt(w)}" height="{fmt(h)}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{sw}"{d}{r}/>'
        )

    def line(self, x1, y1, x2, y2, color=INK, sw=1.5, dash=None, arrow=False):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        a = ' marker-end="url(#arrow)"' if arrow else ""
        self.parts.append(
            f'<line x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}" stroke="{color}" '
            f'stroke-width="{sw}"{d}{a}/>'
        )

    def path(self, d, color=INK, sw=1.5, fill="none", arrow=False, dash=None):
        a = ' marker-end="url(#arrow)"' if arrow else ""
        ds = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(f'<path d="{d}" fill="{fill}" stroke="{color}" stroke-width="{sw}"{a}{ds}/>')

    def box(self, x, y, w, h, lines, colors=WHITE, size=14, bold=False, sw=1, dash=None, fill_text=INK):
        """A rectangle with one or more centred lines of text."""
        self.rect(x, y, w, h, colors, sw=sw, dash=dash)
        if isinstance(lines, str):
            lines = [lines]
        lh = size * 1.25
        y0 = y + h / 2 - lh * (len(lines) - 1) / 2 + size * 0.35
        for i, s in enumerate(lines):
            self.text(x + w / 2, y0 + i * lh, s, size=size, anchor="middle", bold=bold, fill=fill_text)

    def heading(self, s, y=26):
        self.text(16, y, s, size=17, bold=True)

    def save(self, name):
        assert name[:2].isdigit() and 37 <= int(name[:2]) <= 54, name
        body = "\n".join(self.parts)
        svg = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.w} {self.h}" width="{self.w}" '
            f'height="{self.h}" role="img" aria-labelledby="t d" font-family="{FONT}">\n'
            f'<title id="t">{escape(self.title)}</title>\n'
            f'<desc id="d">{escape(self.desc)}</desc>\n'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{INK}"/></marker></defs>\n'
            f'<rect x="0" y="0" width="{self.w}" height="{self.h}" fill="#ffffff"/>\n'
            f"{body}\n</svg>\n"
        )
        (OUT / f"{name}.svg").write_text(svg, encoding="utf-8")


def hbars(
    svg,
    top,
    rows,
    vmax,
    ticks,
    axis_label,
    label_w=170,
    bar_h=26,
    gap=10,
    right=20,
    refs=(),
    log=False,
    vmin=None,
    value_fmt=str,
):
    """Horizontal bar chart. rows: (label, value, colors[, value text]). refs: (value, text, color)."""
    x0 = label_w
    x1 = svg.w - right
    span = x1 - x0

    def X(v):
        if log:
            return x0 + span * (math.log10(v) - math.log10(vmin)) / (math.log10(vmax) - math.log10(vmin))
        return x0 + span * v / vmax

    y = top
    for row in rows:
        label, value, colors = row[:3]
        shown = row[3] if len(row) > 3 else value_fmt(value)
        svg.text(x0 - 8, y + bar_h / 2 + 5, label, anchor="end")
        if value is not None:
            xv = X(value)
            svg.rect(x0, y, max(xv - x0, 2), bar_h, colors)
            if xv + 8 + 8 * len(shown) < x1 + right - 4:
                svg.text(xv + 6, y + bar_h / 2 + 5, shown, bold=True)
            else:
                svg.text(xv - 6, y + bar_h / 2 + 5, shown, anchor="end", bold=True)
        y += bar_h + gap
    base = y - gap + 8
    svg.line(x0, top - 6, x0, base, GREY, 1)
    svg.line(x0, base, x1, base, INK, 1.5)
    for t in ticks:
        xt = X(t)
        svg.line(xt, base, xt, base + 5, INK, 1.5)
        svg.text(xt, base + 21, fmt(t) if not isinstance(t, str) else t, anchor="middle")
    svg.text((x0 + x1) / 2, base + 42, axis_label, anchor="middle")
    svg.h = base + 60
    for value, label, color in refs:
        xr = X(value)
        svg.line(xr, top - 10, xr, base, color, 1.5, dash="5 3")
        svg.text(xr - 4 if xr > svg.w / 2 else xr + 4, top - 14, label, anchor="end" if xr > svg.w / 2 else "start",
                 fill=color, bold=True)
    return base + 72


# ---------------------------------------------------------------------------------------------------------
# Capsule 37
# ---------------------------------------------------------------------------------------------------------


@figure
def f37_store_banks():
    s = Svg(
        430,
        "Banks hit by one warp's transposing store to As, without and with padding",
        "Store j = 0 of one warp: lanes cover rows r = 0 to 15 of the block tile, two lanes per row with column "
        "offsets c = 0 and c = 4. With rows of 128 floats both lanes of row r write bank r, so banks 16 to 31 "
        "stay idle and every bank in use takes two lanes: a 2-way conflict. With rows of 132 floats the c = 0 "
        "lanes write banks 0 to 15 and the c = 4 lanes banks 16 to 31: 32 lanes, 32 banks, one wavefront.",
    )
    s.heading("One warp's store j = 0 into As[k][m]")
    cell = 26
    x0 = 32

    def strip(y, title, colors_of, subtitle):
        s.text(16, y - 12, title, bold=True)
        for b in range(16):
            for half in range(2):
                bank = b + 16 * half
                col, row = bank % 16, bank // 16
                x = x0 + col * cell
                yy = y + row * (cell + 4)
                lanes = colors_of(bank)
                fillc = {0: WHITE, 1: GREEN, 2: RED}[len(lanes)]
                s.rect(x, yy, cell, cell, fillc)
                s.text(x + cell / 2, yy + 18, str(bank), anchor="middle",
                       fill=INK if lanes else GREY)
        s.text(16, y + 2 * cell + 30, subtitle)

    # unpadded: word = (c + j) * 128 + r -> bank r for both c; padded: bank = (4(c+j) + r) mod 32
    strip(70, "Rows of 128 floats: bank = r", lambda b: ["c0", "c4"] if b < 16 else [],
          "Red: two lanes of a row in one bank (2-way). White: idle.")
    strip(230, "Rows of 132 floats: bank = (4(c + j) + r) mod 32",
          lambda b: ["c0"] if b < 16 else ["c4"],
          "Green: one lane per bank, all 32 banks busy.")
    s.text(16, 360, "Lanes with c = 0 (rows 0-15) take banks 0-15, lanes with", fill=GREY)
    s.text(16, 380, "c = 4 take banks 16-31; 4 floats of padding per row,", fill=GREY)
    s.text(16, 400, "128 bytes per tile, remove the conflict.", fill=GREY)
    s.save("37-store-banks")


@figure
def f37_factorial():
    s = Svg(
        360,
        "Kernels 5 and 6 at one and at two blocks per SM, as a percentage of cuBLAS",
        "Four bars: kernel 5 at one block per SM 32.0%, kernel 5 held to 128 registers for two blocks 47.9%, "
        "kernel 6 at one block 37.2% and kernel 6 held to 128 registers 58.3%. Vectorising is worth about 17% "
        "at one block and 22% at two; the second block is worth about 50% without vectorising and 57% with it.",
    )
    s.heading("Vectorising against a second block per SM")
    rows = [
        ("k5, 1 block/SM", 32.0, GREYS),
        ("k5, 2 blocks/SM", 47.9, BLUE),
        ("k6, 1 block/SM", 37.2, GREYS),
        ("k6, 2 blocks/SM", 58.3, GREEN),
    ]
    y = hbars(s, 56, rows, 70, [0, 10, 20, 30, 40, 50, 60, 70], "% of cuBLAS at 4096³ (H200)",
              label_w=150, bar_h=30, gap=14)
    s.text(16, y + 4, "2 blocks/SM = __launch_bounds__(256, 2), 128 registers.", fill=GREY)
    s.text(16, y + 24, "Kernel 6 figures from one judge session.", fill=GREY)
    s.h = y + 40
    s.save("37-factorial")


# ---------------------------------------------------------------------------------------------------------
# Capsule 38
# ---------------------------------------------------------------------------------------------------------


@figure
def f38_warp_rows():
    s = Svg(
        470,
        "How kernel 7's winning tile maps warps and lanes onto the block tile",
        "The 128 by 128 block tile of sgemm_autotuned<128, 128, 32, 16, 4> is cut into eight horizontal strips "
        "of 16 rows, one per warp. Inside warp 0's strip, lane l owns columns 4l to 4l+3, a 16 by 4 thread "
        "tile. For each k, all 32 lanes read the same 16 values of A (four float4, broadcast) and lane l reads "
        "the float4 of B at columns 4l to 4l+3: 32 consecutive float4, 512 bytes in four wavefronts with no "
        "conflict.",
    )
    s.heading("Kernel 7: one warp is one row of threads")
    # block tile
    bx, by, side = 16, 50, 176
    strip = side / 8
    for w in range(8):
        s.rect(bx, by + w * strip, side, strip, GREEN if w == 0 else GREYS)
        s.text(bx + side / 2, by + w * strip + 16, f"warp {w}: rows {16 * w}-{16 * w + 15}", size=14,
               anchor="middle")
    s.text(bx + side / 2, by + side + 20, "128 × 128 block tile", anchor="middle", fill=GREY)
    tx = 210
    for i, line in enumerate([
        "256 threads = 8 warps.",
        "Warp w owns rows 16w to 16w+15,",
        "all 128 columns.",
        "",
        "Lane l owns columns 4l to 4l+3:",
        "a 16 × 4 thread tile, 64 FFMA",
        "per k step.",
        "",
        "127 registers: two blocks,",
        "16 warps per SM.",
    ]):
        if line:
            s.text(tx, by + 14 + i * 19, line)
    # zoom on warp 0
    zy = 290
    s.text(16, zy - 14, "Warp 0 for one k: what the 32 lanes read", bold=True)
    lw = 14
    x0 = 16
    # B row
    s.text(x0, zy + 10, "B: Bs[k][4l .. 4l+3], 32 consecutive float4", fill=BLUE[1])
    for l in range(32):
        s.rect(x0 + l * lw, zy + 18, lw, 20, BLUE)
    # lanes
    for l in range(32):
        s.rect(x0 + l * lw, zy + 46, lw, 64, GREEN)
    for l in (0, 8, 16, 24, 31):
        s.text(x0 + l * lw + lw / 2, zy + 132, str(l), anchor="middle")
    s.text(x0 + 16 * lw, zy + 152, "lane (4 columns each)", anchor="middle", fill=GREY)
    s.text(16, zy + 178, "A: As[k][0 .. 15], four float4, the same for every lane:", fill=ORANGE[1])
    s.text(16, zy + 196, "a broadcast, one wavefront each. No bank conflicts.", fill=ORANGE[1])
    s.h = zy + 206
    s.save("38-warp-rows")


@figure
def f38_waves():
    s = Svg(
        330,
        "Waves of kernel 7's grid on the H200",
        "1,024 blocks of 128 by 128 at 4096 cubed, with two blocks per SM on 132 SMs, run 264 at a time: three "
        "full waves of 264 and a fourth of 232 blocks, 88% full, so about 97% of the slots of four waves are used.",
    )
    s.heading("1,024 blocks in waves of 264 slots")
    x0, x1 = 100, 440
    y = 56
    for i, n in enumerate([264, 264, 264, 232]):
        s.text(x0 - 10, y + 20, f"wave {i + 1}", anchor="end")
        wfull = (x1 - x0)
        s.rect(x0, y, wfull, 28, WHITE, dash="4 3")
        s.rect(x0, y, wfull * n / 264, 28, GREEN if n == 264 else ORANGE)
        s.text(x0 + wfull * n / 264 - 8, y + 20, f"{n} blocks", anchor="end", bold=True)
        y += 40
    s.text(x0, y + 10, "264 slots = 132 SMs × 2 blocks per SM", fill=GREY)
    s.text(16, y + 44, "⌈1024 / 264⌉ = 4 waves; the last is 88% full.")
    s.text(16, y + 66, "1024 / (4 × 264) ≈ 97% of the slots are used.")
    s.h = y + 82
    s.save("38-waves")


# ---------------------------------------------------------------------------------------------------------
# Capsule 39
# ---------------------------------------------------------------------------------------------------------


@figure
def f39_warp_shapes():
    s = Svg(
        500,
        "Three warp tiles drawn to scale, with the values of A and B each needs per k",
        "A 16 by 128 warp tile, as in kernels 6 and 7, needs 16 values of A and 128 of B per k step for 2,048 "
        "FMAs, an intensity of 14.2. A 64 by 32 warp tile needs 64 plus 32 values for the same 2,048 FMAs, 21.3. "
        "A 128 by 32 warp tile needs 128 plus 32 values for 4,096 FMAs, 25.6.",
    )
    s.heading("Warp intensity W_M·W_N / (W_M + W_N)")
    sc = 1.25
    y = 56

    def shape(x, y, wm, wn, colors):
        h, w = wm * sc, wn * sc
        s.rect(x - 8, y, 5, h, ORANGE, sw=0.8)          # A column
        s.rect(x, y - 8, w, 5, BLUE, sw=0.8)            # B row
        s.rect(x, y, w, h, colors)
        return h

    h = shape(24, y + 8, 16, 128, GREYS)
    s.text(24 + 128 * sc + 16, y + 12, "16 × 128 (kernels 6, 7)", bold=True)
    s.text(24 + 128 * sc + 16, y + 32, "16 + 128 = 144 values")
    s.text(24 + 128 * sc + 16, y + 50, "2,048 / 144 ≈ 14.2")
    y += 90
    shape(24, y + 8, 64, 32, GREEN)
    s.text(90, y + 22, "64 × 32 (kernel 8, 128 × 128 plan)", bold=True)
    s.text(90, y + 42, "64 + 32 = 96 values")
    s.text(90, y + 60, "2,048 / 96 ≈ 21.3")
    y += 110
    shape(24, y + 8, 128, 32, GREEN)
    s.text(90, y + 22, "128 × 32 (kernel 8, shipped plan)", bold=True)
    s.text(90, y + 42, "128 + 32 = 160 values")
    s.text(90, y + 60, "4,096 / 160 = 25.6")
    s.rect(90, y + 96, 14, 14, ORANGE, sw=0.8)
    s.text(110, y + 108, "values of A per k (one per row)")
    s.rect(90, y + 120, 14, 14, BLUE, sw=0.8)
    s.text(110, y + 132, "values of B per k (one per column)")
    s.h = y + 176
    s.save("39-warp-shapes")


@figure
def f39_ingredients():
    s = Svg(
        330,
        "Separating warp tiles, the large tile and prefetch in kernel 8",
        "Percent of cuBLAS at 4096 cubed on the H200: kernel 7 78.2; kernel 8 with a 128 by 128 by 16 plan, two "
        "blocks per SM and no prefetch 79.5; the 128 by 256 by 8 plan without prefetch, one block per SM, 60.5; "
        "the same plan with register prefetch 92.6.",
    )
    s.heading("Which ingredient of kernel 8 pays")
    rows = [
        ("k7 autotuned", 78.2, GREYS),
        ("k8 128×128, 2 blocks", 79.5, BLUE),
        ("k8 128×256, no prefetch", 60.5, RED),
        ("k8 128×256 + prefetch", 92.6, GREEN),
    ]
    hbars(s, 56, rows, 100, [0, 20, 40, 60, 80, 100], "% of cuBLAS at 4096³ (H200)", label_w=196, bar_h=28,
          gap=12)
    s.save("39-ingredients")


def main(names):
    chosen = names or sorted(FIGURES)
    for name in chosen:
        FIGURES[name]()
        print("wrote", name)


if __name__ == "__main__":
    main(sys.argv[1:])

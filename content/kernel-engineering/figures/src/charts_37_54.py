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
_MEASURED = None


def M(key):
    """A measured figure of the book, from measurements.yaml (the same values the capsules cite as {{m:KEY}})."""
    global _MEASURED
    if _MEASURED is None:
        import yaml

        _MEASURED = yaml.safe_load((OUT.parent / "measurements.yaml").read_text(encoding="utf-8"))
    return float(_MEASURED[key]["value"])


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
        svg.text(
            xr - 4 if xr > svg.w / 2 else xr + 4,
            top - 14,
            label,
            anchor="end" if xr > svg.w / 2 else "start",
            fill=color,
            bold=True,
        )
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
                s.text(x + cell / 2, yy + 18, str(bank), anchor="middle", fill=INK if lanes else GREY)
        s.text(16, y + 2 * cell + 30, subtitle)

    # unpadded: word = (c + j) * 128 + r -> bank r for both c; padded: bank = (4(c+j) + r) mod 32
    strip(
        70,
        "Rows of 128 floats: bank = r",
        lambda b: ["c0", "c4"] if b < 16 else [],
        "Red: two lanes of a row in one bank (2-way). White: idle.",
    )
    strip(
        230,
        "Rows of 132 floats: bank = (4(c + j) + r) mod 32",
        lambda b: ["c0"] if b < 16 else ["c4"],
        "Green: one lane per bank, all 32 banks busy.",
    )
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
        ("k5, 1 block/SM", M("sgemm.k05.pct_cublas"), GREYS),
        ("k5, 2 blocks/SM", 47.9, BLUE),
        ("k6, 1 block/SM", 37.2, GREYS),
        ("k6, 2 blocks/SM", 58.3, GREEN),
    ]
    y = hbars(
        s, 56, rows, 70, [0, 10, 20, 30, 40, 50, 60, 70], "% of cuBLAS at 4096³ (H200)", label_w=150, bar_h=30, gap=14
    )
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
        s.text(bx + side / 2, by + w * strip + 16, f"warp {w}: rows {16 * w}-{16 * w + 15}", size=14, anchor="middle")
    s.text(bx + side / 2, by + side + 20, "128 × 128 block tile", anchor="middle", fill=GREY)
    tx = 210
    for i, line in enumerate(
        [
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
        ]
    ):
        if line:
            s.text(tx, by + 14 + i * 19, line)
    # zoom on warp 0
    zy = 290
    s.text(16, zy - 14, "Warp 0 for one k: what the 32 lanes read", bold=True)
    lw = 14
    x0 = 16
    # B row
    s.text(x0, zy + 10, "B: Bs[k][4l .. 4l+3], 32 consecutive float4", fill=BLUE[1])
    for lane in range(32):
        s.rect(x0 + lane * lw, zy + 18, lw, 20, BLUE)
    # lanes
    for lane in range(32):
        s.rect(x0 + lane * lw, zy + 46, lw, 64, GREEN)
    for lane in (0, 8, 16, 24, 31):
        s.text(x0 + lane * lw + lw / 2, zy + 132, str(lane), anchor="middle")
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
        wfull = x1 - x0
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
        s.rect(x - 8, y, 5, h, ORANGE, sw=0.8)  # A column
        s.rect(x, y - 8, w, 5, BLUE, sw=0.8)  # B row
        s.rect(x, y, w, h, colors)
        return h

    shape(24, y + 8, 16, 128, GREYS)
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
        "Percent of cuBLAS at 4096 cubed on the H200: kernel 7 78.3; kernel 8 with a 128 by 128 by 16 plan, two "
        "blocks per SM and no prefetch 79.5; the 128 by 256 by 8 plan without prefetch, one block per SM, 60.5; "
        "the same plan with register prefetch 92.6.",
    )
    s.heading("Which ingredient of kernel 8 pays")
    rows = [
        ("k7 autotuned", M("sgemm.k07.pct_cublas"), GREYS),
        ("k8 128×128, 2 blocks", 79.5, BLUE),
        ("k8 128×256, no prefetch", 60.5, RED),
        ("k8 128×256 + prefetch", M("sgemm.k08.pct_cublas"), GREEN),
    ]
    hbars(s, 56, rows, 100, [0, 20, 40, 60, 80, 100], "% of cuBLAS at 4096³ (H200)", label_w=196, bar_h=28, gap=12)
    s.save("39-ingredients")


# ---------------------------------------------------------------------------------------------------------
# Capsule 40
# ---------------------------------------------------------------------------------------------------------


def arrow_label(s, x1, y, x2, label, above=True):
    s.line(x1, y, x2 - 2, y, INK, 1.5, arrow=True)
    s.text((x1 + x2) / 2, y - 8 if above else y + 20, label, anchor="middle", bold=True)


@figure
def f40_two_paths():
    s = Svg(
        400,
        "A tile's path into shared memory with ordinary loads and with cp.async",
        "Top: an ordinary load (LDG) brings global data through L2 into registers, and a second instruction "
        "(STS) stores it to shared memory; the registers are held until the load returns and the store waits for "
        "it. Bottom: cp.async (LDGSTS) copies from L2 straight into shared memory; no register holds the data, no "
        "store instruction is issued, and the thread goes on at once.",
    )
    s.heading("Two ways from global to shared memory")
    bw, bh = 104, 54
    xs = [16, 188, 360]
    y = 70
    s.text(16, y - 14, "Ordinary loads (rung 08)", bold=True, fill=RED[1])
    s.box(xs[0], y, bw, bh, ["global", "(via L2)"], GREYS)
    s.box(xs[1], y, bw, bh, ["registers"], RED)
    s.box(xs[2], y, bw, bh, ["shared", "memory"], GREEN)
    arrow_label(s, xs[0] + bw, y + bh / 2, xs[1], "LDG")
    arrow_label(s, xs[1] + bw, y + bh / 2, xs[2], "STS")
    s.text(16, y + bh + 24, "Holds registers until the load returns (12 floats")
    s.text(16, y + bh + 43, "per thread in rung 08); a second instruction per")
    s.text(16, y + bh + 62, "value competes with the FFMAs for issue slots.")
    y = 276
    s.text(16, y - 52, "cp.async (rung 09): one instruction", bold=True, fill=GREEN[1])
    s.box(xs[0], y, bw, bh, ["global", "(via L2)"], GREYS)
    s.box(xs[1], y, bw, bh, ["registers"], WHITE, dash="4 3", fill_text=GREY)
    s.box(xs[2], y, bw, bh, ["shared", "memory"], GREEN)
    s.path(f"M{xs[0] + bw},{y + 10} C{xs[1]},{y - 34} {xs[1] + bw},{y - 34} {xs[2] - 2},{y + 10}", arrow=True)
    s.text(xs[1] + bw / 2, y - 30, "LDGSTS", anchor="middle", bold=True)
    s.text(16, y + bh + 24, "The thread goes on at once; commit and wait groups")
    s.text(16, y + bh + 43, "say when a tile has landed. 16-byte copies, .cg")
    s.text(16, y + bh + 62, "skips L1, src-size 0 writes zeros at the edges.")
    s.h = y + bh + 78
    s.save("40-two-paths")


@figure
def f40_wait_groups():
    s = Svg(
        420,
        "Commit groups of a four-stage cp.async ring, tile by tile",
        "Rows are tiles 0 to 5, columns the prologue and iterations kt = 0 to 5. The prologue commits tiles 0, 1 "
        "and 2 into stages 0, 1 and 2. At each iteration, wait_group 2 leaves at most two groups pending, so tile "
        "kt has landed; the barrier publishes it; tile kt + 3 is issued into the stage that tile kt - 1 used; and "
        "tile kt is computed. Each tile is in flight for three iterations before its math.",
    )
    s.heading("Four stages: cp.async.wait_group 2")
    cols = ["pro", "kt 0", "kt 1", "kt 2", "kt 3", "kt 4", "kt 5"]
    x0, cw, y0, rh = 86, 54, 64, 36
    for c, name in enumerate(cols):
        s.text(x0 + c * cw + cw / 2, y0 - 8, name, anchor="middle", bold=True)
    for tile in range(6):
        y = y0 + tile * rh
        s.text(x0 - 10, y + 23, f"tile {tile}", anchor="end")
        issue_col = 0 if tile < 3 else tile - 3 + 1  # column index of its issue
        math_col = tile + 1
        for c in range(issue_col, min(math_col, len(cols))):
            s.rect(x0 + c * cw + 2, y + 4, cw - 4, rh - 8, ORANGE)
        if math_col < len(cols):
            s.rect(x0 + math_col * cw + 2, y + 4, cw - 4, rh - 8, GREEN)
            s.text(x0 + math_col * cw + cw / 2, y + 23, "math", anchor="middle")
        s.text(x0 + issue_col * cw + cw / 2, y + 23, f"st {tile % 4}", anchor="middle")
    y = y0 + 6 * rh + 14
    s.rect(16, y, 14, 14, ORANGE)
    s.text(36, y + 12, "copy group pending (issued into stage st)")
    s.rect(16, y + 22, 14, 14, GREEN)
    s.text(36, y + 34, "waited, published by the barrier, computed")
    s.text(16, y + 62, "At kt, the refill goes to the stage tile kt − 1 used:")
    s.text(16, y + 81, "safe, since every warp passed this barrier after its math.")
    s.h = y + 96
    s.save("40-wait-groups")


@figure
def f40_measured():
    s = Svg(
        360,
        "Rung 09's cp.async ring against rung 08's register prefetch",
        "Percent of cuBLAS at 4096 cubed on the H200: rung 08 with register prefetch 92.6; rung 09 with four "
        "stages 88.9, and 88.9 to 89.1 with three, five or six; rung 09 at rung 08's 128 by 256 tile 82.7; rung 09 "
        "with a k depth of 16, which spills, 76.7.",
    )
    s.heading("The ring hides latency, and still loses")
    rows = [
        ("08 register prefetch", M("sgemm.k08.pct_cublas"), GREEN),
        ("09, 4 stages", M("sgemm.k09.pct_cublas"), BLUE),
        ("09, 3, 5 or 6 stages", 89.1, BLUE, "88.9-89.1"),
        ("09 at 08's tile", 82.7, ORANGE),
        ("09 with B_K = 16", 76.7, RED),
    ]
    hbars(s, 56, rows, 100, [0, 20, 40, 60, 80, 100], "% of cuBLAS at 4096³ (H200)", label_w=182, bar_h=26, gap=10)
    s.save("40-measured")


# ---------------------------------------------------------------------------------------------------------
# Capsule 41
# ---------------------------------------------------------------------------------------------------------


@figure
def f41_kernel_name():
    s = Svg(
        560,
        "What the name of cuBLAS's SGEMM kernel on the H200 says",
        "The kernel name sm80_xmma_gemm_f32f32_..._tilesize256x128x8_stage3_warpsize4x2x1_ffma read piece by "
        "piece: an Ampere kernel, NVIDIA's xmma template family, FP32 in and out, a 256 by 128 block tile with a k "
        "depth of 8, a three-stage pipeline, 8 warps arranged 4 by 2, and FFMA math. Below, the block tile drawn "
        "with its eight 64 by 64 warp tiles.",
    )
    s.heading("Reading sm80_xmma_gemm_f32f32_…_ffma")
    rows = [
        ("sm80", "written for Ampere; runs on Hopper"),
        ("xmma", "NVIDIA's internal GEMM templates"),
        ("f32f32", "FP32 inputs, FP32 output"),
        ("tilesize256x128x8", "block tile B_M × B_N × B_K"),
        ("stage3", "three-stage pipeline"),
        ("warpsize4x2x1", "8 warps, 4 by 2: 64 × 64 each"),
        ("ffma", "plain FP32 fused multiply-add"),
    ]
    y = 50
    for tok, meaning in rows:
        s.box(16, y, 168, 28, tok, BLUE, size=14)
        s.text(196, y + 19, meaning)
        y += 36
    y += 10
    sc = 0.75
    bx = 40
    hgt, wid = 256 * sc, 128 * sc
    for r in range(4):
        for c in range(2):
            s.rect(bx + c * 64 * sc, y + r * 64 * sc, 64 * sc, 64 * sc, GREEN if (r, c) == (0, 0) else GREYS)
            s.text(bx + c * 64 * sc + 32 * sc, y + r * 64 * sc + 30, f"w{2 * r + c}", anchor="middle")
    s.text(bx + wid / 2, y + hgt + 20, "256 × 128", anchor="middle", fill=GREY)
    tx = 170
    for i, line in enumerate(
        [
            "One block tile of C: 8 warps,",
            "each a 64 × 64 warp tile.",
            "256 threads, 254 registers:",
            "one block per SM.",
            "",
            "Rung 09's design, tuned:",
            "50.6 TFLOP/s, 81% of the",
            "FFMA ceiling the judge measures.",
        ]
    ):
        if line:
            s.text(tx, y + 16 + i * 20, line)
    s.h = y + hgt + 32
    s.save("41-kernel-name")


@figure
def f41_wave_quantization():
    s = Svg(
        330,
        "Wave quantisation at three tile counts on 132 SMs",
        "Each rectangle is one wave of 132 block slots, filled in proportion to the tiles it runs. 512 tiles: three "
        "full waves and a fourth of 116, 97% busy. 528 tiles: four full waves, 100%, about the same time as 512. "
        "133 tiles: one full wave and a second with a single block, about 50%.",
    )
    s.heading("Tiles in waves of 132 (one block per SM)")
    x0, ww, gap = 110, 76, 6
    y = 56
    for label, waves, eff in [
        ("512 tiles", [132, 132, 132, 116], "97%"),
        ("528 tiles", [132, 132, 132, 132], "100%"),
        ("133 tiles", [132, 1], "50%"),
    ]:
        s.text(x0 - 10, y + 22, label, anchor="end", bold=True)
        for i, n in enumerate(waves):
            x = x0 + i * (ww + gap)
            s.rect(x, y, ww, 32, WHITE, dash="4 3")
            s.rect(x, y, max(ww * n / 132, 2), 32, GREEN if n == 132 else ORANGE)
            s.text(x + ww / 2, y + 22, str(n), anchor="middle")
        s.text(x0, y + 54, f"{len(waves)} waves, {eff} of their slots busy", fill=GREY)
        y += 82
    s.h = y
    s.save("41-wave-quantization")


@figure
def f41_beaten():
    s = Svg(
        420,
        "The book's best kernels as a percentage of the library they are measured against",
        "Measured by the judge on the H200: FP32 SGEMM rung 08 92.6% of cuBLAS; FP16 rung 13 90.3%; the BF16 rung "
        "94.7% at 4096 cubed and 98.9% at 8192 cubed; the tensor-core GEMV rung 110.6 to 113.0% of torch.matmul "
        "at 8192 by 8192 with 1 and 8 vectors; the attention rung 94.9 to 98.6% of cuDNN's fused attention, "
        "non-causal. Only the GEMV, a shape the library serves poorly, passes 100.",
    )
    s.heading("Where the library wins and where it does not")
    rows = [
        ("SGEMM rung 08", M("sgemm.k08.pct_cublas"), BLUE),
        ("FP16 rung 13", 90.3, BLUE),
        ("BF16 4096³", 94.7, BLUE),
        ("BF16 8192³", 98.9, BLUE),
        ("GEMV, B = 1 and 8", 113.0, GREEN, "110.6-113.0"),
        ("attention (cuDNN)", 98.6, PURPLE, "94.9-98.6"),
    ]
    hbars(
        s,
        64,
        rows,
        120,
        [0, 20, 40, 60, 80, 100, 120],
        "% of the library's speed (H200)",
        label_w=150,
        bar_h=26,
        gap=10,
        refs=[(100, "library = 100", RED[1])],
    )
    s.save("41-beaten")


# ---------------------------------------------------------------------------------------------------------
# Capsule 42
# ---------------------------------------------------------------------------------------------------------


@figure
def f42_clocks():
    s = Svg(
        520,
        "What four ways of timing a kernel actually measure",
        "Four timelines of one launch. A host timer around the launch call measures only the launch. Adding a "
        "synchronisation measures the launch overhead, the kernel and the wake-up. CUDA events on an idle stream "
        "include the gap while the host is still issuing the launch. Events recorded behind a 300-microsecond hold "
        "kernel bracket the kernel alone, because the host issues the launch while the GPU spins.",
    )
    s.heading("Which interval each clock brackets")
    rows = [
        ("host timer around the launch", [("launch", 30, 110, GREYS)], (30, 110), "the launch, not the kernel"),
        (
            "host timer + synchronize",
            [("launch", 30, 110, GREYS), ("kernel", 150, 330, GREEN), ("wake", 330, 390, GREYS)],
            (30, 390),
            "adds overhead and wake-up",
        ),
        (
            "events, idle stream",
            [("gap", 30, 150, RED), ("kernel", 150, 330, GREEN)],
            (30, 330),
            "the launch gap is inside",
        ),
        (
            "events behind a hold kernel",
            [("hold 300 µs", 16, 150, ORANGE), ("kernel", 150, 330, GREEN)],
            (150, 330),
            "the kernel alone",
        ),
    ]
    y = 60
    for label, segs, (m0, m1), verdict in rows:
        s.text(16, y, label, bold=True)
        for name, a, b, col in segs:
            s.box(a + 30, y + 26, b - a, 32, name, col)
        s.line(m0 + 30, y + 14, m1 + 30, y + 14, BLUE[1], 3)
        s.line(m0 + 30, y + 8, m0 + 30, y + 20, BLUE[1], 3)
        s.line(m1 + 30, y + 8, m1 + 30, y + 20, BLUE[1], 3)
        s.text(16, y + 80, "measures: " + verdict, fill=BLUE[1])
        y += 112
    s.h = y - 10
    s.save("42-clocks")


@figure
def f42_slow_round():
    s = Svg(
        330,
        "Ten rounds at 5.2 ms and one at 7.2 ms: the median against the mean",
        "A dot plot of eleven round times: ten at 5.2 ms and one slow round at 7.2 ms. The median stays at 5.2 ms "
        "and the median absolute deviation is zero, so the median's standard error is zero. The mean is pulled to "
        "about 5.38 ms and its relative standard error is about 3.4%, so a rule based on the mean keeps timing.",
    )
    s.heading("One slow round: median against mean")
    x0, x1 = 40, 450
    lo, hi = 5.0, 7.5

    def X(v):
        return x0 + (x1 - x0) * (v - lo) / (hi - lo)

    base = 220
    for i in range(10):
        s.parts.append(
            f'<circle cx="{fmt(X(5.2))}" cy="{fmt(base - 12 - i * 14)}" r="6" fill="{BLUE[0]}" '
            f'stroke="{BLUE[1]}" stroke-width="1.5"/>'
        )
    s.parts.append(
        f'<circle cx="{fmt(X(7.2))}" cy="{base - 12}" r="6" fill="{RED[0]}" stroke="{RED[1]}" stroke-width="1.5"/>'
    )
    s.line(x0, base, x1, base)
    for v in [5.0, 5.5, 6.0, 6.5, 7.0, 7.5]:
        s.line(X(v), base, X(v), base + 5)
        s.text(X(v), base + 21, f"{v:.1f}", anchor="middle")
    s.text((x0 + x1) / 2, base + 42, "round time, ms", anchor="middle")
    mean = (10 * 5.2 + 7.2) / 11
    s.line(X(5.2), 50, X(5.2), base, GREEN[1], 2, dash="5 3")
    s.line(X(mean), 50, X(mean), base, RED[1], 2, dash="5 3")
    s.text(X(5.5), 84, "median 5.2 ms: MAD = 0, error 0", fill=GREEN[1], bold=True)
    s.text(X(5.5), 110, "mean ≈ 5.38 ms: error ≈ 3.4%", fill=RED[1], bold=True)
    s.h = base + 60
    s.save("42-slow-round")


@figure
def f42_interleaved():
    s = Svg(
        420,
        "How the judge orders its rounds",
        "A warm-up round that is not recorded, then timed rounds in which the candidate and the baseline each get an "
        "L2 flush, a hold kernel and a timed launch, alternating which goes first; both outputs are checked after "
        "both timed launches. The judge stops when both medians' relative standard errors are at most 0.5% after at "
        "least 10 rounds, when 4 s are spent with at least 3 rounds, or at 100 rounds.",
    )
    s.heading("Rounds: interleaved, alternating, checked after")
    x0 = 92
    y = 56

    def round_row(label, order, y, warm=False):
        s.text(x0 - 8, y + 21, label, anchor="end", bold=True)
        x = x0
        for side in order:
            s.rect(x, y, 30, 30, GREYS)
            s.text(x + 15, y + 20, "f+h", anchor="middle")
            x += 32
            col = BLUE if side == "C" else ORANGE
            s.box(
                x,
                y,
                92,
                30,
                "candidate" if side == "C" else "baseline",
                WHITE if warm else col,
                dash="4 3" if warm else None,
            )
            x += 96
        s.box(x, y, 100, 30, "check both", WHITE if warm else GREEN, dash="4 3" if warm else None)

    round_row("warm-up", "CB", y, warm=True)
    y += 44
    for r in range(4):
        round_row(f"round {r}", "CB" if r % 2 == 0 else "BC", y)
        y += 40
    s.text(x0, y + 6, "f+h: L2 flush (120 MB memset), then 300 µs hold", fill=GREY)
    s.text(16, y + 40, "Stop: both medians' errors ≤ 0.5% after ≥ 10 rounds,")
    s.text(16, y + 59, "or 4 s spent (≥ 3 rounds), or 100 rounds.")
    s.text(16, y + 78, "Report: median, interquartile range, % of baseline.")
    s.h = y + 94
    s.save("42-interleaved")


# ---------------------------------------------------------------------------------------------------------
# Capsule 43
# ---------------------------------------------------------------------------------------------------------


@figure
def f43_step_factors():
    s = Svg(
        430,
        "The speed-up of each step of the SGEMM ladder on the H200",
        "Each step's factor on a logarithmic axis: 01 to 02 coalescing 11.8 times; 02 to 03 shared tiles 1.5; 03 to "
        "04 eight outputs per thread 1.8; 04 to 05 the 8 by 8 outer product 1.02; 05 to 06 float4 loads 1.18; 06 to "
        "07 the autotuned tile 2.1; 07 to 08 warp tiles and prefetch 1.18; 08 to 09 the cp.async ring 0.96, a "
        "slowdown.",
    )
    s.heading("Each rung against the one before it")
    rows = [
        ("01→02 coalesced", 11.8),
        ("02→03 smem tiles", 1.5),
        ("03→04 column of 8", 1.8),
        ("04→05 8 × 8 tile", 1.02),
        ("05→06 float4", 1.18),
        ("06→07 autotuned", 2.1),
        ("07→08 warptiling", 1.18),
        ("08→09 cp.async", 0.96),
    ]
    x0, x1 = 168, 460
    lo, hi = 0.5, 16

    def X(v):
        return x0 + (x1 - x0) * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    y = 50
    for label, f in rows:
        s.text(x0 - 8, y + 18, label, anchor="end")
        a, b = sorted([X(1), X(f)])
        s.rect(a, y, max(b - a, 2), 24, RED if f < 1 else (GREEN if f >= 2 else BLUE))
        if f < 1:
            s.text(a - 6, y + 18, f"×{f}", anchor="end", bold=True)
        elif b + 56 > s.w:
            s.text(b - 6, y + 18, f"×{f}", anchor="end", bold=True)
        else:
            s.text(b + 6, y + 18, f"×{f}", bold=True)
        y += 32
    base = y
    s.line(x0, base, x1, base)
    for v in [0.5, 1, 2, 4, 8, 16]:
        s.line(X(v), base, X(v), base + 5)
        s.text(X(v), base + 21, fmt(v), anchor="middle")
    s.line(X(1), 42, X(1), base, GREY, 1.5, dash="4 3")
    s.text((x0 + x1) / 2, base + 42, "speed-up over the previous rung (log)", anchor="middle")
    s.h = base + 58
    s.save("43-step-factors")


@figure
def f43_occupancy():
    s = Svg(
        420,
        "Resident warps per SM beside the percentage of cuBLAS for every rung",
        "For rungs 01 to 09: resident warps per SM 64, 64, 64, 32, 8, 8, 16, 8 and 8, and percent of cuBLAS 1.0, "
        "11.6, 17.2, 31.4, 32.0, 37.6, 78.3, 92.6 and 88.9. Rungs 05 and 06 stall at one block of 8 warps; rung 07 "
        "doubles its speed at 16 warps; rungs 08 and 09 run 8 warps but hide latency inside the block.",
    )
    s.heading("Occupancy is a means, not the goal")
    warps = {"01": 64, "02": 64, "03": 64, "04": 32, "05": 8, "06": 8, "07": 16, "08": 8, "09": 8}
    data = [(r, w, M(f"sgemm.k{r}.pct_cublas")) for r, w in warps.items()]
    ax0, ax1 = 60, 220
    bx0, bx1 = 270, 440
    y = 76
    s.text((ax0 + ax1) / 2, y - 14, "warps per SM", anchor="middle", bold=True)
    s.text((bx0 + bx1) / 2, y - 14, "% of cuBLAS", anchor="middle", bold=True)
    for rung, warps, pct in data:
        col = RED if rung in ("05", "06") else (GREEN if rung in ("07", "08") else BLUE)
        s.text(16, y + 16, rung, bold=True)
        s.rect(ax0, y, (ax1 - ax0) * warps / 64, 22, GREYS)
        s.text(ax0 + (ax1 - ax0) * warps / 64 + 6, y + 16, str(warps))
        s.rect(bx0, y, max((bx1 - bx0) * pct / 100, 2), 22, col)
        s.text(
            bx0 + (bx1 - bx0) * pct / 100 + 6 if pct < 80 else bx0 + (bx1 - bx0) * pct / 100 - 6,
            y + 16,
            str(pct),
            anchor="start" if pct < 80 else "end",
            bold=True,
        )
        y += 30
    s.line(ax0, 70, ax0, y, GREY, 1)
    s.line(bx0, 70, bx0, y, GREY, 1)
    s.text(16, y + 20, "Red: one block of 8 warps and nothing in flight.", fill=GREY)
    s.text(16, y + 40, "08 and 09: 8 warps, next tile's loads in flight.", fill=GREY)
    s.h = y + 54
    s.save("43-occupancy")


# ---------------------------------------------------------------------------------------------------------
# Capsule 44
# ---------------------------------------------------------------------------------------------------------


@figure
def f44_ceilings():
    s = Svg(
        380,
        "FP32 and FP16 tensor-core throughput on the H200",
        "TFLOP/s measured by the judge: the FFMA ceiling about 63, the best FP32 kernel rung 08 46.9, the first "
        "tensor-core kernel rung 10 102.7, cuBLAS FP16 GEMM at 4096 cubed about 608, and the tensor ceiling "
        "measured as cuBLAS at 8192 cubed 748 to 777. Rung 10 is twice the best FP32 kernel and a sixth of cuBLAS.",
    )
    s.heading("Two ceilings, twelve times apart")
    rows = [
        ("FFMA ceiling", 63, GREYS, "62.3-63.3"),
        ("rung 08 SGEMM", M("sgemm.k08.tflops"), GREYS),
        ("rung 10 WMMA", M("hgemm.k10.tflops"), ORANGE),
        ("cuBLAS FP16 4096³", 608, BLUE, "608"),
        ("tensor ceiling", 777, BLUE, "748-777"),
    ]
    hbars(s, 56, rows, 800, [0, 200, 400, 600, 800], "TFLOP/s on the H200 (judge)", label_w=160, bar_h=28, gap=12)
    s.save("44-ceilings")


@figure
def f44_padded_rows():
    s = Svg(
        440,
        "Banks read by eight rows of a fragment load with 64-byte and 80-byte rows",
        "Each row of the strip is one of eight consecutive rows of A's shared tile, and the coloured cells are the "
        "four banks its 16-byte piece occupies. With a 64-byte pitch, rows 0, 2, 4 and 6 start in bank 0 and rows 1, "
        "3, 5 and 7 in bank 16, so four rows share each group of banks and the read takes four wavefronts. With an "
        "80-byte pitch the rows start at banks 0, 20, 8, 28, 16, 4, 24 and 12: eight disjoint groups, one wavefront.",
    )
    s.heading("Why rung 10 pads A's rows to 40 halves")
    cell = 12
    x0 = 70

    def panel(y, pitch, title, colors):
        s.text(16, y - 10, title, bold=True)
        for r in range(8):
            start = (pitch * r // 4) % 32
            for b in range(32):
                used = (b - start) % 32 < 4
                s.rect(x0 + b * cell, y + r * 16, cell, 14, colors if used else WHITE, sw=0.6)
            s.text(x0 - 8, y + r * 16 + 12, f"row {r}", anchor="end", size=14)
        return y + 8 * 16

    y = panel(66, 64, "Pitch 64 bytes (32 halves): 4 wavefronts", RED)
    s.text(16, y + 22, "Rows 0, 2, 4, 6 all in banks 0-3; 1, 3, 5, 7 in 16-19.", fill=RED[1])
    y = panel(y + 68, 80, "Pitch 80 bytes (40 halves): 1 wavefront", GREEN)
    s.text(16, y + 22, "Starts at banks 0, 20, 8, 28, 16, 4, 24, 12:", fill=GREEN[1])
    s.text(16, y + 42, "eight disjoint groups of four.", fill=GREEN[1])
    s.text(x0, 52 + 0, "", size=14)
    s.h = y + 56
    s.save("44-padded-rows")


@figure
def f44_latency_step():
    s = Svg(
        330,
        "A load latency against one block tile step, in FP32 and on tensor cores",
        "Schematic timelines of one k step of a 128 by 128 by 32 block tile. With FP32 FFMAs the step is about ten "
        "times longer than on tensor cores, and a load latency of several hundred cycles is a small tax. On tensor "
        "cores at cuBLAS's rate the step is about 450 cycles, and the same latency, exposed at the barrier, is as long "
        "as the work.",
    )
    s.heading("The same latency, a much shorter step")
    y = 70
    s.text(16, y - 10, "FP32 FFMAs: the step is about ten times longer", bold=True)
    s.box(16, y, 90, 34, "wait", RED)
    s.box(106, y, 358, 34, "math (continues, ≈ 10× the tensor step)", GREYS)
    y = 160
    s.text(16, y - 10, "Tensor cores: ≈ 450 cycles of work per step", bold=True)
    s.box(16, y, 90, 34, "wait", RED)
    s.box(106, y, 136, 34, "math", GREEN)
    s.box(242, y, 90, 34, "wait", RED)
    s.box(332, y, 132, 34, "math", GREEN)
    s.text(16, y + 64, "wait: a global-load latency of several hundred cycles,", fill=GREY)
    s.text(16, y + 84, "exposed at the barrier while nothing is in flight.", fill=GREY)
    s.text(16, y + 104, "Two resident blocks cannot cover a latency this long.", fill=GREY)
    s.h = y + 120
    s.save("44-latency-step")


# ---------------------------------------------------------------------------------------------------------
# Capsule 45
# ---------------------------------------------------------------------------------------------------------

REG_COLORS = [BLUE, GREEN, ORANGE, PURPLE]


@figure
def f45_fragment_a():
    s = Svg(
        470,
        "Which lane holds which elements of A in mma.sync.m16n8k16",
        "The 16 by 16 A tile drawn as 16 rows by 8 pairs of k values. Lane g times 4 plus t holds, in register a0, row "
        "g and k = 2t, 2t+1; in a1 row g + 8; in a2 row g and k = 2t + 8, 2t + 9; in a3 row g + 8 and the same k. "
        "Each 8 by 8 quarter is one register of every lane, and each row is held by the four lanes of one quad.",
    )
    s.heading("A fragment of m16n8k16: lane 4g + t")
    cw, ch = 48, 22
    x0, y0 = 56, 84
    for c in range(8):
        s.text(x0 + c * cw + cw / 2, y0 - 8, f"{2 * c},{2 * c + 1}", anchor="middle", size=14)
    for r in range(16):
        s.text(x0 - 6, y0 + r * ch + 16, str(r), anchor="end", size=14)
        for c in range(8):
            reg = (1 if r >= 8 else 0) + (2 if c >= 4 else 0)
            g, tt = r % 8, c % 4
            s.rect(x0 + c * cw, y0 + r * ch, cw, ch, REG_COLORS[reg], sw=0.6)
            s.text(x0 + c * cw + cw / 2, y0 + r * ch + 16, f"T{4 * g + tt}", anchor="middle", size=14)
    s.text(16, y0 - 8, "row", size=14, fill=GREY)
    s.text(x0 + 4 * cw, y0 - 30, "k (pairs of halves, one 32-bit register each)", anchor="middle", fill=GREY)
    y = y0 + 16 * ch + 22
    for i in range(4):
        s.rect(16 + i * 112, y - 13, 16, 16, REG_COLORS[i], sw=0.8)
        s.text(38 + i * 112, y, f"a{i}")
    s.text(16, y + 24, "Row g holds in the quad of lanes 4g to 4g + 3.", fill=GREY)
    s.h = y + 36
    s.save("45-fragment-a")


@figure
def f45_ldmatrix():
    s = Svg(
        470,
        "How ldmatrix.x4 fills an A fragment: lanes supply the row addresses",
        "The 16 by 16 A tile in shared memory as four 8 by 8 matrices, each row 16 contiguous bytes. Lanes 0 to 7 give "
        "the addresses of rows 0 to 7 at k 0 to 7 (matrix 0), lanes 8 to 15 rows 8 to 15 at k 0 to 7 (matrix 1), lanes "
        "16 to 23 rows 0 to 7 at k 8 to 15 (matrix 2) and lanes 24 to 31 rows 8 to 15 at k 8 to 15 (matrix 3). After "
        "the instruction, register i of lane (g, t) holds row g, elements 2t and 2t+1 of matrix i: exactly a0 to a3.",
    )
    s.heading("ldmatrix.x4: 32 row addresses, 4 registers")
    x0, y0 = 48, 74
    mw, rh = 184, 20
    s.text(x0 + mw / 2, y0 - 10, "k 0-7", anchor="middle", bold=True)
    s.text(x0 + mw + 8 + mw / 2, y0 - 10, "k 8-15", anchor="middle", bold=True)
    for m in range(4):
        cx = x0 + (mw + 8) * (m // 2)
        cy = y0 + (8 * rh + 8) * (m % 2)
        for r in range(8):
            lane = 8 * m + r
            s.rect(cx, cy + r * rh, mw, rh, REG_COLORS[m], sw=0.6)
            s.text(cx + 8, cy + r * rh + 15, f"lane {lane} →", size=14)
            s.text(cx + mw - 8, cy + r * rh + 15, f"row {r + 8 * (m % 2)}", anchor="end", size=14)
    y = y0 + 2 * (8 * rh + 8) + 20
    for i in range(4):
        s.rect(16 + (i % 2) * 220, y - 13 + 24 * (i // 2), 16, 16, REG_COLORS[i], sw=0.8)
        s.text(38 + (i % 2) * 220, y + 24 * (i // 2), f"matrix {i} → register a{i}")
    s.text(16, y + 52, "Each matrix returns row g, elements 2t, 2t+1 to lane")
    s.text(16, y + 71, "(g, t): one instruction fills a whole A fragment.")
    s.h = y + 84
    s.save("45-ldmatrix")


@figure
def f45_rung11():
    s = Svg(
        400,
        "Rung 10 against rung 11, and the five things rung 11 changed",
        "TFLOP/s at 4096 cubed on the H200: rung 10 with WMMA 102.7, rung 11 with mma.sync and ldmatrix 302.3, "
        "cuBLAS about 608. Rung 11 changed five things at once: a 256 by 128 by 64 block tile, ldmatrix instead of "
        "WMMA's loads, 16-byte padding, a three-stage cp.async ring and a grouped block order; the ladder does not "
        "separate them.",
    )
    s.heading("Rung 11: 2.94 times rung 10")
    rows = [
        ("rung 10 WMMA", M("hgemm.k10.tflops"), ORANGE),
        ("rung 11 mma.sync", M("hgemm.k11.tflops"), GREEN),
        ("cuBLAS", 608, BLUE, "≈ 608"),
    ]
    y = hbars(
        s,
        56,
        rows,
        700,
        [0, 100, 200, 300, 400, 500, 600, 700],
        "TFLOP/s at 4096³ (H200)",
        label_w=150,
        bar_h=28,
        gap=12,
    )
    s.text(16, y, "Changed together in rung 11:", bold=True)
    for i, line in enumerate(
        [
            "256 × 128 × 64 block tile, 16 warps",
            "ldmatrix + mma.sync instead of WMMA",
            "rows padded by 16 bytes",
            "three-stage cp.async ring",
            "grouped block order",
        ]
    ):
        s.text(30, y + 22 + 20 * i, "• " + line)
    s.h = y + 128
    s.save("45-rung11")


# ---------------------------------------------------------------------------------------------------------
# Capsule 46
# ---------------------------------------------------------------------------------------------------------


@figure
def f46_tc_ladder():
    s = Svg(
        330,
        "The FP16 tensor-core ladder as a percentage of cuBLAS",
        "At 4096 cubed on the H200: rung 10 with WMMA 16.9%, rung 11 with mma.sync and ldmatrix 49.9%, rung 12 with "
        "wgmma and a cp.async ring 87.8%, rung 13 with a staged epilogue and a persistent grid 90.3%.",
    )
    s.heading("Rungs 10 to 13 against cuBLAS")
    rows = [
        ("10 WMMA", M("hgemm.k10.pct_cublas"), ORANGE),
        ("11 mma.sync", M("hgemm.k11.pct_cublas"), BLUE),
        ("12 wgmma", M("hgemm.k12.pct_cublas"), GREEN),
        ("13 persistent", 90.3, GREEN),
    ]
    hbars(s, 56, rows, 100, [0, 20, 40, 60, 80, 100], "% of cuBLAS at 4096³ (H200)", label_w=130, bar_h=30, gap=12)
    s.save("46-tc-ladder")


@figure
def f46_ring_state():
    s = Svg(
        400,
        "What each of rung 12's four stages holds at iteration kt",
        "Four shared-memory stages of 48 KB. At iteration kt one holds tile kt, being multiplied by wgmma; one holds "
        "tile kt + 1, landed or landing; one receives tile kt + 2, just issued into the stage that tile kt - 2 used; "
        "and one holds tile kt - 1, whose products may still be running. The lookahead is STAGES - 2 because one stage "
        "belongs to the asynchronous products. Four stages take 197,632 bytes of the 227 KB a block may use.",
    )
    s.heading("Four stages, two asynchronous engines")
    rows = [
        ("tile kt − 1", "its wgmma group may still run", PURPLE),
        ("tile kt", "read by this iteration's wgmma", GREEN),
        ("tile kt + 1", "copies landed or landing", ORANGE),
        ("tile kt + 2", "just issued (tile kt − 2's stage)", YELLOW),
    ]
    y = 52
    for tile, what, col in rows:
        s.box(16, y, 120, 44, tile, col, bold=True)
        s.text(150, y + 27, what)
        y += 54
    s.text(16, y + 16, "wait<1> lets one product group run on; the barrier")
    s.text(16, y + 36, "after it proves tile kt − 2's products are done.")
    s.text(16, y + 66, "Each stage (256 + 128) × 64 × 2 = 49,152 bytes;")
    s.text(16, y + 86, "four take 197,632 of 227 KB: one block per SM.")
    s.h = y + 102
    s.save("46-ring-state")


@figure
def f46_first_wave():
    s = Svg(
        560,
        "The first wave of 132 blocks in row-major and in grouped order",
        "The 16 by 32 grid of 256 by 128 tiles at 4096 cubed, drawn twice. In row-major order the first 132 blocks "
        "cover rows 0 to 3 and four tiles of row 4: 4.1 panels of A (2 MB each) and all 32 panels of B (1 MB each), "
        "40 MB. In grouped order, 8 block rows walked column by column, they cover 8 rows by 16.5 columns: 16 MB of A "
        "and 16.5 MB of B, 32.5 MB.",
    )
    s.heading("Which tiles the first 132 blocks compute")
    cell = 13
    x0 = 32

    def grid(y, title, first, note):
        s.text(16, y - 10, title, bold=True)
        for m in range(16):
            for n in range(32):
                s.rect(x0 + n * cell, y + m * cell, cell, cell, GREEN if (m, n) in first else WHITE, sw=0.4)
        s.text(16, y + 16 * cell + 22, note)
        return y + 16 * cell + 40

    row_major = {(b // 32, b % 32) for b in range(132)}
    grouped = {(b % 8, b // 8) for b in range(132)}
    y = grid(60, "Row-major order", row_major, "4.1 A panels + 32 B panels = 40 MB")
    y = grid(y + 26, "Grouped, 8 block rows at a time", grouped, "8 A panels + 16.5 B panels = 32.5 MB")
    s.h = y - 8
    s.save("46-first-wave")


# ---------------------------------------------------------------------------------------------------------
# Capsule 47
# ---------------------------------------------------------------------------------------------------------


@figure
def f47_intensity():
    s = Svg(
        400,
        "Arithmetic intensity of the gate projection against the number of tokens",
        "Log-log plot of I(T) = TKN / (KN + TK + TN) for K = 4096 and N = 14336: 1.0 FLOP per byte at 1 token, 8.0 at "
        "8, 62.7 at 64, 441 at 512, 1247 at 2048 and 2294 at 8192. The H200's ridge at about 186 FLOP per byte is "
        "crossed between 64 and 512 tokens: decode batches sit below it, prefill above.",
    )
    s.heading("Gate projection: FLOP per byte against T")
    x0, x1, yb, yt = 70, 456, 320, 56
    lx0, lx1, ly0, ly1 = 0, math.log10(8192), 0, math.log10(4000)

    def X(v):
        return x0 + (x1 - x0) * (math.log10(v) - lx0) / (lx1 - lx0)

    def Y(v):
        return yb - (yb - yt) * (math.log10(v) - ly0) / (ly1 - ly0)

    K, N = 4096, 14336
    pts = []
    T = 1.0
    while T <= 8192:
        pts.append((X(T), Y(T * K * N / (K * N + T * K + T * N))))
        T *= 1.15
    s.path("M" + " L".join(f"{fmt(round(px, 1))},{fmt(round(py, 1))}" for px, py in pts), BLUE[1], 2)
    s.line(x0, Y(186), x1, Y(186), RED[1], 1.5, dash="5 3")
    s.text(x0 + 6, Y(186) - 8, "ridge ≈ 186 FLOP/byte", fill=RED[1], bold=True)
    for T, ai in [(1, 1.0), (8, 8.0), (64, 62.7), (512, 441), (2048, 1247), (8192, 2294)]:
        s.parts.append(
            f'<circle cx="{fmt(round(X(T), 1))}" cy="{fmt(round(Y(ai), 1))}" r="5" fill="{BLUE[0]}" '
            f'stroke="{BLUE[1]}" stroke-width="1.5"/>'
        )
        dx, dy, anchor = {1: (8, -8, "start"), 2048: (-8, -10, "end"), 8192: (4, 34, "end")}.get(T, (8, 18, "start"))
        s.text(X(T) + dx, Y(ai) + dy, fmt(ai), anchor=anchor, bold=True)
    s.line(x0, yb, x1, yb)
    s.line(x0, yt, x0, yb)
    for T in [1, 8, 64, 512, 4096]:
        s.line(X(T), yb, X(T), yb + 5)
        s.text(X(T), yb + 21, str(T), anchor="middle")
    for v in [1, 10, 100, 1000]:
        s.line(x0 - 5, Y(v), x0, Y(v))
        s.text(x0 - 8, Y(v) + 5, str(v), anchor="end")
    s.text((x0 + x1) / 2, yb + 42, "tokens T (log)", anchor="middle")
    s.text(16, yt - 8 + 0, "FLOP/byte", fill=GREY)
    s.h = yb + 56
    s.save("47-intensity")


@figure
def f47_floors():
    s = Svg(
        360,
        "Compute time against weight-reading time for prefill and for one decode step",
        "Lower bounds on one H200 for the Llama-3-8B-shaped model, on a logarithmic axis in milliseconds. Prefill of "
        "2,048 tokens: about 38 ms of tensor-core arithmetic against 3.8 ms to read the weights once, so compute sets "
        "the floor. One decode step: 3.8 ms to read the weights against about 20 microseconds of arithmetic, so bytes "
        "set the floor.",
    )
    s.heading("What sets each phase's floor")
    rows = [
        ("prefill: arithmetic", 38, GREEN, "≈ 38 ms"),
        ("prefill: weights", 3.8, GREYS, "3.8 ms"),
        ("decode: weights", 3.8, BLUE, "3.8 ms"),
        ("decode: arithmetic", 0.02, GREYS, "≈ 20 µs"),
    ]
    y = hbars(
        s,
        56,
        rows,
        100,
        [0.01, 0.1, 1, 10, 100],
        "milliseconds per pass (log)",
        label_w=160,
        bar_h=28,
        gap=12,
        log=True,
        vmin=0.01,
    )
    s.text(16, y, "Prefill: 2,048-token prompt at 780 TFLOP/s (TTFT).", fill=GREY)
    s.text(16, y + 20, "Decode: 16 GB of BF16 weights at 4.2 TB/s (TPOT).", fill=GREY)
    s.h = y + 34
    s.save("47-floors")


# ---------------------------------------------------------------------------------------------------------
# Capsule 48
# ---------------------------------------------------------------------------------------------------------


@figure
def f48_glue():
    s = Svg(
        400,
        "Bytes moved by the glue of one decoder layer in eager prefill, and its time next to the GEMMs",
        "Prefill of 8,192 tokens through one Llama-3-8B-shaped layer, run eagerly: two RMSNorms move 2.42 GB, two "
        "residual adds 0.40 GB, SiLU and the multiply 1.17 GB, about 4 GB before rotary embeddings. At 4.2 TB/s that "
        "is about a millisecond, against about 4.6 ms for the seven projections at 780 TFLOP/s.",
    )
    s.heading("Glue between GEMMs, one layer, T = 8192")
    rows = [
        ("RMSNorm × 2", 2.42, RED),
        ("residual add × 2", 0.40, ORANGE, "0.40"),
        ("SiLU, multiply", 1.17, ORANGE),
    ]
    y = hbars(s, 56, rows, 3, [0, 1, 2, 3], "GB moved (eager, one kernel per op)", label_w=150, bar_h=28, gap=12)
    s.text(16, y - 4, "Time at the machine's limits:", bold=True)
    x0, scale = 150, 300 / 5.0
    s.text(x0 - 8, y + 26, "7 projections", anchor="end")
    s.box(x0, y + 8, 4.6 * scale, 28, "≈ 4.6 ms", BLUE)
    s.text(x0 - 8, y + 66, "glue ≈ 4 GB", anchor="end")
    s.box(x0, y + 48, 0.95 * scale, 28, "", RED)
    s.text(x0 + 0.95 * scale + 8, y + 67, "≈ 1 ms, over a fifth", bold=True)
    s.h = y + 92
    s.save("48-glue")


@figure
def f48_kinds():
    s = Svg(
        520,
        "Five kinds of fusion",
        "Elementwise chains: element i in, element i out, one thread per element. Reduction then elementwise: a row's "
        "statistic, then every element of the row scaled by it, one block or warp per row. Horizontal: the query, key "
        "and value weights concatenated into one matrix, one GEMM reading the input once. Epilogue: bias, activation "
        "and residual applied to the accumulators in registers before the single store. Prologue: 4-bit weights "
        "dequantised in registers after the load, before the tensor cores.",
    )
    s.heading("Five kinds of fusion")
    items = [
        ("Elementwise chain", ["x[i]", "f", "g", "y[i]"]),
        ("Reduction, then elementwise", ["row", "Σ or max", "scale row", "y"]),
        ("Horizontal", ["x", "[Wq | Wk | Wv]", "q, k, v"]),
        ("Epilogue (in a GEMM)", ["acc (regs)", "+bias, act", "+res", "store"]),
        ("Prologue (in a GEMM)", ["load int4", "dequant", "tensor core"]),
    ]
    y = 56
    for title, steps in items:
        s.text(16, y, title, bold=True)
        n = len(steps)
        bw = (448 - 26 * (n - 1)) / n
        for i, st in enumerate(steps):
            x = 16 + i * (bw + 26)
            s.box(x, y + 10, bw, 36, st, GREEN if i in (0, n - 1) else BLUE)
            if i < n - 1:
                s.line(x + bw + 2, y + 28, x + bw + 24, y + 28, INK, 1.5, arrow=True)
        y += 88
    s.text(16, y - 12, "Green boxes touch memory; blue ones stay in registers.", fill=GREY)
    s.h = y + 2
    s.save("48-kinds")


@figure
def f48_bytes():
    s = Svg(
        380,
        "Bytes per element unfused and fused for three cases in this capsule",
        "RMSNorm: 36 bytes per element over eight eager kernels, 4 fused. GEMM epilogue of bias, activation and "
        "residual: 12 bytes per output element as separate kernels, 4 fused. SwiGLU's silu(g) times u: 10 bytes per "
        "element as two kernels, 6 fused.",
    )
    s.heading("Bytes per element: unfused against fused")
    rows = [
        ("RMSNorm, eager", 36, RED),
        ("RMSNorm, fused", 4, GREEN),
        ("epilogue, 3 kernels", 12, RED),
        ("epilogue, fused", 4, GREEN),
        ("SwiGLU, 2 kernels", 10, RED),
        ("SwiGLU, fused", 6, GREEN),
    ]
    hbars(s, 56, rows, 40, [0, 10, 20, 30, 40], "bytes of HBM traffic per element", label_w=160, bar_h=24, gap=8)
    s.save("48-bytes")


# ---------------------------------------------------------------------------------------------------------
# Capsule 49
# ---------------------------------------------------------------------------------------------------------


@figure
def f49_traffic():
    s = Svg(
        330,
        "Bytes per element that each softmax variant moves",
        "The three-pass kernel reads x three times and writes y once, 16 bytes per element, though its second and "
        "third reads mostly hit L2; the online kernel with two passes over global memory reads x twice, 12 bytes; the "
        "online kernel that keeps the row on chip reads x once and writes y once, 8 bytes, the minimum.",
    )
    s.heading("Softmax traffic per element (FP32)")
    rows = [
        ("three passes", 16, RED, "16: 3 reads + 1 write"),
        ("online, 2 passes", 12, ORANGE, "12: 2 reads + 1 write"),
        ("online, row on chip", 8, GREEN, "8: the minimum"),
    ]
    y = hbars(
        s, 56, rows, 20, [0, 4, 8, 12, 16, 20], "bytes per element through L2 or HBM", label_w=160, bar_h=30, gap=12
    )
    s.text(16, y, "Speed of light: 8 bytes × elements / 4.2 TB/s,", fill=GREY)
    s.text(16, y + 20, "about 32 µs for 4096 × 4096.", fill=GREY)
    s.h = y + 34
    s.save("49-traffic")


@figure
def f49_merge():
    s = Svg(
        430,
        "Merging two partial softmax statistics for the row 2, 1, 5, 3, 9, 4",
        "The row is split between two threads. The first summarises 2, 1, 5 as maximum 5 and sum 1.068 (e to the -3, "
        "e to the -4 and 1); the second summarises 3, 9, 4 as maximum 9 and sum 1.009. Merging gives maximum 9 and sum "
        "1.068 times e to the -4 plus 1.009, which is 1.029: the same as the one-element-at-a-time recurrence.",
    )
    s.heading("Merging two partial statistics (m, d)")
    y = 60
    s.text(16, y, "x =", bold=True)
    for i, v in enumerate([2, 1, 5, 3, 9, 4]):
        s.box(60 + i * 66 + (20 if i >= 3 else 0), y - 22, 56, 32, str(v), GREYS if i < 3 else BLUE)
    y = 130
    s.box(40, y, 180, 64, ["m_a = 5", "d_a = 1.068"], GREYS, bold=True)
    s.box(260, y, 180, 64, ["m_b = 9", "d_b = 1.009"], BLUE, bold=True)
    s.line(150, 74, 130, y - 2, INK, 1.5, arrow=True)
    s.line(330, 74, 350, y - 2, INK, 1.5, arrow=True)
    y = 250
    s.line(130, 196, 220, y - 2, INK, 1.5, arrow=True)
    s.line(350, 196, 260, y - 2, INK, 1.5, arrow=True)
    s.box(110, y, 260, 64, ["m = max(5, 9) = 9", "d = 1.068·e⁻⁴ + 1.009·e⁰"], GREEN, bold=True)
    s.text(240, y + 94, "= 0.020 + 1.009 = 1.029", anchor="middle", bold=True)
    s.text(16, y + 130, "Threads, then warps by shuffles, then blocks:", fill=GREY)
    s.text(16, y + 150, "the merge is associative, so any tree works.", fill=GREY)
    s.h = y + 164
    s.save("49-merge")


@figure
def f49_long_rows():
    s = Svg(
        390,
        "One block per row at 32 rows of 131,072 leaves most SMs idle",
        "The H200's 132 SMs drawn as a grid. With one block per row, the 32 by 131072 benchmark occupies 32 SMs and "
        "leaves 100 idle, and no single SM can pull a quarter of the chip's bandwidth; the 4096 by 4096 benchmark has "
        "4,096 rows, enough blocks for every SM many times over.",
    )
    s.heading("32 × 131072 with one block per row")
    x0, y0, c = 40, 52, 32
    for i in range(132):
        r, col = divmod(i, 12)
        s.rect(x0 + col * (c + 2), y0 + r * (c + 2), c, c, GREEN if i < 32 else WHITE, sw=0.8)
    y = y0 + 11 * (c + 2) + 24
    s.rect(16, y - 13, 16, 16, GREEN, sw=0.8)
    s.text(38, y, "an SM with a row: 32 of 132")
    s.text(16, y + 24, "Split each row across blocks and merge their (m, d).", fill=GREY)
    s.h = y + 38
    s.save("49-long-rows")


# ---------------------------------------------------------------------------------------------------------
# Capsule 50
# ---------------------------------------------------------------------------------------------------------


@figure
def f50_block_sum():
    s = Svg(
        430,
        "How a block of 256 threads reduces a row's sum of squares",
        "Eight warps of 32 threads. In each warp five butterfly shuffles add the 32 partial sums without touching "
        "memory; lane 0 of each warp writes its warp's sum to one of 8 floats in shared memory; after one barrier "
        "every "
        "thread adds the 8 values and computes 1 / rms, then scales the 16 values of x it still holds in registers.",
    )
    s.heading("block_sum: shuffles, 8 floats, one barrier")
    y = 52
    for w in range(8):
        s.box(16 + w * 56, y, 50, 44, [f"w{w}"], BLUE)
    s.text(16, y + 66, "each warp: 5 shuffle steps (16, 8, 4, 2, 1)", fill=GREY)
    y = 150
    for w in range(8):
        s.box(16 + w * 56, y, 50, 34, "Σ", ORANGE)
    s.text(16, y + 56, "lane 0 of each warp → warp_sums[8] in shared memory", fill=GREY)
    y = 240
    s.rect(16, y, 448, 6, GREYS)
    s.text(240, y + 28, "__syncthreads()", anchor="middle", bold=True)
    y = 300
    s.box(16, y, 448, 44, "every thread: Σ of 8 values → rsqrt(mean + ε)", GREEN)
    s.text(16, y + 74, "Then each thread scales the 16 values it holds:", fill=GREY)
    s.text(16, y + 94, "x crosses HBM once, y once: 4 bytes per element.", fill=GREY)
    s.h = y + 108
    s.save("50-block-sum")


@figure
def f50_fused_bytes():
    s = Svg(
        330,
        "Bytes per element with and without the two fusions of this capsule",
        "Residual add then RMSNorm: 10 bytes per element in two kernels, 8 fused. RMSNorm then FP8 quantisation: 7 "
        "bytes per element in two kernels, 3 fused, plus one scale per row.",
    )
    s.heading("Fusing the neighbours of a norm")
    rows = [
        ("add, then norm", 10, RED),
        ("add + norm fused", 8, GREEN),
        ("norm, then FP8", 7, RED),
        ("norm + FP8 fused", 3, GREEN),
    ]
    hbars(s, 56, rows, 12, [0, 2, 4, 6, 8, 10, 12], "bytes of HBM traffic per element", label_w=160, bar_h=28, gap=12)
    s.save("50-fused-bytes")


# ---------------------------------------------------------------------------------------------------------
# Capsule 51
# ---------------------------------------------------------------------------------------------------------


@figure
def f51_score_growth():
    s = Svg(
        370,
        "Size of the FP32 score matrix against sequence length and heads",
        "Bytes of S = 4 b h N squared, on a logarithmic axis in GiB: 64 MiB for one head at N = 4096; 1 GiB for one "
        "head at N = 16384; 8 GiB for 8 heads at 16384, the judge's largest benchmark; 32 GiB for 32 heads at 16384; "
        "64 GiB for one head at 128K tokens.",
    )
    s.heading("The score matrix grows as N²")
    rows = [
        ("N = 4096, 1 head", 0.0625, BLUE, "64 MiB"),
        ("N = 16384, 1 head", 1, BLUE, "1 GiB"),
        ("16384, 8 heads", 8, ORANGE, "8 GiB"),
        ("16384, 32 heads", 32, RED, "32 GiB"),
        ("N = 128K, 1 head", 64, RED, "64 GiB"),
    ]
    hbars(
        s,
        56,
        rows,
        100,
        [0.01, 0.1, 1, 10, 100],
        "GiB of FP32 scores (log)",
        label_w=160,
        bar_h=26,
        gap=10,
        log=True,
        vmin=0.01,
    )
    s.save("51-score-growth")


@figure
def f51_time_split():
    s = Svg(
        330,
        "Time of the two GEMMs against the time of the memory traffic in naive attention",
        "One head at N = 4096 and d = 128: the two products, 8.6 GFLOP, take about 11 microseconds at 780 TFLOP/s; "
        "the 324 MiB of traffic take about 80 microseconds at 4.2 TB/s. The pipeline's intensity is about d / 5, 26 "
        "FLOP per byte, far below the ridge of about 186.",
    )
    s.heading("Naive attention is memory-bound")
    rows = [
        ("2 GEMMs, 8.6 GFLOP", 11, GREEN, "≈ 11 µs"),
        ("324 MiB of traffic", 80, RED, "≈ 80 µs"),
    ]
    y = hbars(
        s, 56, rows, 100, [0, 20, 40, 60, 80, 100], "µs per head, N = 4096, d = 128", label_w=170, bar_h=32, gap=14
    )
    s.text(16, y, "Intensity 4N²d / ≈ 20N² = d / 5 ≈ 26 FLOP/byte,", fill=GREY)
    s.text(16, y + 20, "against a ridge of about 186. Faster GEMMs barely help.", fill=GREY)
    s.h = y + 34
    s.save("51-time-split")


@figure
def f51_head_sharing():
    s = Svg(
        440,
        "Multi-head, grouped-query and multi-query attention",
        "Eight query heads drawn above their key-value heads. Multi-head: each query head has its own K and V, eight "
        "KV heads. Grouped-query: groups of four query heads share one KV head, two KV heads, the ratio of Llama 3 "
        "8B's 32 query heads and 8 KV heads. Multi-query: all eight share one KV head. Query head t reads KV head "
        "floor(t times h_kv / h).",
    )
    s.heading("Which K and V each query head reads")
    panels = [
        ("Multi-head (MHA): h_kv = h", 8, BLUE),
        ("Grouped-query (GQA): groups of 4", 2, GREEN),
        ("Multi-query (MQA): h_kv = 1", 1, ORANGE),
    ]
    y = 56
    for title, kv, col in panels:
        s.text(16, y, title, bold=True)
        qy, ky = y + 12, y + 72
        for q in range(8):
            s.box(24 + q * 56, qy, 44, 26, f"q{q}", GREYS)
        kw = 448 / kv
        for k in range(kv):
            cx = 16 + kw * k + kw / 2
            s.box(cx - 22 if kv == 8 else cx - 40, ky, 44 if kv == 8 else 80, 26, f"kv{k}", col)
        for q in range(8):
            k = q * kv // 8
            cx = 16 + kw * k + kw / 2
            s.line(24 + q * 56 + 22, qy + 26, cx, ky, GREY, 1)
        y += 120
    s.text(16, y + 4, "Query head t reads KV head ⌊t · h_kv / h⌋.", fill=GREY)
    s.h = y + 18
    s.save("51-head-sharing")


# ---------------------------------------------------------------------------------------------------------
# Capsule 52
# ---------------------------------------------------------------------------------------------------------


@figure
def f52_tile_update():
    s = Svg(
        470,
        "The per-row update when one tile of scores arrives",
        "Per query row the kernel carries m, l and o between tiles. A new tile brings scores s_1 to s_Bc, kept on "
        "chip. "
        "The new maximum m' is the larger of m and the tile's maximum; the factor alpha = e^(m - m') rescales the "
        "past; "
        "the tile's weights are p_c = e^(s_c - m'); the new sum is alpha l plus the sum of p_c; the new output is "
        "alpha l o plus the sum of p_c v_c, divided by the new sum. m', l' and o' are carried to the next tile.",
    )
    s.heading("One query row, one new tile")
    s.box(16, 50, 200, 56, ["carried: m, ℓ, o", "(from earlier tiles)"], GREYS)
    s.box(264, 50, 200, 56, ["tile: s₁ … s_Bc", "and v₁ … v_Bc (on chip)"], BLUE)
    s.line(116, 108, 200, 140, INK, 1.5, arrow=True)
    s.line(364, 108, 280, 140, INK, 1.5, arrow=True)
    s.box(90, 142, 300, 40, "m′ = max(m, max_c s_c)", ORANGE, bold=True)
    s.line(180, 184, 130, 214, INK, 1.5, arrow=True)
    s.line(300, 184, 350, 214, INK, 1.5, arrow=True)
    s.box(16, 216, 214, 40, "α = e^(m − m′) ≤ 1", ORANGE)
    s.box(250, 216, 214, 40, "p_c = e^(s_c − m′)", ORANGE)
    s.line(123, 258, 123, 286, INK, 1.5, arrow=True)
    s.line(357, 258, 357, 286, INK, 1.5, arrow=True)
    s.box(16, 288, 448, 40, "ℓ′ = α ℓ + Σ p_c", GREEN)
    s.box(16, 338, 448, 40, "o′ = (α ℓ o + Σ p_c v_c) / ℓ′", GREEN)
    s.text(16, 408, "α rescales everything accumulated against the old", fill=GREY)
    s.text(16, 428, "maximum; on the first tile m = −∞ gives α = 0.", fill=GREY)
    s.text(16, 448, "m′, ℓ′, o′ are carried to the next tile.", fill=GREY)
    s.h = 462
    s.save("52-tile-update")


@figure
def f52_loop_order():
    s = Svg(
        420,
        "The original FlashAttention loop order over tiles",
        "A 4 by 4 grid of score tiles, query blocks Q_0 to Q_3 down and key blocks K_0 to K_3 across, numbered in the "
        "order they are visited: column by column. The outer loop loads each K_j and V_j into shared memory once; the "
        "inner loop visits every query block, reading Q_i, its output and its statistics from HBM and writing the "
        "output "
        "and statistics back, once per key tile.",
    )
    s.heading("Version one: key tiles outside, queries inside")
    x0, y0, c = 70, 80, 56
    for j in range(4):
        s.text(x0 + j * c + c / 2, y0 - 10, f"K{j}, V{j}", anchor="middle", bold=True)
    for i in range(4):
        s.text(x0 - 8, y0 + i * c + c / 2 + 5, f"Q{i}", anchor="end", bold=True)
        for j in range(4):
            s.box(x0 + j * c, y0 + i * c, c, c, str(4 * j + i + 1), GREEN if j == 1 else GREYS)
    for j in range(4):
        s.line(x0 + j * c + c - 8, y0 + 8, x0 + j * c + c - 8, y0 + 4 * c - 6, BLUE[1], 1.5, arrow=True)
    tx = 316
    for k, line in enumerate(
        [
            "Numbers: visit order.",
            "",
            "K_j, V_j: loaded",
            "once each.",
            "",
            "Q_i, O_i, m_i, ℓ_i:",
            "read and written",
            "once per key tile,",
            "N / B_c times.",
        ]
    ):
        if line:
            s.text(tx, y0 + 12 + 20 * k, line)
    y = y0 + 4 * c + 34
    s.text(16, y, "Bytes ≈ 2Nd·b_kv + (N²d / B_c)(b_q + 2b_o):", bold=True)
    s.text(16, y + 22, "still N², but with d / B_c in place of the naive")
    s.text(16, y + 42, "kernel's 20-odd bytes per score, and no N² workspace.")
    s.h = y + 56
    s.save("52-loop-order")


@figure
def f52_backward():
    s = Svg(
        380,
        "What the forward pass keeps for the backward pass, standard against FlashAttention",
        "Standard attention saves the probability matrix P, N by N, 64 MiB per head at N = 4096 in FP32, and the "
        "backward pass reads it back. FlashAttention saves the output O and one log-sum-exp L per query row, 16 KiB "
        "per "
        "head at N = 4096, and recomputes each tile of P as e^(S_ij - L_i) from Q and K: more FLOPs, no N squared "
        "storage or reads.",
    )
    s.heading("Saved for backward: P, or only L")
    s.text(16, 62, "Standard", bold=True, fill=RED[1])
    s.box(16, 74, 200, 120, ["P: N × N", "64 MiB per head", "(N = 4096, FP32)"], RED)
    s.text(264, 62, "FlashAttention", bold=True, fill=GREEN[1])
    s.box(264, 74, 200, 30, "L = m + ln ℓ: N floats", GREEN)
    s.text(364, 124, "16 KiB per head", anchor="middle")
    s.box(264, 144, 200, 50, ["recompute each tile:", "P_ij = e^(S_ij − L_i)"], BLUE)
    s.text(16, 232, "The backward pass reads P: N² again.", fill=RED[1])
    s.text(16, 256, "FlashAttention redoes QKᵀ tile by tile instead:", fill=GREEN[1])
    s.text(16, 276, "extra FLOPs, no N² storage, no N² reads. The kernel", fill=GREEN[1])
    s.text(16, 296, "was memory-bound, so the trade pays.", fill=GREEN[1])
    s.text(16, 330, "Both also keep O (N × d), 1 MiB per head in BF16.", fill=GREY)
    s.h = 346
    s.save("52-backward")


# ---------------------------------------------------------------------------------------------------------
# Capsule 53
# ---------------------------------------------------------------------------------------------------------


@figure
def f53_nonmatmul():
    s = Svg(
        300,
        "Matrix-multiply throughput against ordinary FP32 throughput on the A100",
        "From the A100's specification: 312 TFLOP/s of FP16 tensor-core matmul against 19.5 TFLOP/s of FP32 on the "
        "ordinary pipes, so each non-matmul FLOP costs about 16 times as much as a matmul FLOP.",
    )
    s.heading("A100: why the softmax must stay lean")
    rows = [("FP16 tensor cores", 312, GREEN), ("FP32 ordinary pipes", 19.5, RED)]
    y = hbars(
        s, 56, rows, 350, [0, 50, 100, 150, 200, 250, 300, 350], "TFLOP/s (spec sheet)", label_w=170, bar_h=32, gap=14
    )
    s.text(16, y, "312 / 19.5 = 16: one exponential or rescale costs", fill=GREY)
    s.text(16, y + 20, "as much time as 16 FLOPs of matrix multiply.", fill=GREY)
    s.h = y + 34
    s.save("53-nonmatmul")


@figure
def f53_grid():
    s = Svg(
        330,
        "Thread blocks per launch in FlashAttention version one and version two",
        "At N = 16384, query tiles of 128 rows, a batch of 2 and 16 heads: version one launches one block per batch "
        "and "
        "head, 32 blocks, fewer than the 132 SMs; version two launches one block per query tile, head and batch, 4,096 "
        "blocks. Logarithmic axis.",
    )
    s.heading("Blocks per launch (batch 2, 16 heads)")
    rows = [("v1: (batch, head)", 32, RED), ("v2: + query tile", 4096, GREEN)]
    y = hbars(
        s,
        70,
        rows,
        10000,
        [10, 100, 1000, 10000],
        "thread blocks (log), N = 16384, B_r = 128",
        label_w=160,
        bar_h=32,
        gap=14,
        log=True,
        vmin=10,
        refs=[(132, "132 SMs", BLUE[1])],
    )
    s.text(16, y, "v1 leaves 100 of 132 SMs idle; v2's blocks of one head", fill=GREY)
    s.text(16, y + 20, "stream the same K and V, so L2 serves most reads.", fill=GREY)
    s.h = y + 34
    s.save("53-grid")


@figure
def f53_warp_split():
    s = Svg(
        400,
        "Splitting a tile among four warps by keys and by queries",
        "Left, version one: the four warps split the key columns of the score tile, so each warp holds a partial "
        "product for all 64 query rows, and the four partials must be rescaled and summed through shared memory with "
        "barriers. Right, version two: warp w owns query rows 16w to 16w + 15 against the whole key tile, computes "
        "their "
        "scores, softmax and output alone, and shares only the K and V tile in shared memory.",
    )
    s.heading("Four warps, one tile: split keys or queries")
    cols = [BLUE, GREEN, ORANGE, PURPLE]
    tw, th = 200, 200
    x1, x2, y0 = 16, 264, 80
    s.text(x1, y0 - 12, "v1: warps split keys", bold=True, fill=RED[1])
    s.text(x2, y0 - 12, "v2: warps split queries", bold=True, fill=GREEN[1])
    for w in range(4):
        s.box(x1 + w * tw / 4, y0, tw / 4, th, f"w{w}", cols[w])
        s.box(x2, y0 + w * th / 4, tw, th / 4, f"warp {w}: rows {16 * w}-{16 * w + 15}", cols[w])
    s.text(x1 + tw / 2, y0 + th + 22, "keys →", anchor="middle", fill=GREY)
    s.text(x2 + tw / 2, y0 + th + 22, "keys →", anchor="middle", fill=GREY)
    y = y0 + th + 56
    s.text(16, y, "v1: every warp has a partial P̃V for all rows;", fill=RED[1])
    s.text(16, y + 20, "the four meet in shared memory, with barriers.", fill=RED[1])
    s.text(16, y + 48, "v2: each warp owns its rows outright; only K_j, V_j", fill=GREEN[1])
    s.text(16, y + 68, "are shared, and only read.", fill=GREEN[1])
    s.h = y + 82
    s.save("53-warp-split")


# ---------------------------------------------------------------------------------------------------------
# Capsule 54
# ---------------------------------------------------------------------------------------------------------


@figure
def f54_exp_budget():
    s = Svg(
        400,
        "Softmax and matrix multiplies run in series and overlapped",
        "On the H100, per score at d = 128 the exponential on the special-function units takes half as long as both "
        "GEMMs on the tensor cores. Drawn in those units: run one after the other, each tile is QK-transpose, then the "
        "exponentials, then PV, and the tensor cores idle a third of the time. Overlapped, the exponentials of one "
        "tile "
        "run while the tensor cores multiply another, and the tensor cores stay busy.",
    )
    s.heading("Exponentials: half the time of both GEMMs")
    u = 50
    x0 = 112

    def lane(y, label, segs):
        s.text(x0 - 8, y + 21, label, anchor="end")
        s.rect(x0, y, 6 * u + 48, 32, WHITE, dash="3 3")
        for a, b, name, col in segs:
            s.box(x0 + a * u, y, (b - a) * u, 32, name, col)

    s.text(16, 62, "In series (capsule 53's loop)", bold=True)
    lane(72, "tensor", [(0, 1, "QKᵀ", GREEN), (2, 3, "PV", GREEN), (3, 4, "QKᵀ", GREEN), (5, 6, "PV", GREEN)])
    lane(110, "SFU", [(1, 2, "exp", ORANGE), (4, 5, "exp", ORANGE)])
    s.text(16, 170, "tensor cores idle 1/3 of the time", fill=RED[1], bold=True)
    s.text(16, 212, "Overlapped (two warpgroups, or a pipeline)", bold=True)
    lane(
        222,
        "tensor",
        [
            (0, 1, "QKᵀ", GREEN),
            (1, 2, "QKᵀ", BLUE),
            (2, 3, "PV", GREEN),
            (3, 4, "PV", BLUE),
            (4, 5, "QKᵀ", GREEN),
            (5, 6, "QKᵀ", BLUE),
        ],
    )
    lane(260, "SFU", [(1, 2, "exp", GREEN), (2, 3, "exp", BLUE), (5, 6, "exp", GREEN)])
    s.text(16, 320, "t_exp / t_matmul = 989 / (3.9 × 512) ≈ 0.5", bold=True)
    s.text(16, 342, "(H100 SXM: 989 TFLOP/s matmul, 3.9 TFLOP/s SFU).", fill=GREY)
    s.text(16, 366, "Green and blue: two warpgroups' tiles.", fill=GREY)
    s.h = 380
    s.save("54-exp-budget")


@figure
def f54_producer_consumer():
    s = Svg(
        470,
        "FlashAttention-3's warpgroups and the K/V ring between them",
        "One thread block: a producer warpgroup, shrunk to about 40 registers a thread, in which one thread issues TMA "
        "copies of Q once and of K_j and V_j into a ring of shared-memory stages, each with a full barrier; two "
        "consumer "
        "warpgroups, grown to 232 registers, each owning 64 query rows, wait on a stage's full barrier, run the score "
        "and output GEMMs with wgmma and the softmax, then arrive on the stage's empty barrier so the producer may "
        "refill it.",
    )
    s.heading("Producer, ring, consumers")
    s.box(16, 52, 448, 56, ["producer warpgroup (setmaxnreg 40)", "one thread issues TMA: Q once, K_j and V_j"], YELLOW)
    y = 150
    for k in range(3):
        s.box(16 + k * 152, y, 144, 50, [f"smem stage {k}", "K_j, V_j"], BLUE)
    s.line(240, 110, 240, y - 2, INK, 1.5, arrow=True)
    s.text(250, 134, "TMA; full barrier counts bytes")
    y2 = 270
    s.line(160, y + 52, 130, y2 - 2, INK, 1.5, arrow=True)
    s.line(320, y + 52, 350, y2 - 2, INK, 1.5, arrow=True)
    s.box(16, y2, 216, 76, ["consumer WG 1", "query rows 0-63", "(setmaxnreg 232)"], GREEN)
    s.box(248, y2, 216, 76, ["consumer WG 2", "query rows 64-127", "(setmaxnreg 232)"], GREEN)
    s.text(16, y2 + 106, "Each consumer: wait full → S = QKᵀ (wgmma) →", fill=GREY)
    s.text(16, y2 + 126, "online softmax → O += P̃V (wgmma, P̃ from registers)", fill=GREY)
    s.text(16, y2 + 146, "→ arrive on the stage's empty barrier: refill it.", fill=GREY)
    s.h = y2 + 160
    s.save("54-producer-consumer")


@figure
def f54_rung_results():
    s = Svg(
        360,
        "The book's Hopper attention rung on the H200",
        "At one batch of 8 heads, sequence 16384 and head dimension 128: 525 TFLOP/s before the exponential was "
        "written as one fused multiply-add feeding ex2.approx, 672 after it without a mask, and 665 with the causal "
        "mask. "
        "PyTorch's fastest backend there, cuDNN, takes 98% and 113% of the rung's time.",
    )
    s.heading("Rung 04 (wgmma + TMA), N = 16384, d = 128")
    rows = [
        ("before fused exp", 525, GREYS),
        ("non-causal", 672, GREEN),
        ("causal", 665, GREEN),
    ]
    y = hbars(s, 56, rows, 800, [0, 200, 400, 600, 800], "TFLOP/s on the H200", label_w=150, bar_h=30, gap=12)
    s.text(16, y, "cuDNN takes 98% (non-causal) and 113% (causal)", fill=GREY)
    s.text(16, y + 20, "of the rung's time. Ping-pong added nothing", fill=GREY)
    s.text(16, y + 40, "measurable once the exponential was fixed.", fill=GREY)
    s.h = y + 54
    s.save("54-rung-results")


# ---------------------------------------------------------------------------------------------------------
# Second pass: more figures where the text calls for them
# ---------------------------------------------------------------------------------------------------------


@figure
def f37_width():
    s = Svg(
        300,
        "Bytes moved per warp-wide load instruction at 32 and at 128 bits",
        "A warp-wide 32-bit load moves 32 times 4 bytes, 128 bytes, for one issue slot; a warp-wide 128-bit load, one "
        "float4 per lane, moves 32 times 16 bytes, 512 bytes, for the same one issue slot, one place in the load queue "
        "and one address computation.",
    )
    s.heading("One instruction, four times the bytes")
    x0, scale = 16, 448 / 512
    s.text(16, 66, "LDG.32 / LDS.32: 32 lanes × 4 bytes", bold=True)
    s.rect(x0, 76, 128 * scale, 34, BLUE)
    s.text(x0 + 128 * scale + 8, 98, "128 bytes", bold=True)
    s.text(16, 146, "LDG.128 / LDS.128: 32 lanes × 16 bytes (float4)", bold=True)
    s.rect(x0, 156, 512 * scale, 34, GREEN)
    s.text(x0 + 512 * scale - 8, 178, "512 bytes", anchor="end", bold=True)
    for k in range(1, 4):
        s.line(x0 + 128 * scale * k, 156, x0 + 128 * scale * k, 190, GREEN[1], 1, dash="3 3")
    s.text(16, 226, "Each costs one issue slot, one load-queue entry and", fill=GREY)
    s.text(16, 246, "one address; a float4 must be 16-byte aligned.", fill=GREY)
    s.h = 262
    s.save("37-width")


@figure
def f37_load_phase():
    s = Svg(
        360,
        "Instructions per thread per tile in the load phase, kernel 5 against kernel 6",
        "Per thread and tile: kernel 5 issues 8 scalar global loads, 8 shared stores and 8 bounds tests; kernel 6 "
        "issues 2 vector loads, 5 shared stores and 2 tests. With one block per SM the load phase overlaps nothing, so "
        "every instruction removed shows in the run time.",
    )
    s.heading("Load phase, per thread and tile")
    rows = [
        ("global loads, k5", 8, GREYS),
        ("global loads, k6", 2, GREEN),
        ("shared stores, k5", 8, GREYS),
        ("shared stores, k6", 5, GREEN),
        ("bounds tests, k5", 8, GREYS),
        ("bounds tests, k6", 2, GREEN),
    ]
    hbars(s, 56, rows, 10, [0, 2, 4, 6, 8, 10], "instructions per thread per tile", label_w=160, bar_h=24, gap=8)
    s.save("37-load-phase")


@figure
def f41_stream_k():
    s = Svg(
        420,
        "Data-parallel tiles against stream-K on four SMs, an example",
        "An example of five output tiles of four k-iterations each on four SMs. Data-parallel: four tiles run in the "
        "first wave and the fifth alone in a second, three SMs idle for half the time. Stream-K: the twenty iterations "
        "are divided evenly, five per SM, so a block may finish one tile and start part of the next; tiles shared by "
        "two blocks are combined by a fix-up, and all SMs finish together.",
    )
    s.heading("An example: 5 tiles × 4 k-steps, 4 SMs")
    cols = [BLUE, GREEN, ORANGE, PURPLE, YELLOW]
    x0, u = 70, 46
    y = 70
    s.text(16, y - 12, "Data-parallel: one tile per block", bold=True)
    for sm in range(4):
        s.text(x0 - 8, y + 20 + sm * 34, f"SM {sm}", anchor="end")
        s.rect(x0, y + sm * 34, 8 * u, 28, WHITE, dash="3 3")
        s.box(x0, y + sm * 34, 4 * u, 28, f"tile {sm}", cols[sm])
    s.box(x0 + 4 * u, y, 4 * u, 28, "tile 4", cols[4])
    y = 250
    s.text(16, y - 12, "Stream-K: 20 k-steps, 5 per SM", bold=True)
    for sm in range(4):
        s.text(x0 - 8, y + 20 + sm * 34, f"SM {sm}", anchor="end")
        s.rect(x0, y + sm * 34, 8 * u, 28, WHITE, dash="3 3")
        for k in range(5):
            it = 5 * sm + k
            tile = it // 4
            s.rect(x0 + k * u, y + sm * 34, u, 28, cols[tile], sw=0.8)
            s.text(x0 + k * u + u / 2, y + sm * 34 + 19, f"t{tile}", anchor="middle")
    s.text(16, y + 158, "Tiles 1, 2 and 3 are split between two SMs: a fix-up", fill=GREY)
    s.text(16, y + 178, "adds their partial results. No SM waits for a wave.", fill=GREY)
    s.h = y + 192
    s.save("41-stream-k")


@figure
def f47_decode_batch():
    s = Svg(
        330,
        "Intensity of a whole decode step against batch size with 4,096-token contexts",
        "With B sequences of 4,096 tokens each, the step's intensity is about 7 FLOP per byte at B = 8, 23 at B = 64 "
        "and 30 at B = 256, approaching a limit of about 34 set by each sequence's own KV cache, far below the ridge "
        "of about 186.",
    )
    s.heading("Decode step intensity, contexts of 4,096")
    rows = [("B = 8", 7, BLUE), ("B = 64", 23, BLUE), ("B = 256", 30, BLUE)]
    y = hbars(
        s,
        70,
        rows,
        40,
        [0, 10, 20, 30, 40],
        "FLOP per byte for the whole step",
        label_w=110,
        bar_h=30,
        gap=12,
        refs=[(34, "limit ≈ 34", RED[1])],
    )
    s.text(16, y, "The ridge, about 186, is far off the right edge: the", fill=GREY)
    s.text(16, y + 20, "caches' bytes grow with the batch as fast as its FLOPs.", fill=GREY)
    s.h = y + 34
    s.save("47-decode-batch")


@figure
def f50_dw_split():
    s = Svg(
        420,
        "The weight gradient of RMSNorm as a split reduction over rows",
        "The gradient of the gain w sums over rows, one value per column. Each block takes a strip of rows and "
        "accumulates partial column sums in registers, writing one row of H partials to a workspace; a second small "
        "kernel adds the partials of each column. Atomics from every block into H floats would serialise on the same "
        "few addresses.",
    )
    s.heading("∂L/∂w: a sum over rows, in two steps")
    x0, w = 16, 250
    y = 56
    s.text(x0 + w / 2, y, "rows × H", anchor="middle", fill=GREY)
    for b in range(4):
        s.box(x0, y + 10 + b * 50, w, 44, f"block {b}: a strip of rows", GREYS)
        s.line(x0 + w + 4, y + 32 + b * 50, 320, y + 32 + b * 50, INK, 1.5, arrow=True)
        s.box(322, y + 18 + b * 50, 142, 28, f"partials {b} (H)", ORANGE)
    y2 = y + 10 + 4 * 50 + 20
    s.line(393, y2 - 24, 393, y2 + 6, INK, 1.5, arrow=True)
    s.box(322, y2 + 8, 142, 34, "dw (H)", GREEN, bold=True)
    s.text(16, y2 + 24, "second kernel: add each", fill=GREY)
    s.text(16, y2 + 44, "column's partials", fill=GREY)
    s.text(16, y2 + 80, "Not atomics into H floats: those serialise", fill=GREY)
    s.text(16, y2 + 100, "on the same few addresses.", fill=GREY)
    s.h = y2 + 114
    s.save("50-dw-split")


@figure
def f38_effects():
    s = Svg(
        420,
        "Kernel 6 against kernel 7: shared-memory wavefronts and the FFMA share of the main loop",
        "Per warp and k step, for 2,048 FMAs, kernel 6 needs ten shared-memory wavefronts and kernel 7 eight, since "
        "its "
        "B read is conflict-free and its A reads are broadcasts. In the SASS of the main loop, FFMAs are 56% of the "
        "instructions in kernel 6 and 79% in kernel 7, whose k depth of 32 spreads the load phase over four times as "
        "many FMAs.",
    )
    s.heading("Two of kernel 7's four effects")
    s.text(16, 58, "Wavefronts per warp per k step (2,048 FMAs)", bold=True)
    y = hbars(
        s,
        72,
        [("kernel 6", 10, GREYS), ("kernel 7", 8, GREEN)],
        12,
        [0, 2, 4, 6, 8, 10, 12],
        "shared-memory wavefronts",
        label_w=100,
        bar_h=28,
        gap=10,
    )
    s.text(16, y + 4, "FFMA share of the main loop's instructions", bold=True)
    hbars(
        s,
        y + 18,
        [("kernel 6", 56, GREYS, "56%"), ("kernel 7", 79, GREEN, "79%")],
        100,
        [0, 20, 40, 60, 80, 100],
        "% of instructions (static SASS count)",
        label_w=100,
        bar_h=28,
        gap=10,
    )
    s.save("38-effects")


@figure
def f40_exposed():
    s = Svg(
        330,
        "One tile's math against a load latency exposed every iteration",
        "At about 120 FFMAs per cycle per SM, one 128 by 256 by 8 tile, 262,144 FFMAs, is about 2,200 cycles of math. "
        "A load latency of, say, 600 cycles exposed before every tile adds more than a fifth to the kernel's time; "
        "prefetch or a pipeline moves the load under the previous tile's math.",
    )
    s.heading("2,200 cycles of math, 600 of waiting")
    sc = 448 / 2800
    y = 70
    s.text(16, y - 12, "Serial: load, barrier, math, barrier", bold=True)
    s.box(16, y, 600 * sc, 34, "600", RED)
    s.box(16 + 600 * sc, y, 2200 * sc, 34, "math: ≈ 2,200 cycles", GREEN)
    y = 160
    s.text(16, y - 12, "Overlapped: the next tile's loads fly during math", bold=True)
    s.box(16, y, 2200 * sc, 34, "math: ≈ 2,200 cycles", GREEN)
    s.box(16 + 200 * sc, y + 40, 600 * sc, 26, "next loads", ORANGE)
    s.text(16, y + 100, "262,144 FFMAs per tile at ≈ 120 per cycle per SM;", fill=GREY)
    s.text(16, y + 120, 'the latency is illustrative ("say, 600 cycles").', fill=GREY)
    s.h = y + 134
    s.save("40-exposed")


@figure
def f45_swizzle_bits():
    s = Svg(
        360,
        "The 128-byte swizzle as bit arithmetic on a byte offset",
        "A byte offset inside a tile of 128-byte rows: bits 0 to 3 select the byte within a 16-byte chunk, bits 4 to 6 "
        "the chunk, bits 7 to 9 the row modulo 8. The swizzle XORs the chunk bits with the row bits. Example: row 3, "
        "chunk 2, offset 416, is stored at chunk 2 XOR 3 = 1, offset 400.",
    )
    s.heading("offset′ = offset ⊕ (((offset ≫ 7) mod 8) ≪ 4)")
    x0, bw = 16, 44
    fields = [("9-7", "row mod 8", ORANGE, 3), ("6-4", "chunk c", BLUE, 3), ("3-0", "byte", GREYS, 4)]
    x = x0
    y = 70
    for bits, name, col, n in fields:
        s.box(x, y, bw * n - 4, 40, name, col, bold=True)
        s.text(x + (bw * n - 4) / 2, y - 8, f"bits {bits}", anchor="middle", fill=GREY)
        x += bw * n
    s.path(f"M{x0 + 66},{y + 42} C{x0 + 66},{y + 80} {x0 + 198},{y + 80} {x0 + 198},{y + 44}", arrow=True)
    s.text(x0 + 132, y + 92, "XOR into the chunk bits", anchor="middle")
    y = 210
    s.text(16, y, "Example: row 3, chunk 2 (logical offset 416)", bold=True)
    s.text(16, y + 26, "row bits 011, chunk bits 010 → 010 ⊕ 011 = 001")
    s.text(16, y + 50, "stored at chunk 1: offset 3 × 128 + 16 = 400")
    s.text(16, y + 84, "Rows 0-7 put chunk c on c ⊕ r: eight positions,", fill=GREY)
    s.text(16, y + 104, "and the pattern repeats every 1,024 bytes.", fill=GREY)
    s.h = y + 118
    s.save("45-swizzle-bits")


@figure
def f51_causal_waste():
    s = Svg(
        340,
        "What a causal mask saves in the naive pipeline and in a tiled kernel",
        "Left: the naive pipeline computes, stores and reloads every score of the N by N matrix, including the upper "
        "triangle that the mask then turns into minus infinity and zero. Right: a kernel that works in tiles can skip "
        "every tile lying wholly above the diagonal, about half of them; only tiles on the diagonal apply the mask.",
    )
    s.heading("Causal mask: computed anyway, or skipped")
    size, y0 = 200, 70
    x1, x2 = 16, 264
    s.text(x1, y0 - 12, "Naive: all N² scores", bold=True, fill=RED[1])
    s.text(x2, y0 - 12, "Tiled: skip the future", bold=True, fill=GREEN[1])
    s.rect(x1, y0, size, size, GREEN)
    s.path(f"M{x1},{y0} L{x1 + size},{y0} L{x1 + size},{y0 + size} Z", RED[1], 1, fill=RED[0])
    n = 8
    c = size / n
    for i in range(n):
        for j in range(n):
            col = GREEN if j < i else (YELLOW if j == i else WHITE)
            s.rect(x2 + j * c, y0 + i * c, c, c, col, sw=0.6, dash=None if j <= i else "3 3")
    s.text(x1, y0 + size + 26, "Red: masked, yet computed,", fill=RED[1])
    s.text(x1, y0 + size + 46, "stored and reloaded.", fill=RED[1])
    s.text(x2, y0 + size + 26, "Yellow: tiles that apply the mask;", fill=GREY)
    s.text(x2, y0 + size + 46, "white: never loaded (capsule 53).", fill=GREY)
    s.h = y0 + size + 60
    s.save("51-causal-waste")


def main(names):
    chosen = names or sorted(FIGURES)
    for name in chosen:
        FIGURES[name]()
        print("wrote", name)


if __name__ == "__main__":
    main(sys.argv[1:])

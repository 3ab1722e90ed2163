"""Figures of capsules 55 to 72 (issue 44), drawn as plain SVG.

Run from anywhere: python content/kernel-engineering/figures/src/charts_55_72.py [name-prefix ...]
Every figure is 480 units wide with text of at least 15 units: the reader never shows a figure narrower than where
its smallest text reads at 10 px (480 x 10 / 15 = 320 px), and 320 px fits the column of a 390 px phone. Every
number drawn comes from the capsule's own text (or is computed from a formula the capsule states); nothing here is
a new measurement.
"""

import math
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent
W = 480
MIN_FONT = 15
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"

INK = "#1a202c"
GREY = "#4a5568"
LIGHT = "#edf2f7"
RULE = "#e2e8f0"
BLUE, BLUE_S = "#bee3f8", "#2b6cb0"
ORANGE, ORANGE_S = "#fbd38d", "#c05621"
GREEN, GREEN_S = "#c6f6d5", "#2f855a"
PURPLE, PURPLE_S = "#e9d8fd", "#6b46c1"
RED, RED_S = "#fed7d7", "#c53030"
YELLOW, YELLOW_S = "#fefcbf", "#b7791f"

FIGURES = {}


def figure(fn):
    FIGURES[fn.__name__.replace("_", "-")] = fn
    return fn


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def fmt(v):
    return f"{v:.1f}".rstrip("0").rstrip(".") if isinstance(v, float) else str(v)


class Fig:
    def __init__(self, name, h, title, desc, w=W):
        self.name, self.w, self.h, self.title, self.desc = name, w, h, title, desc
        self.items = []
        self.texts = []

    def t(self, x, y, s, size=15, anchor="start", bold=False, fill=INK, italic=False):
        assert size >= MIN_FONT, (self.name, s, size)
        attrs = f'x="{fmt(x)}" y="{fmt(y)}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"'
        if bold:
            attrs += ' font-weight="bold"'
        if italic:
            attrs += ' font-style="italic"'
        self.items.append(f"<text {attrs}>{esc(s)}</text>")
        self.texts.append((x, y, s, size, anchor, bold))

    def heading(self, s, y=26):
        self.t(16, y, s, size=17, bold=True)

    def r(self, x, y, w, h, fill=LIGHT, stroke=GREY, rx=0, sw=1.2, dash=None, opacity=None):
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        extra += f' fill-opacity="{opacity}"' if opacity is not None else ""
        self.items.append(
            f'<rect x="{fmt(x)}" y="{fmt(y)}" width="{fmt(w)}" height="{fmt(h)}" rx="{rx}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{sw}"{extra}/>'
        )

    def ln(self, x1, y1, x2, y2, stroke=INK, sw=1.5, arrow=False, dash=None):
        extra = ' marker-end="url(#arrow)"' if arrow else ""
        extra += f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(
            f'<line x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}" stroke="{stroke}" '
            f'stroke-width="{sw}"{extra}/>'
        )

    def p(self, d, fill="none", stroke=INK, sw=1.5, arrow=False, dash=None):
        extra = ' marker-end="url(#arrow)"' if arrow else ""
        extra += f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(f'<path d="{d}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"{extra}/>')

    def c(self, cx, cy, r, fill=LIGHT, stroke=GREY, sw=1.2):
        self.items.append(
            f'<circle cx="{fmt(cx)}" cy="{fmt(cy)}" r="{fmt(r)}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>'
        )

    def box(self, x, y, w, h, lines, fill=LIGHT, stroke=GREY, size=15, rx=4, bold_first=False, lh=None):
        self.r(x, y, w, h, fill, stroke, rx=rx)
        lines = [lines] if isinstance(lines, str) else lines
        lh = lh or size + 4
        top = y + h / 2 - (len(lines) - 1) * lh / 2 + size * 0.35
        for i, line in enumerate(lines):
            self.t(x + w / 2, top + i * lh, line, size=size, anchor="middle", bold=bold_first and i == 0)

    def svg(self):
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.w} {self.h}" width="{self.w}" '
            f'height="{self.h}" role="img" aria-labelledby="t d" font-family="{FONT}">\n'
            f'<title id="t">{esc(self.title)}</title>\n<desc id="d">{esc(self.desc)}</desc>\n'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{INK}"/></marker></defs>\n'
            f'<rect x="0" y="0" width="{self.w}" height="{self.h}" fill="#ffffff"/>\n'
        )
        return head + "\n".join(self.items) + "\n</svg>\n"

    def check(self):
        """Rough fit test: estimated text extents stay inside the drawing."""
        problems = []
        for x, y, s, size, anchor, bold in self.texts:
            width = len(str(s)) * size * (0.58 if bold else 0.53)
            left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
            if left < 2 or left + width > self.w - 2 or y - size < 0 or y > self.h - 2:
                problems.append(f"{self.name}: text {s!r} may overflow ({left:.0f}..{left + width:.0f}, y {y})")
        return problems


def hbars(f, x0, y0, rows, vmax, width=None, bar_h=22, gap=50, label_size=15, value_inside=False):
    """Horizontal bars, each with its label on the line above it (phone-friendly).

    rows: (label, value, text, fill, stroke).
    """
    width = width or (W - x0 - 20)
    for i, (label, value, text, fill, stroke) in enumerate(rows):
        y = y0 + i * gap
        f.t(x0, y, label, size=label_size)
        bw = max(2, width * value / vmax)
        f.r(x0, y + 6, bw, bar_h, fill, stroke)
        if text:
            if value_inside or x0 + bw + 8 + len(text) * 8 > W - 4:
                f.t(x0 + bw - 6, y + 6 + bar_h / 2 + 5, text, size=15, anchor="end", bold=True)
            else:
                f.t(x0 + bw + 8, y + 6 + bar_h / 2 + 5, text, size=15, bold=True)


# ---------------------------------------------------------------- capsule 55


@figure
def f55_cache_sizes():
    f = Fig(
        "55-cache-sizes",
        420,
        "KV cache per token for three models, and for a batch of Llama 3 8B",
        "Top: bytes of BF16 KV cache per token. Llama 2 13B with full multi-head attention needs 800 KiB per token "
        "(3.1 GiB for 4,096 tokens), Llama 3 70B with grouped-query attention 320 KiB (1.25 GiB), Llama 3 8B 128 KiB "
        "(512 MiB). Bottom: serving Llama 3 8B to 64 sequences of 8,192 tokens needs 64 GiB of cache, four times "
        "the model's 16 GB of BF16 weights and about half of an H200's 141 GB.",
    )
    f.heading("KV cache per token (BF16)")
    hbars(
        f,
        16,
        58,
        [
            ("Llama 2 13B, MHA (4,096 tokens: 3.1 GiB)", 800, "800 KiB", ORANGE, ORANGE_S),
            ("Llama 3 70B, GQA (4,096 tokens: 1.25 GiB)", 320, "320 KiB", BLUE, BLUE_S),
            ("Llama 3 8B, GQA (4,096 tokens: 512 MiB)", 128, "128 KiB", BLUE, BLUE_S),
        ],
        800,
        width=360,
    )
    f.ln(16, 212, W - 16, 212, stroke=RULE)
    f.t(16, 244, "Llama 3 8B, 64 sequences of 8,192 tokens", size=17, bold=True)
    gb = 1e9
    hbars(
        f,
        16,
        282,
        [
            ("KV cache", 64 * 2**30 / gb, "64 GiB", ORANGE, ORANGE_S),
            ("weights (BF16)", 16, "16 GB", GREEN, GREEN_S),
            ("H200 memory", 141, "141 GB", LIGHT, GREY),
        ],
        141,
        width=360,
        gap=46,
    )
    return f


@figure
def f55_waste():
    f = Fig(
        "55-waste",
        440,
        "Where a contiguous KV cache wastes memory, and how pages bound the waste",
        "Top: three requests each reserve one contiguous region sized for the maximum length. Only the first part "
        "of each holds tokens; the rest is reserved for tokens not yet generated, or for tokens that will never be "
        "generated because the request stops early, and gaps between regions of different sizes are too small for "
        "a new request. The vLLM paper measured existing systems using only about 20 to 38 percent of their cache "
        "memory for token states. Bottom: with paging, each request holds blocks of 16 tokens anywhere in one pool "
        "and wastes less than one block, its partly filled last one.",
    )
    f.heading("Contiguous reservation: three kinds of waste")
    y = 50
    regions = [(16, 150, 60), (178, 120, 36), (310, 150, 90)]
    for x, w, uw in regions:
        f.r(x, y, w, 40, "#ffffff", GREY)
        f.r(x, y, uw, 40, BLUE, BLUE_S)
        f.r(x + uw, y, w - uw, 40, ORANGE, ORANGE_S, opacity=0.6)
    f.r(166, y, 12, 40, RED, RED_S)
    f.r(298, y, 12, 40, RED, RED_S)
    f.r(460, y, 8, 40, RED, RED_S)
    items = [
        (BLUE, BLUE_S, "tokens stored"),
        (ORANGE, ORANGE_S, "reserved: not yet generated, or never"),
        (RED, RED_S, "external fragmentation: gaps"),
    ]
    for i, (fill, stroke, label) in enumerate(items):
        f.r(16, 110 + i * 26, 18, 16, fill, stroke)
        f.t(42, 123 + i * 26, label)
    f.t(16, 210, "Measured in existing systems (vLLM paper):", size=15)
    f.t(16, 232, "only 20 to 38% of cache memory held token states", size=15, bold=True)
    f.ln(16, 252, W - 16, 252, stroke=RULE)
    f.heading("Paged: one pool of 16-token blocks", y=282)
    owners = "AB.AC.BAC.B.CA..BC.A"
    colours = {"A": (BLUE, BLUE_S), "B": (GREEN, GREEN_S), "C": (PURPLE, PURPLE_S), ".": ("#ffffff", GREY)}
    last = (19, 16, 17)
    for i, o in enumerate(owners):
        x = 16 + i * 22.4
        fill, stroke = colours[o]
        if i in last:
            f.r(x, 300, 20, 40, "#ffffff", stroke)
            f.r(x, 318, 20, 22, fill, stroke)
        else:
            f.r(x, 300, 20, 40, fill, stroke)
        if o != ".":
            f.t(x + 10, 336 if i in last else 325, o, size=15, anchor="middle", bold=True)
    f.t(16, 368, "A, B, C: three requests; white: free; half: last block.", size=15)
    f.t(16, 392, "Each request wastes less than one block,", size=15)
    f.t(16, 414, "the unfilled part of its last one.", size=15)
    return f


@figure
def f55_split_kv():
    f = Fig(
        "55-split-kv",
        430,
        "Split-KV decoding: chunks of one context in parallel, then an exact merge",
        "One sequence's context of cached keys and values is cut into four chunks, each handled by its own block. "
        "Each block produces its chunk's running maximum m_p, sum l_p and unnormalised output a_p. A short second "
        "step merges them: m is the largest m_p, l is the sum of exp(m_p minus m) times l_p, and the output is the "
        "sum of exp(m_p minus m) times a_p divided by l. Without splitting, a batch of 4 with 8 key-value heads "
        "makes 32 blocks for 132 SMs; with four splits it makes 128.",
    )
    f.heading("Split-KV: split the context, merge exactly")
    f.t(16, 58, "one sequence's KV cache, one kv head")
    f.r(16, 68, 448, 34, LIGHT, GREY)
    cols = [BLUE, GREEN, PURPLE, ORANGE]
    strokes = [BLUE_S, GREEN_S, PURPLE_S, ORANGE_S]
    for p in range(4):
        x = 16 + p * 112
        f.r(x, 68, 112, 34, cols[p], strokes[p])
        f.t(x + 56, 90, f"chunk {p}", anchor="middle")
        f.ln(x + 56, 104, x + 56, 128, arrow=True)
        f.box(x + 6, 130, 100, 60, [f"block {p}", f"m{p}, l{p}, a{p}"], cols[p], strokes[p], bold_first=True)
        f.ln(x + 56, 192, 240, 238, arrow=True)
    f.box(
        90,
        240,
        300,
        84,
        [
            "merge (second launch)",
            "m = max m_p",
            "l = sum exp(m_p - m) l_p",
        ],
        YELLOW,
        YELLOW_S,
        bold_first=True,
    )
    f.t(240, 346, "o = sum exp(m_p - m) a_p / l", anchor="middle", bold=True)
    f.t(16, 384, "Batch 4 x 8 kv heads: 32 blocks for 132 SMs.")
    f.t(16, 408, "Four splits per context: 128 blocks.", bold=True)
    return f


@figure
def f55_ladder():
    f = Fig(
        "55-ladder",
        270,
        "The book's paged_decode rungs as a fraction of the KV-bytes roofline on the H200",
        "Range bars on a scale of 0 to 100 percent of the roofline, the bytes of KV cache that must be read over "
        "the copy bandwidth. The split-KV rung, which serves each GQA group from one read of each key, loads 16 "
        "bytes per lane and splits long contexts, reaches 77 to 82 percent. The page-ring rung, which copies each "
        "warp's next page into shared memory with cp.async while it computes the current one, reaches 93 to 97 "
        "percent.",
    )
    f.heading("paged_decode on the H200: % of roofline")
    x0, x1 = 20, 460

    def X(v):
        return x0 + (x1 - x0) * v / 100

    for v in (0, 25, 50, 75, 100):
        f.ln(X(v), 70, X(v), 206, stroke=RULE)
        f.t(X(v), 228, f"{v}%", size=15, anchor="middle", fill=GREY)
    rows = [
        ("rung 02: GQA reuse, 16 B loads, split-KV", 77, 82, BLUE, BLUE_S),
        ("rung 03: cp.async ring of two pages", 93, 97, GREEN, GREEN_S),
    ]
    for i, (label, lo, hi, fill, stroke) in enumerate(rows):
        y = 66 + i * 70
        f.t(x0, y, label, size=15)
        f.r(X(0), y + 10, X(lo) - X(0), 26, LIGHT, GREY, opacity=0.8)
        f.r(X(lo), y + 10, X(hi) - X(lo), 26, fill, stroke, sw=2)
        f.t(X(lo) - 6, y + 29, f"{lo} to {hi}%", anchor="end", bold=True)
    f.t(20, 258, "Each bar: the range the capsule states.", size=15, fill=GREY)
    return f


# ---------------------------------------------------------------- capsule 56


@figure
def f56_decode_bytes():
    f = Fig(
        "56-decode-bytes",
        250,
        "Bytes and time bound of one decode step of an 8B model by weight format",
        "Reading every weight of the 8B model once: BF16 at 2 bytes per weight is 16.1 GB, a bound of 3.8 ms at "
        "4.2 TB/s; FP8 with one scale per row, about 1 byte, 8.0 GB and 1.9 ms; INT4 with a scale and zero point "
        "per 128 weights, about 0.52 bytes, 4.2 GB and 1.0 ms.",
    )
    f.heading("Weights read per decode step, 8B model")
    hbars(
        f,
        16,
        62,
        [
            ("BF16, 2 bytes per weight", 16.1, "16.1 GB: 3.8 ms", ORANGE, ORANGE_S),
            ("FP8, one scale per row", 8.0, "8.0 GB: 1.9 ms", BLUE, BLUE_S),
            ("INT4, scale and zero per 128", 4.2, "4.2 GB: 1.0 ms", GREEN, GREEN_S),
        ],
        16.1,
        width=280,
    )
    f.t(16, 236, "Times: the bound at 4.2 TB/s of copy bandwidth.", size=15, fill=GREY)
    return f


@figure
def f56_scale_granularity():
    f = Fig(
        "56-scale-granularity",
        420,
        "Per-tensor, per-row and per-block FP8 scales, and how far one outlier reaches",
        "Three copies of a matrix of 4 rows by 16 columns with one outlier value. Cells that share a scale with the "
        "outlier are shaded red: with one scale per tensor every value is measured against the outlier; with one "
        "scale per row only the outlier's row is; with one scale per block of values of a row (128 in DeepSeek-V3's "
        "scheme, 4 in this small drawing) only the outlier's block is.",
    )
    f.heading("Which values share the outlier's scale?")
    panels = [
        ("per tensor: one scale", lambda r, c: True),
        ("per row: one scale per token", lambda r, c: r == 1),
        ("per block of a row (here 4 values)", lambda r, c: r == 1 and c // 4 == 2),
    ]
    cw, ch = 26, 18
    for i, (label, shared) in enumerate(panels):
        y0 = 58 + i * 122
        f.t(16, y0, label, bold=True)
        for r in range(4):
            for c in range(16):
                x, y = 16 + c * cw, y0 + 10 + r * ch
                fill = RED if shared(r, c) else LIGHT
                f.r(x, y, cw, ch, fill, RED_S if shared(r, c) else GREY, sw=0.8)
        f.r(16 + 9 * cw + 4, y0 + 10 + ch + 3, cw - 8, ch - 6, RED_S, RED_S)
        if i == 2:
            for c in (4, 8, 12):
                f.ln(16 + c * cw, y0 + 10, 16 + c * cw, y0 + 10 + 4 * ch, stroke=INK, sw=2)
    f.r(16, 396, 14, 12, RED_S, RED_S)
    f.t(36, 407, "outlier", size=15)
    f.r(110, 396, 18, 12, RED, RED_S)
    f.t(134, 407, "values squeezed by its scale", size=15)
    return f


@figure
def f56_e4m3_rounding():
    f = Fig(
        "56-e4m3-rounding",
        300,
        "Rounding to E4M3 between 256 and 448, with saturation",
        "The E4M3 values between 256 and 448 are spaced 32 apart: 256, 288, 320, 352, 384, 416 and 448, the largest "
        "finite value. 300 lies between 288 and 320 and rounds to the nearer, 288. 460 is beyond 448 and saturates "
        "to 448 instead of becoming NaN. Near zero, 0.0009 is closer to 0 than to the smallest subnormal, 2 to the "
        "power -9, about 0.00195, and becomes 0.",
    )
    f.heading("E4M3: spacing 32 between 256 and 448")
    x0, x1 = 30, 450

    def X(v):
        return x0 + (x1 - x0) * (v - 256) / (480 - 256)

    f.ln(x0, 140, x1, 140, sw=1.5)
    for v in range(256, 449, 32):
        f.ln(X(v), 130, X(v), 150, sw=2)
        f.t(X(v), 174, str(v), size=15, anchor="middle")
    f.r(X(448), 126, X(480) - X(448), 28, RED, RED_S, dash="4 3")
    f.t(X(464), 200, "saturates", size=15, anchor="middle", fill=RED_S)
    for v, to, y in ((300, 288, 90), (460, 448, 90)):
        f.c(X(v), 140, 5, ORANGE, ORANGE_S)
        f.t(X(v), y - 8, f"{v} → {to}", size=15, anchor="middle", bold=True)
        f.p(f"M {fmt(X(v))} {y} Q {fmt((X(v) + X(to)) / 2)} {y + 20} {fmt(X(to))} 128", arrow=True)
    f.t(16, 236, "Near zero: 0.0009 → 0, since the smallest", size=15)
    f.t(16, 258, "subnormal is 2^-9 ≈ 0.00195 and 0 is closer.", size=15)
    f.t(16, 286, "Round to nearest, ties to even; never NaN.", size=15, bold=True)
    return f


# ---------------------------------------------------------------- capsule 57


@figure
def f57_traffic():
    f = Fig(
        "57-traffic",
        260,
        "Intermediate HBM traffic of the SwiGLU block at T = 8192 for three designs",
        "Bytes moved for the intermediate tensors at T = 8192, each pass over a T by 14,336 BF16 tensor being 235 MB: "
        "five kernels move 8 passes, 1.88 GB, 0.45 ms at 4.2 TB/s; a fused SiLU-and-multiply kernel, 4 launches, "
        "moves 6 passes, 1.41 GB, 0.34 ms; the merged gate and up GEMM with the activation in its epilogue, 2 "
        "launches, moves 2 passes, 0.47 GB, 0.11 ms.",
    )
    f.heading("Intermediate traffic at T = 8192")
    hbars(
        f,
        16,
        62,
        [
            ("five kernels: 8 passes", 1.88, "1.88 GB: 0.45 ms", ORANGE, ORANGE_S),
            ("fused SiLU and multiply, 4 launches: 6 passes", 1.41, "1.41 GB: 0.34 ms", BLUE, BLUE_S),
            ("merged GEMM, fused epilogue, 2 launches: 2 passes", 0.47, "0.47 GB: 0.11 ms", GREEN, GREEN_S),
        ],
        1.88,
        width=300,
    )
    f.t(16, 236, "One pass over T x 14,336 in BF16 = 235 MB; at 4.2 TB/s.", size=15, fill=GREY)
    return f


@figure
def f57_silu():
    f = Fig(
        "57-silu",
        340,
        "The SiLU function g times sigmoid of g",
        "SiLU plotted for g from -6 to 4, with the line y = g dashed for comparison. The curve is 0 at 0, has its "
        "minimum of about -0.278 near g = -1.28, approaches 0 from below for large negative g and approaches g for "
        "large positive g.",
    )
    f.heading("silu(g) = g / (1 + exp(-g))")
    x0, x1, y0, y1 = 50, 460, 300, 50
    gx0, gx1, gy0, gy1 = -6, 4, -1, 4

    def X(g):
        return x0 + (x1 - x0) * (g - gx0) / (gx1 - gx0)

    def Y(v):
        return y0 + (y1 - y0) * (v - gy0) / (gy1 - gy0)

    for v in range(-1, 5):
        f.ln(x0, Y(v), x1, Y(v), stroke=RULE)
        f.t(x0 - 8, Y(v) + 5, str(v), size=15, anchor="end")
    for g in range(-6, 5, 2):
        f.ln(X(g), y0, X(g), y0 + 5)
        f.t(X(g), y0 + 22, str(g), size=15, anchor="middle")
    f.ln(X(0), y0, X(0), y1, stroke=GREY, sw=1)
    f.ln(x0, Y(0), x1, Y(0), stroke=GREY, sw=1)
    f.ln(X(-1), Y(-1), X(4), Y(4), stroke=GREY, sw=1.2, dash="5 4")
    f.t(X(1.2), Y(3.2), "y = g", size=15, fill=GREY)
    pts = []
    for i in range(201):
        g = gx0 + (gx1 - gx0) * i / 200
        pts.append(f"{X(g):.1f},{Y(g / (1 + math.exp(-g))):.1f}")
    f.p("M " + " L ".join(pts), stroke=BLUE_S, sw=2.5)
    gm = -1.2785
    f.c(X(gm), Y(gm / (1 + math.exp(-gm))), 4.5, ORANGE, ORANGE_S)
    f.t(X(-5.8), Y(-0.72), "min -0.278 at g ≈ -1.28", size=15, bold=True)
    return f


# ---------------------------------------------------------------- capsule 58


@figure
def f58_tile_waste():
    f = Fig(
        "58-tile-waste",
        420,
        "Why a GEMM tile wastes itself at batch one",
        "Left: a 128 by 128 output tile of a GEMM kernel with batch 1: only one of its 128 rows holds real outputs, "
        "the other 127 compute on padding; even the smallest tensor-core shape, 8 wide, wastes seven eighths. "
        "Right: 8192 output rows in 128-row tiles make 64 blocks for 132 SMs, so about half the SMs idle while each "
        "busy block streams 2 MB of weights.",
    )
    f.heading("A GEMM tile at B = 1")
    f.r(16, 50, 160, 160, LIGHT, GREY)
    f.r(16, 50, 160, 5, ORANGE, ORANGE_S)
    f.t(96, 138, "127 rows", size=15, anchor="middle")
    f.t(96, 158, "of padding", size=15, anchor="middle")
    f.t(16, 234, "128 x 128 tile", size=15, bold=True)
    f.t(16, 256, "1 useful row of 128", size=15)
    x0, y0 = 200, 50
    for i in range(132):
        r, c = divmod(i, 12)
        f.r(x0 + c * 22, y0 + r * 14.5, 19, 12, ORANGE if i < 64 else "#ffffff", ORANGE_S if i < 64 else GREY, sw=0.8)
    f.t(200, 234, "132 SMs, 64 busy", size=15, bold=True)
    f.t(200, 256, "8192 rows / 128 = 64 blocks", size=15)
    f.ln(16, 280, W - 16, 280, stroke=RULE)
    f.t(16, 310, "The reuse a GEMM pays for does not exist:", size=15)
    f.t(16, 334, "each weight is used once, so shared-memory", size=15)
    f.t(16, 358, "staging and register tiling are pure overhead.", size=15)
    f.t(16, 396, "Even an 8-wide mma wastes 7/8 of its work.", size=15, bold=True)
    return f


@figure
def f58_mma_gemv():
    f = Fig(
        "58-mma-gemv",
        400,
        "A GEMV batch on the tensor cores with mma.sync.m16n8k16",
        "The first operand of m16n8k16, 16 by 16, is 16 rows of W over 16 values of k; the second, 16 by 8, is "
        "the same 16 values of k of the 8 input vectors; the 16 by 8 result is 16 outputs for each of the 8 "
        "vectors. At batch 8 every column does useful work, 2,048 multiply-adds in one instruction; at batch 1 "
        "seven columns are zeros, which costs nothing because the tensor cores were idle anyway.",
    )
    f.heading("mma.sync.m16n8k16 as a batched GEMV")
    s = 9
    ax, ay = 16, 70
    f.t(ax, ay - 10, "16 rows of W", size=15, bold=True)
    f.r(ax, ay, 16 * s, 16 * s, ORANGE, ORANGE_S)
    f.t(ax + 8 * s, ay + 16 * s + 22, "16 x 16 (rows x k)", size=15, anchor="middle")
    f.t(ax + 16 * s + 14, ay + 8 * s + 6, "×", size=22, anchor="middle", bold=True)
    bx = ax + 16 * s + 30
    f.t(bx, ay - 10, "8 vectors x", size=15, bold=True)
    for j in range(8):
        f.r(bx + j * s, ay, s, 16 * s, BLUE if j == 0 else GREEN, BLUE_S if j == 0 else GREEN_S, sw=0.8)
    f.t(bx + 4 * s, ay + 16 * s + 22, "16 x 8 (k x b)", size=15, anchor="middle")
    f.t(bx + 8 * s + 16, ay + 8 * s + 6, "=", size=22, anchor="middle", bold=True)
    cx = bx + 8 * s + 34
    f.t(cx, ay - 10, "y: 16 x 8", size=15, bold=True)
    for j in range(8):
        f.r(cx + j * s * 1.4, ay, s * 1.4, 16 * s, BLUE if j == 0 else GREEN, BLUE_S if j == 0 else GREEN_S, sw=0.8)
    f.t(cx + 4 * s * 1.4, ay + 16 * s + 22, "rows x batch", size=15, anchor="middle")
    f.r(16, 276, 18, 14, BLUE, BLUE_S)
    f.t(42, 288, "vector 0: the only useful column at B = 1", size=15)
    f.r(16, 302, 18, 14, GREEN, GREEN_S)
    f.t(42, 314, "vectors 1 to 7: zeros at B = 1, useful at B = 8", size=15)
    f.t(16, 352, "At B = 8: 2,048 multiply-adds per instruction,", size=15, bold=True)
    f.t(16, 376, "where CUDA cores needed 64 FMAs per lane.", size=15)
    return f


# ---------------------------------------------------------------- capsule 59


@figure
def f59_tma_vs_threads():
    f = Fig(
        "59-tma-vs-threads",
        400,
        "Issuing one 48 KB stage with threads and with the TMA",
        "Left: moved by threads, one 48 KB stage is 3,072 copies of 16 bytes, twelve for each of 256 threads, each "
        "with its own address, swizzled destination and bounds test, competing with the matrix instructions for "
        "issue slots and registers. Right: with the TMA one thread issues five instructions, one box of A of 128 "
        "rows by 64 columns and four boxes of B of 64 by 64, and the unit generates every address, clips at the "
        "edges and swizzles by itself.",
    )
    f.heading("One 48 KB stage: 3,072 copies or 5")
    for i in range(256):
        r, c = divmod(i, 16)
        f.r(16 + c * 12.5, 48 + r * 12.5, 10.5, 10.5, ORANGE, ORANGE_S, sw=0.6)
    f.t(16, 270, "256 threads x 12 copies", size=15, bold=True)
    f.t(16, 292, "of 16 bytes = 3,072", size=15)
    f.t(16, 314, "each: address, swizzle,", size=15)
    f.t(16, 336, "bounds test, then issue", size=15)
    x = 250
    f.c(x + 10, 62, 8, GREEN, GREEN_S)
    f.t(x + 26, 68, "one thread", size=15, bold=True)
    f.box(x, 88, 214, 44, "1 box of A: 128 x 64", BLUE, BLUE_S)
    for j in range(4):
        f.box(x + j * 54, 142, 52, 60, ["B", str(j)], BLUE, BLUE_S)
    f.t(x, 226, "4 boxes of B: 64 x 64", size=15)
    f.t(x, 270, "5 instructions", size=15, bold=True)
    f.t(x, 292, "the TMA makes every", size=15)
    f.t(x, 314, "address, clips at the", size=15)
    f.t(x, 336, "edges and swizzles", size=15)
    f.t(16, 384, "16 KB of A + 32 KB of B = 48 KB per stage", size=15, fill=GREY)
    return f


@figure
def f59_tx_count():
    f = Fig(
        "59-tx-count",
        360,
        "The transaction count of one full barrier during one stage",
        "A step chart of the bytes still expected by stage s's full barrier. The producer's arrive.expect_tx raises "
        "the count to 49,152 bytes. The box of A lands and subtracts 16,384, "
        "then the four boxes of B subtract 8,192 each, in whatever order they land: 32,768, 24,576, 16,384, 8,192 "
        "and 0. When the count and the pending arrivals reach zero, the phase completes and the consumers waiting "
        "on its parity go ahead.",
    )
    f.heading("full[s]: bytes still expected")
    x0, x1, y0, y1 = 80, 440, 280, 60

    def Y(v):
        return y0 + (y1 - y0) * v / 49152

    for v in (0, 16384, 32768, 49152):
        f.ln(x0, Y(v), x1, Y(v), stroke=RULE)
        f.t(x0 - 8, Y(v) + 5, f"{v:,}", size=15, anchor="end")
    f.ln(x0, y0, x1, y0)
    f.ln(x0, y0, x0, y1 - 10)
    steps = [(0, 49152), (1, 32768), (2, 24576), (3, 16384), (4, 8192), (5, 0)]
    xs = [x0 + 30 + i * 60 for i in range(6)]
    d = f"M {x0} {fmt(Y(0))} L {xs[0]} {fmt(Y(0))}"
    for (i, v), x in zip(steps, xs, strict=True):
        d += f" L {x} {fmt(Y(v))}"
        nxt = xs[i + 1] if i + 1 < len(xs) else x1
        d += f" L {nxt} {fmt(Y(v))}"
    f.p(d, stroke=BLUE_S, sw=2.5)
    labels = ["expect_tx", "A", "B0", "B1", "B2", "B3"]
    for x, lab in zip(xs, labels, strict=True):
        f.ln(x, y0, x, y0 + 6)
        f.t(x, y0 + 24, lab, size=15, anchor="middle", bold=lab == "expect_tx")
    f.t(xs[5] + 6, Y(0) - 10, "phase flips", size=15, bold=True, fill=GREEN_S, anchor="middle")
    f.t(16, 334, "A: 16,384 bytes; each B box: 8,192; any order.", size=15)
    return f


@figure
def f59_innermost_first():
    f = Fig(
        "59-innermost-first",
        380,
        "How a row-major M by K matrix looks to the TMA",
        "A row-major M by K BF16 matrix A is, to the TMA, a two-dimensional tensor of dims (K, M), innermost first: "
        "dimension 0 runs along a row, contiguous, and dimension 1 steps from row to row with a stride of 2K bytes, "
        "which must be a multiple of 16. A box of 64 by 128, 64 values of K and 128 rows, is addressed at "
        "coordinates (64t, m0), K first.",
    )
    f.heading("Row-major A (M x K) = dims (K, M)")
    f.r(60, 70, 380, 220, LIGHT, GREY)
    f.r(200, 120, 80, 110, ORANGE, ORANGE_S, sw=2)
    f.t(240, 170, "box", size=15, anchor="middle", bold=True)
    f.t(240, 190, "64 x 128", size=15, anchor="middle")
    f.ln(60, 56, 430, 56, arrow=True)
    f.t(70, 50, "dim 0: K, contiguous (innermost)", size=15)
    f.ln(46, 70, 46, 280, arrow=True)
    f.t(30, 300, "dim 1: M", size=15)
    f.t(300, 260, "stride 2K bytes", size=15)
    f.t(300, 280, "(a multiple of 16)", size=15)
    f.c(200, 120, 5, RED_S, RED_S)
    f.t(196, 112, "(64t, m0)", size=15, anchor="end", bold=True)
    f.t(16, 330, "Coordinates and sizes are written K first.", size=15)
    f.t(16, 354, "N and K multiples of 8 keep every row 16-byte aligned.", size=15)
    return f


# ---------------------------------------------------------------- capsule 60


@figure
def f60_wgmma_shape():
    f = Fig(
        "60-wgmma-shape",
        400,
        "wgmma m64n256k16 against mma.sync m16n8k16",
        "The accumulator D of one wgmma.m64n256k16, 64 rows by 256 columns, drawn to scale with A, 64 by 16, and B, "
        "16 by 256, both read from shared memory, and beside it the 16 by 8 tile of one mma.sync.m16n8k16. D is "
        "spread over the four warps of the warpgroup, 16 rows each, 128 FP32 values per thread. One wgmma is "
        "524,288 FLOP, 128 times the 4,096 of one mma.sync.",
    )
    f.heading("wgmma m64n256k16: D += A B")
    s = 1.5
    dx, dy = 60, 104
    f.t(dx, 60, "B: 16 x 256, shared memory", size=15)
    f.r(dx, dy - 16 * s - 6, 256 * s, 16 * s, BLUE, BLUE_S)
    f.r(dx - 16 * s - 6, dy, 16 * s, 64 * s, BLUE, BLUE_S)
    f.t(dx - 8 * s - 6, dy + 64 * s + 20, "A", size=15, anchor="middle")
    cols = [GREEN, "#9ae6b4", GREEN, "#9ae6b4"]
    for w in range(4):
        f.r(dx, dy + w * 16 * s, 256 * s, 16 * s, cols[w], GREEN_S)
        f.t(dx + 8, dy + w * 24 + 18, f"warp {w}: rows {16 * w}-{16 * w + 15}", size=15)
    f.t(dx + 256 * s, dy + 64 * s + 20, "D: 64 x 256 FP32", size=15, anchor="end")
    mx = dx + 256 * s - 8 * s
    f.r(mx, 236, 8 * s, 16 * s, ORANGE, ORANGE_S, sw=1.5)
    f.t(mx - 10, 254, "one mma.sync (16 x 8), same scale", size=15, anchor="end")
    f.t(16, 300, "wgmma: 524,288 FLOP per instruction", size=15, bold=True)
    f.t(16, 322, "mma.sync: 4,096, so 128 times less", size=15)
    f.t(16, 358, "D over a warpgroup of 128 threads:", size=15)
    f.t(16, 380, "128 FP32 accumulator registers each", size=15)
    return f


@figure
def f60_descriptor():
    f = Fig(
        "60-descriptor",
        380,
        "The 64-bit shared-memory matrix descriptor of wgmma",
        "The descriptor drawn as four rows of 16 bits. Bits 0 to 13 hold the start address divided by 16; bits 16 "
        "to 29 the leading dimension byte offset divided by 16, 8 KB for B's 64-column slabs; bits 32 to 45 the "
        "stride dimension byte offset divided by 16, 1,024 bytes between 8-row swizzle atoms; bits 49 to 51 the "
        "base offset, 0 when the swizzle pattern starts on its boundary; bits 62 and 63 the layout, 1 for the "
        "128-byte swizzle. The other bits are zero.",
    )
    f.heading("wgmma matrix descriptor: 64 bits")
    bw = 26
    rows = [
        (0, [(0, 14, "start address / 16", BLUE, BLUE_S)]),
        (16, [(16, 14, "LBO / 16 (B: 8 KB)", GREEN, GREEN_S)]),
        (32, [(32, 14, "SBO / 16 (1,024 B)", PURPLE, PURPLE_S)]),
        (48, [(49, 3, "base", ORANGE, ORANGE_S), (62, 2, "lay", RED, RED_S)]),
    ]
    for i, (base, fields) in enumerate(rows):
        y = 60 + i * 70
        x0 = 16 + 16 * bw - 2
        for b in range(16):
            f.r(x0 - (b + 1) * bw + 2, y, bw, 32, "#ffffff", RULE, sw=0.8)
        f.t(x0 + 2, y + 50, str(base), size=15, anchor="end", fill=GREY)
        f.t(x0 - 16 * bw + 2, y + 50, str(base + 15), size=15, fill=GREY)
        for start, n, label, fill, stroke in fields:
            right = x0 - (start - base) * bw + 2
            left = right - n * bw
            f.r(left, y, n * bw, 32, fill, stroke, sw=1.5)
            f.t((left + right) / 2, y + 22, label, size=15, anchor="middle", bold=True)
    f.t(16, 346, "lay (bits 62-63): 1 = 128-byte swizzle;", size=15)
    f.t(16, 368, "base (49-51): 0 on the atom's boundary", size=15)
    return f


@figure
def f60_register_budget():
    f = Fig(
        "60-register-budget",
        330,
        "Moving registers from the producer to the consumers with setmaxnreg",
        "Two stacked bars of the block's register pool, drawn to scale. At launch, 384 threads at 168 registers "
        "each take 64,512 of the SM's 65,536, three equal shares of 21,504 for the producer and the two consumer "
        "warpgroups. After setmaxnreg the producer keeps 40 per thread, 5,120 in all, and each consumer grows to "
        "232 per thread, 29,696: the same 64,512 in total.",
    )
    f.heading("One block's registers, 384 threads")
    x0, width = 16, 448

    def Wd(v):
        return width * v / 65536

    segs_before = [
        ("producer", 21504, ORANGE, ORANGE_S),
        ("consumer 1", 21504, GREEN, GREEN_S),
        ("consumer 2", 21504, GREEN, GREEN_S),
    ]
    segs_after = [
        ("", 5120, ORANGE, ORANGE_S),
        ("consumer 1", 29696, GREEN, GREEN_S),
        ("consumer 2", 29696, GREEN, GREEN_S),
    ]
    for y, label, segs in (
        (58, "at launch: 168 per thread", segs_before),
        (168, "after setmaxnreg: 40 / 232 / 232", segs_after),
    ):
        f.t(x0, y, label, size=15, bold=True)
        x = x0
        for name, v, fill, stroke in segs:
            f.r(x, y + 10, Wd(v), 40, fill, stroke)
            if name:
                f.t(x + Wd(v) / 2, y + 36, name, size=15, anchor="middle")
            x += Wd(v)
        f.r(x, y + 10, x0 + width - x, 40, "#ffffff", GREY, dash="3 3")
    f.t(x0, 134, "3 x 128 x 168 = 64,512", size=15)
    f.t(x0, 244, "128 x (40 + 232 + 232) = 64,512", size=15)
    f.t(x0, 278, "Dashed: the rest of the 65,536 of the SM.", size=15, fill=GREY)
    f.t(x0, 302, "Orange: producer warpgroup; green: consumers.", size=15, fill=GREY)
    return f


# ---------------------------------------------------------------- capsule 61


@figure
def f61_intensity():
    f = Fig(
        "61-intensity",
        270,
        "FLOP per byte that a block asks of L2, by tile and cluster",
        "Bars of the block's arithmetic intensity against L2, B_M B_N over (B_M + B_N): 64 FLOP per byte for a 128 "
        "by 128 tile, 85.3 for a 128 by 256 tile, and 128 for a 128 by 256 tile in a cluster of two that "
        "multicasts the shared slice of B, so each block fetches only half of it.",
    )
    f.heading("FLOP per byte fetched from L2 by a block")
    hbars(
        f,
        16,
        62,
        [
            ("128 x 128 tile", 64, "64", LIGHT, GREY),
            ("128 x 256 tile", 85.3, "85.3", BLUE, BLUE_S),
            ("128 x 256, cluster of 2, B multicast", 128, "128", GREEN, GREEN_S),
        ],
        128,
        width=380,
    )
    f.t(16, 236, "B_M B_N / (B_M + B_N), or B_N / 2 with multicast", size=15, fill=GREY)
    return f


@figure
def f61_waves():
    f = Fig(
        "61-waves",
        400,
        "Share of SMs busy over the run for a fixed 128 by 256 tile on 132 SMs",
        "Bars of tiles divided by (waves rounded up times 132) for five shapes: 4096 cubed, 512 tiles, 97 percent; "
        "8192 cubed, 2,048 tiles, 97 percent; 4096 by 14336 by 4096, an LLM's MLP, 1,792 tiles, 97 percent; 512 by "
        "4096 by 4096, a short prefill chunk, 64 tiles, 48 percent; 128 by 4096 by 4096, decode at batch 128, 16 "
        "tiles, 12 percent.",
    )
    f.heading("SMs busy, fixed 128 x 256 tile, 132 SMs")
    hbars(
        f,
        16,
        62,
        [
            ("4096³: 512 tiles", 97, "97%", GREEN, GREEN_S),
            ("8192³: 2,048 tiles", 97, "97%", GREEN, GREEN_S),
            ("4096 x 14336 x 4096 (MLP): 1,792 tiles", 97, "97%", GREEN, GREEN_S),
            ("512 x 4096 x 4096 (prefill chunk): 64 tiles", 48, "48%", ORANGE, ORANGE_S),
            ("128 x 4096 x 4096 (decode, batch 128): 16 tiles", 12, "12%", RED, RED_S),
        ],
        100,
        width=380,
        gap=60,
    )
    f.t(16, 382, "tiles / (waves rounded up x 132)", size=15, fill=GREY)
    return f


# ---------------------------------------------------------------- capsule 62


@figure
def f62_fp8_rates():
    f = Fig(
        "62-fp8-rates",
        230,
        "Dense FP8 tensor throughput per GPU, H100 SXM and B200, from the datasheets",
        "Bars of dense FP8 throughput per GPU, half of the sparse datasheet figures: H100 SXM 1,979 TFLOP/s (3,958 "
        "with sparsity); B200 about 4,500 TFLOP/s (72 PFLOP/s for eight GPUs with sparsity is 9 per GPU). About 2.3 "
        "times the rate, with the same 256 KB register file per SM.",
    )
    f.heading("Dense FP8 TFLOP/s per GPU (datasheets)")
    hbars(
        f,
        16,
        62,
        [
            ("H100 SXM", 1979, "1,979", BLUE, BLUE_S),
            ("B200", 4500, "about 4,500", GREEN, GREEN_S),
        ],
        4500,
        width=320,
    )
    f.t(16, 176, "About 2.3 times the rate per GPU;", size=15, bold=True)
    f.t(16, 200, "the register file is still 256 KB per SM.", size=15)
    return f


@figure
def f62_two_sm():
    f = Fig(
        "62-two-sm",
        420,
        "A two-SM tcgen05 MMA over a 256 by N tile",
        "With cta_group::2, the two blocks of a cluster pair execute one MMA issued by one thread of the even block. "
        "Each SM holds half of A, its 128 rows, and half of B, its half of the N columns, in its own shared memory, "
        "and receives in its tensor memory the 128 by N accumulator of its own rows. Per K step each SM loads 256 k "
        "elements instead of 384 k for a single-SM 128 by 256 tile: 256 FLOP per element loaded instead of about "
        "171.",
    )
    f.heading("cta_group::2: one MMA, two SMs")
    for i, (x, name) in enumerate(((16, "SM 0 (even: issues)"), (248, "SM 1"))):
        f.r(x, 44, 216, 250, "#ffffff", GREY, rx=6)
        f.t(x + 10, 66, name, size=15, bold=True)
        f.box(x + 10, 80, 196, 40, f"A rows {128 * i}-{128 * i + 127}", BLUE, BLUE_S)
        f.box(x + 10, 130, 196, 40, f"B columns, half {i}", ORANGE, ORANGE_S)
        f.t(x + 10, 192, "shared memory", size=15, fill=GREY)
        f.box(x + 10, 204, 196, 54, ["TMEM: D rows", f"{128 * i}-{128 * i + 127}, all N"], GREEN, GREEN_S)
        f.t(x + 10, 282, "tensor memory", size=15, fill=GREY)
    f.p("M 222 150 L 258 150", arrow=True)
    f.p("M 258 160 L 222 160", arrow=True)
    f.t(16, 326, "Per SM and K step: 256k elements loaded", size=15, bold=True)
    f.t(16, 350, "instead of 384k for a 128 x 256 tile alone.", size=15)
    f.t(16, 384, "FLOP per element loaded: about 171 → 256", size=15, bold=True)
    return f


# ---------------------------------------------------------------- capsule 63


@figure
def f63_bits():
    f = Fig(
        "63-bits",
        330,
        "Bits per value of the block-scaled formats, scales included",
        "Bars of storage per value including the shared scale: BF16 16 bits for comparison; MXFP8 8.25; MXFP6 6.25; "
        "NVFP4 4.5, four bits plus an 8-bit E4M3 scale per 16 values; MXFP4 4.25, four bits plus an 8-bit E8M0 "
        "scale per 32 values.",
    )
    f.heading("Bits per value, scale included")
    hbars(
        f,
        16,
        62,
        [
            ("BF16 (no scale)", 16, "16", LIGHT, GREY),
            ("MXFP8: 8 + 8/32", 8.25, "8.25", BLUE, BLUE_S),
            ("MXFP6: 6 + 8/32", 6.25, "6.25", BLUE, BLUE_S),
            ("NVFP4: 4 + 8/16", 4.5, "4.5", GREEN, GREEN_S),
            ("MXFP4: 4 + 8/32", 4.25, "4.25", PURPLE, PURPLE_S),
        ],
        16,
        width=380,
        gap=50,
    )
    f.t(16, 318, "NVFP4 adds four bytes per tensor (its FP32 scale).", size=15, fill=GREY)
    return f


@figure
def f63_worked_block():
    f = Fig(
        "63-worked-block",
        470,
        "One block of 16 values scaled as NVFP4 and as MXFP4",
        "A block whose largest magnitude is 3.1, in a tensor whose largest is 200. NVFP4: the tensor scale is 200 "
        "over 6 times 448, about 0.0744; the block scale in real terms is 3.1 over 6, about 0.517, which is 6.94 "
        "tensor-scale units, rounded by E4M3 to 7.0; the effective scale is about 0.521 and the largest element "
        "becomes 5.95, rounded to 6. MXFP4: the scale is 2 to the power floor(log2 3.1) minus 2, that is 0.5; the "
        "largest element becomes 6.2 and saturates to 6, and the grid of the other elements is spaced for a block "
        "maximum of 3.0.",
    )
    f.heading("Block max a = 3.1, tensor max A = 200")
    f.t(16, 60, "NVFP4 (E4M3 block scale, FP32 tensor scale)", size=15, bold=True)
    steps = [
        ("tensor scale", "200 / (6 x 448) ≈ 0.0744"),
        ("block scale, real", "3.1 / 6 ≈ 0.517"),
        ("in tensor units", "0.517 / 0.0744 = 6.94"),
        ("rounded to E4M3", "7.0 (spacing 0.5 in 4..8)"),
        ("effective scale", "0.0744 x 7.0 ≈ 0.521"),
        ("largest element", "3.1 / 0.521 ≈ 5.95 → 6"),
    ]
    for i, (k, v) in enumerate(steps):
        y = 72 + i * 30
        f.r(16, y, 448, 26, GREEN if i == 5 else "#ffffff", GREEN_S if i == 5 else RULE)
        f.t(24, y + 19, k, size=15)
        f.t(456, y + 19, v, size=15, anchor="end", bold=True)
    f.t(16, 290, "MXFP4 (power-of-two E8M0 scale)", size=15, bold=True)
    steps = [
        ("scale X", "2^(floor(log2 3.1) - 2) = 0.5"),
        ("largest element", "3.1 / 0.5 = 6.2 → saturates to 6"),
        ("grid spaced for", "a block maximum of 3.0"),
    ]
    for i, (k, v) in enumerate(steps):
        y = 302 + i * 30
        f.r(16, y, 448, 26, ORANGE if i == 1 else "#ffffff", ORANGE_S if i == 1 else RULE)
        f.t(24, y + 19, k, size=15)
        f.t(456, y + 19, v, size=15, anchor="end", bold=True)
    f.t(16, 420, "Power-of-two scales put a / X anywhere in [4, 8):", size=15)
    f.t(16, 444, "up to a factor of two off for other blocks.", size=15)
    return f


@figure
def f63_scale_layout():
    f = Fig(
        "63-scale-layout",
        430,
        "The interleaved layout of block scales for a block-scaled GEMM",
        "Left: one scale tile covers 128 rows and 4 scale blocks along K, 512 bytes, with its rows in four groups of "
        "32. Right: in memory, the tile is 32 chunks of 16 bytes; chunk r holds the four K scales of row r, then "
        "those of rows r + 32, r + 64 and r + 96. A plain row-major scale matrix puts the wrong scale under each "
        "block: a wrong answer, not a slow one.",
    )
    f.heading("One scale tile: 128 rows x 4 K-blocks, 512 B")
    cols = [(BLUE, BLUE_S), (GREEN, GREEN_S), (ORANGE, ORANGE_S), (PURPLE, PURPLE_S)]
    x0, y0, cw, rh = 16, 70, 30, 64
    f.t(x0, 60, "logical: rows x K-blocks", size=15)
    for g in range(4):
        fill, stroke = cols[g]
        for k in range(4):
            f.r(x0 + k * cw, y0 + g * rh, cw, rh, fill, stroke, sw=0.8)
        f.r(x0, y0 + g * rh, 4 * cw, 8, stroke, stroke)
        f.t(x0 + 4 * cw + 8, y0 + g * rh + 12, f"row {32 * g}", size=15, bold=True)
        f.t(x0 + 4 * cw + 8, y0 + g * rh + 32, f"to {32 * g + 31}", size=15)
    f.t(x0, y0 + 4 * rh + 20, "k0 k1 k2 k3", size=15)
    mx = 220
    f.t(mx, 60, "memory: 32 chunks of 16 bytes", size=15)
    f.t(mx, 88, "chunk 0:", size=15, bold=True)
    for g in range(4):
        fill, stroke = cols[g]
        for k in range(4):
            f.r(mx + (g * 4 + k) * 15, 96, 15, 28, fill, stroke, sw=0.8)
    for g in range(4):
        f.t(mx + g * 60 + 30, 144, f"r{32 * g}", size=15, anchor="middle")
    f.t(mx, 182, "chunk 1: rows 1, 33, 65, 97", size=15)
    f.t(mx, 206, "...", size=15)
    f.t(mx, 230, "chunk 31: rows 31, 63, 95, 127", size=15)
    f.t(mx, 270, "each chunk: 4 K-scales of", size=15)
    f.t(mx, 292, "4 rows, 32 apart", size=15, bold=True)
    f.t(16, 376, "Written row-major instead, the scales land under", size=15)
    f.t(16, 400, "the wrong blocks: a wrong answer, not a slow one.", size=15, bold=True)
    return f


# ---------------------------------------------------------------- capsule 64


@figure
def f64_promotion():
    f = Fig(
        "64-promotion",
        360,
        "Promotion of FP8 partial sums into FP32 every 128 elements of K",
        "Along K, the tensor cores accumulate each 128-element scale block b in their own limited-precision "
        "accumulator, retaining about 14 bits on the H800. After each block, CUDA-core FMAs multiply the partial "
        "result by the activation scale and the weight scale of that block, add it into a separate FP32 accumulator "
        "in registers, and reset the tensor-core accumulator, so the long sum is never kept in the 14-bit one.",
    )
    f.heading("Promote every 128 of K: C += sA sB acc")
    for b in range(4):
        x = 16 + b * 112
        f.box(x, 50, 104, 40, f"K block {b}", BLUE, BLUE_S)
        f.box(x, 110, 104, 56, ["wgmma acc", "~14 bits"], ORANGE, ORANGE_S)
        f.ln(x + 52, 90, x + 52, 108, arrow=True)
        f.ln(x + 52, 166, x + 52, 214, arrow=True)
        f.t(x + 58, 196, "x sA sB", size=15)
    f.box(16, 216, 448, 44, "FP32 accumulator C in registers (CUDA-core FMAs)", GREEN, GREEN_S)
    f.t(16, 290, "after each block: acc ← 0", size=15, bold=True)
    f.t(16, 314, "Scales: 1 x 128 per token for activations,", size=15)
    f.t(16, 338, "128 x 128 blocks for weights.", size=15)
    return f


@figure
def f64_unaligned():
    f = Fig(
        "64-unaligned",
        250,
        "Blocks for M = 256, N = 7168 on 132 SMs with two tile widths",
        "Bars of blocks launched against the 132 SMs for a GEMM of M = 256 and N = 7168: 128 by 128 tiles give "
        "112 blocks, leaving 20 SMs idle; N tiles of 112, not a power of two, give 128 blocks, so 16 more SMs work.",
    )
    f.heading("M = 256, N = 7168 on 132 SMs")
    x0, width = 16, 400
    hbars(
        f,
        x0,
        62,
        [
            ("128 x 128 tiles: 2 x 56 blocks", 112, "112", ORANGE, ORANGE_S),
            ("128 x 112 tiles: 2 x 64 blocks", 128, "128", GREEN, GREEN_S),
        ],
        132,
        width=width,
        value_inside=True,
    )
    xs = x0 + width
    f.ln(xs, 50, xs, 170, stroke=RED_S, dash="5 4", sw=2)
    f.t(xs, 190, "132 SMs", size=15, anchor="middle", fill=RED_S, bold=True)
    f.t(16, 232, "16 more SMs busy with the unaligned tile.", size=15)
    return f


@figure
def f64_moe_layouts():
    f = Fig(
        "64-moe-layouts",
        470,
        "DeepGEMM's contiguous and masked layouts for grouped MoE GEMMs",
        "Left, contiguous, for training and prefill: the tokens of each expert are concatenated into one tall "
        "matrix, each expert's segment padded to a multiple of the M block, so every block of rows belongs to one "
        "expert. Right, masked, for decode under CUDA graphs: every expert has a fixed-capacity slab and a count on "
        "the device; the kernel is launched for the full capacity and blocks past an expert's count exit at once.",
    )
    f.heading("Grouped GEMM layouts along M (tokens)")
    f.t(16, 58, "contiguous", size=15, bold=True)
    f.t(16, 78, "training, prefill", size=15, fill=GREY)
    experts = [(3, 0.4, BLUE, BLUE_S), (2, 0.7, GREEN, GREEN_S), (4, 0.2, PURPLE, PURPLE_S)]
    y = 92
    bh = 24
    for i, (blocks, pad, fill, stroke) in enumerate(experts):
        for k in range(blocks):
            last = k == blocks - 1
            f.r(16, y, 180, bh, fill, stroke, sw=0.8)
            if last:
                f.r(16 + 180 * (1 - pad), y, 180 * pad, bh, "#ffffff", stroke, dash="3 2", sw=0.8)
            y += bh
        f.t(204, y - bh * blocks / 2 + 5, f"e{i}", size=15, bold=True)
    f.t(16, y + 22, "padding ≤ one block", size=15)
    f.t(16, y + 42, "per expert", size=15)
    x = 260
    f.t(x, 58, "masked", size=15, bold=True)
    f.t(x, 78, "decode, CUDA graphs", size=15, fill=GREY)
    y = 92
    counts = [2, 3, 1]
    for i, (cnt, (_, _, fill, stroke)) in enumerate(zip(counts, experts, strict=True)):
        for k in range(4):
            used = k < cnt
            f.r(x, y, 150, bh, fill if used else "#ffffff", stroke, sw=0.8, dash=None if used else "3 2")
            if not used:
                f.t(x + 75, y + 17, "exits", size=15, anchor="middle", fill=GREY)
            y += bh
        f.t(x + 158, y - 2 * bh + 5, f"e{i}", size=15, bold=True)
    f.t(x, y + 22, "fixed capacity;", size=15)
    f.t(x, y + 42, "count on device", size=15)
    return f


# ---------------------------------------------------------------- capsule 65


@figure
def f65_draft_verify():
    f = Fig(
        "65-draft-verify",
        400,
        "One speculative step: draft four tokens, verify in one target pass, accept a prefix",
        "The drafter proposes four tokens x1 to x4 after the prefix. The target runs once over the prefix and all "
        "four, giving its distribution at every draft position and one more. Left to right, x1 and x2 are accepted; "
        "x3 is rejected, so x4 is discarded and a replacement is sampled from the residual distribution at x3's "
        "position. The step yields three tokens; had all four been accepted, a bonus token would make five.",
    )
    f.heading("Draft γ = 4, verify once, accept a prefix")
    f.t(16, 58, "draft model q proposes:", size=15)
    toks = ["prefix", "x1", "x2", "x3", "x4"]
    xs = [16, 136, 216, 296, 376]
    ws = [112, 72, 72, 72, 72]
    for t, x, w in zip(toks, xs, ws, strict=True):
        f.box(x, 68, w, 36, t, LIGHT if t == "prefix" else BLUE, GREY if t == "prefix" else BLUE_S)
    f.box(16, 128, 432, 40, "target p: one pass over prefix + x1..x4", ORANGE, ORANGE_S)
    f.ln(240, 104, 240, 126, arrow=True)
    f.t(16, 198, "accept x_i with probability min(1, p/q):", size=15)
    marks = [
        ("x1", "accept", GREEN, GREEN_S),
        ("x2", "accept", GREEN, GREEN_S),
        ("x3", "reject", RED, RED_S),
        ("x4", "discard", "#ffffff", GREY),
    ]
    for (t, m, fill, stroke), x in zip(marks, xs[1:], strict=True):
        f.box(x, 210, 72, 50, [t, m], fill, stroke, size=15)
    f.box(16, 210, 112, 50, ["left to", "right"], "#ffffff", RULE, size=15)
    f.box(296, 276, 72, 36, "x3'", GREEN, GREEN_S)
    f.ln(332, 262, 332, 274, arrow=True)
    f.t(290, 300, "resample from max(0, p - q)", size=15, anchor="end")
    f.t(16, 346, "This step yields x1, x2, x3': 3 tokens.", size=15, bold=True)
    f.t(16, 370, "All accepted: 4 + a bonus token = 5.", size=15)
    return f


@figure
def f65_expected_tokens():
    f = Fig(
        "65-expected-tokens",
        360,
        "Expected tokens per target step against draft length",
        "Curves of the expected tokens per step, (1 minus alpha to the power gamma + 1) over (1 minus alpha), for "
        "draft lengths gamma from 0 to 10 and acceptance rates alpha of 0.6, 0.8 and 0.9, computed from the "
        "formula. At alpha = 0.8 the value is 3.36 at gamma = 4 and 4.33 at gamma = 8, and the curve flattens "
        "towards its limit of 5: late positions survive only if all earlier ones did.",
    )
    f.heading("E[tokens] = (1 - α^(γ+1)) / (1 - α)")
    x0, x1, y0, y1 = 56, 420, 300, 50

    def X(g):
        return x0 + (x1 - x0) * g / 10

    def Y(v):
        return y0 + (y1 - y0) * (v - 1) / 7

    for v in range(1, 9):
        f.ln(x0, Y(v), x1, Y(v), stroke=RULE)
        f.t(x0 - 8, Y(v) + 5, str(v), size=15, anchor="end")
    for g in range(0, 11, 2):
        f.ln(X(g), y0, X(g), y0 + 5)
        f.t(X(g), y0 + 22, str(g), size=15, anchor="middle")
    f.t(x1, y0 + 44, "draft length γ", size=15, anchor="end")
    f.ln(x0, y0, x1, y0)
    f.ln(x0, y0, x0, y1)
    for a, stroke, sw in ((0.9, GREEN_S, 2), (0.8, BLUE_S, 3), (0.6, ORANGE_S, 2)):
        pts = [f"{X(g):.1f},{Y((1 - a ** (g + 1)) / (1 - a)):.1f}" for g in range(11)]
        f.p("M " + " L ".join(pts), stroke=stroke, sw=sw)
        v = (1 - a**11) / (1 - a)
        f.t(X(10) + 6, Y(v) + 5, f"α={a}", size=15, fill=stroke, bold=True)
    for g in (4, 8):
        v = (1 - 0.8 ** (g + 1)) / 0.2
        f.c(X(g), Y(v), 5, BLUE, BLUE_S)
        f.t(X(g), Y(v) + 24, f"{v:.2f}", size=15, anchor="middle", bold=True)
    return f


@figure
def f65_tree_mask():
    f = Fig(
        "65-tree-mask",
        330,
        "A draft tree and the attention mask it needs",
        "Left: a tree of six draft tokens below the last accepted token 0: nodes 1 and 2 are candidates for the "
        "first position, 3 and 4 follow 1, 5 follows 2, and 6 follows 3. Right: the mask, a row per node, in which "
        "node i may attend to node j only if j is i itself or one of its ancestors; node 6, for example, sees 0, "
        "1, 3 and 6. It is not causal, so it is passed in as a small bitmask per sequence.",
    )
    f.heading("Tree of drafts → ancestor mask")
    parent = {1: 0, 2: 0, 3: 1, 4: 1, 5: 2, 6: 3}
    pos = {0: (100, 70), 1: (56, 140), 2: (160, 140), 3: (30, 210), 4: (90, 210), 5: (160, 210), 6: (30, 280)}
    for c, pnode in parent.items():
        f.ln(pos[pnode][0], pos[pnode][1] + 16, pos[c][0], pos[c][1] - 16, stroke=GREY)
    for n, (x, y) in pos.items():
        f.c(x, y, 16, LIGHT if n == 0 else BLUE, GREY if n == 0 else BLUE_S)
        f.t(x, y + 5, str(n), size=15, anchor="middle", bold=True)

    def ancestors(i):
        out = {i}
        while i in parent:
            i = parent[i]
            out.add(i)
        return out

    mx, my, c = 250, 70, 30
    for j in range(7):
        f.t(mx + j * c + c / 2, my - 8, str(j), size=15, anchor="middle", fill=GREY)
    for i in range(7):
        f.t(mx - 8, my + i * c + c / 2 + 5, str(i), size=15, anchor="end", fill=GREY)
        anc = ancestors(i)
        for j in range(7):
            on = j in anc
            f.r(mx + j * c, my + i * c, c, c, GREEN if on else "#ffffff", GREEN_S if on else RULE, sw=0.8)
    f.t(mx, my + 7 * c + 26, "row i: may attend to j", size=15)
    return f


# ---------------------------------------------------------------- capsule 66


@figure
def f66_builder():
    f = Fig(
        "66-builder",
        420,
        "What a CUTLASS collective builder takes and what it deduces",
        "The collective builder takes high-level choices: element types, layouts and alignments of the operands, "
        "the tile shape, the cluster shape, a stage count or Auto, and a kernel schedule or Auto. From them it "
        "deduces the swizzled shared-memory layouts, the TMA copy atoms, the wgmma atom and the number of stages "
        "that fits in the shared memory left after the epilogue.",
    )
    f.heading("CollectiveBuilder: choices in, parts out")
    f.r(16, 44, 448, 136, BLUE, BLUE_S, rx=6)
    f.t(28, 68, "you choose", size=15, bold=True)
    for i, s in enumerate(
        [
            "types, layouts, alignments of A, B, C, D",
            "tile shape, e.g. 128 x 256 x 64",
            "cluster shape, e.g. 2 x 1 x 1",
            "stage count and schedule (or Auto)",
        ]
    ):
        f.t(28, 94 + i * 24, s, size=15)
    f.ln(240, 182, 240, 212, arrow=True)
    f.box(90, 214, 300, 40, "CollectiveBuilder", YELLOW, YELLOW_S, bold_first=True)
    f.ln(240, 256, 240, 284, arrow=True)
    f.r(16, 286, 448, 124, GREEN, GREEN_S, rx=6)
    f.t(28, 310, "it deduces", size=15, bold=True)
    for i, s in enumerate(
        [
            "swizzled shared-memory layouts",
            "TMA copy atoms and the wgmma atom",
            "stages that fit after the epilogue's buffers",
        ]
    ):
        f.t(28, 336 + i * 24, s, size=15)
    return f


@figure
def f66_evt_tree():
    f = Fig(
        "66-evt-tree",
        380,
        "The epilogue ReLU(beta C + alpha acc + bias) as a visitor tree",
        "An epilogue visitor tree: the root applies ReLU to a fused multiply-add of beta, the element of C and a "
        "second fused multiply-add of alpha, the accumulator and the bias. Leaves fetch values: the accumulator, "
        "the source C, the scalars alpha and beta, and the bias vector broadcast along the tile; inner nodes "
        "compute. The tree runs in the consumer warps while the outputs are still on chip.",
    )
    f.heading("ReLU(fma(β, C, fma(α, acc, bias)))")

    def node(x, y, label, fill, stroke, w=110):
        f.box(x - w / 2, y - 18, w, 36, label, fill, stroke, size=15)

    node(240, 70, "ReLU", YELLOW, YELLOW_S)
    node(240, 150, "fma", YELLOW, YELLOW_S)
    node(70, 230, "β (scalar)", BLUE, BLUE_S)
    node(200, 230, "C (source)", BLUE, BLUE_S)
    node(350, 230, "fma", YELLOW, YELLOW_S)
    node(240, 310, "α (scalar)", BLUE, BLUE_S)
    node(360, 310, "acc", BLUE, BLUE_S, w=80)
    node(436, 350, "bias", BLUE, BLUE_S, w=76)
    for x1, y1, x2, y2 in (
        (240, 88, 240, 132),
        (240, 168, 70, 212),
        (240, 168, 200, 212),
        (240, 168, 350, 212),
        (350, 248, 240, 292),
        (350, 248, 360, 292),
        (350, 248, 436, 332),
    ):
        f.ln(x1, y1, x2, y2, stroke=GREY)
    f.r(16, 356, 14, 14, YELLOW, YELLOW_S)
    f.t(36, 368, "compute", size=15)
    f.r(116, 356, 14, 14, BLUE, BLUE_S)
    f.t(136, 368, "fetch / broadcast", size=15)
    return f


@figure
def f66_stream_k():
    f = Fig(
        "66-stream-k",
        360,
        "Stream-K splits the K loop of the last partial wave among all SMs",
        "Four SMs and ten output tiles, as an illustration. With a plain persistent scheduler, two full waves of "
        "four tiles are followed by a third wave of two tiles in which half the SMs idle. Stream-K splits the K "
        "loops of those last two tiles into four pieces, so every SM takes a share and the partial results are "
        "summed, at the cost of a reduction.",
    )
    f.heading("Ten tiles on four SMs (illustration)")

    def lane(y0, label, segs):
        f.t(16, y0 - 8, label, size=15, bold=True)
        for sm in range(4):
            y = y0 + sm * 26
            f.t(16, y + 17, f"SM {sm}", size=15)
            for x, w, text, fill, stroke in segs[sm]:
                f.r(70 + x, y, w, 22, fill, stroke, sw=0.8)
                if text:
                    f.t(70 + x + w / 2, y + 16, text, size=15, anchor="middle")

    tile = 120
    plain = []
    for sm in range(4):
        segs = [(0, tile, f"t{sm}", BLUE, BLUE_S), (tile, tile, f"t{sm + 4}", BLUE, BLUE_S)]
        if sm < 2:
            segs.append((2 * tile, tile, f"t{sm + 8}", ORANGE, ORANGE_S))
        else:
            segs.append((2 * tile, tile, "idle", "#ffffff", RULE))
        plain.append(segs)
    lane(70, "persistent, tile by tile", plain)
    sk = []
    for sm in range(4):
        segs = [
            (0, tile, f"t{sm}", BLUE, BLUE_S),
            (tile, tile, f"t{sm + 4}", BLUE, BLUE_S),
            (2 * tile, tile / 2, f"t{8 + sm // 2}", ORANGE, ORANGE_S),
        ]
        sk.append(segs)
    lane(218, "stream-K for the last wave", sk)
    f.t(16, 340, "Each last tile: K split in two halves, summed.", size=15)
    return f


# ---------------------------------------------------------------- capsule 67


@figure
def f67_layout_offsets():
    f = Fig(
        "67-layout-offsets",
        470,
        "Three CuTe layouts of a 4 by 8 tile, each cell showing its offset",
        "Three 4 by 8 grids whose cells hold the offset the layout maps that coordinate to. Row-major (4,8):(8,1): "
        "row i holds 8i to 8i + 7. Column-major (4,8):(1,4): column j holds 4j to 4j + 3. Hierarchical "
        "((2,2),8):((1,16),2): the row mode is itself a layout of two pairs, so rows 0 to 3 start at offsets 0, 1, "
        "16 and 17, and each step along a row adds 2.",
    )
    f.heading("A layout maps coordinates to offsets")
    panels = [
        ("(4,8):(8,1), row-major", lambda i, j: 8 * i + j, BLUE, BLUE_S),
        ("(4,8):(1,4), column-major", lambda i, j: i + 4 * j, GREEN, GREEN_S),
        ("((2,2),8):((1,16),2), hierarchical", lambda i, j: (i % 2) + 16 * (i // 2) + 2 * j, PURPLE, PURPLE_S),
    ]
    cw, ch = 54, 24
    for k, (label, fn, fill, stroke) in enumerate(panels):
        y0 = 58 + k * 138
        f.t(16, y0, label, size=15, bold=True)
        for i in range(4):
            for j in range(8):
                x, y = 24 + j * cw, y0 + 10 + i * ch
                f.r(x, y, cw, ch, fill if (i + j) % 2 == 0 else "#ffffff", stroke, sw=0.8)
                f.t(x + cw / 2, y + 18, str(fn(i, j)), size=15, anchor="middle")
    return f


@figure
def f67_zipped_divide():
    f = Fig(
        "67-zipped-divide",
        380,
        "zipped_divide of a 4 by 8 layout by a 2 by 4 tile",
        "The 4 by 8 matrix divided into 2 by 4 tiles. Each cell shows two indices: the tile, numbered 0 to 3 "
        "column-major over the 2 by 2 grid of tiles, and the element inside the tile, numbered 0 to 7 column-major. "
        "zipped_divide gathers them into a layout of shape ((2,4),(2,2)): the first mode indexes the eight elements "
        "of a tile, the second the four tiles.",
    )
    f.heading("zipped_divide((4,8), (2,4)) → ((2,4),(2,2))")
    cols = [(BLUE, BLUE_S), (GREEN, GREEN_S), (ORANGE, ORANGE_S), (PURPLE, PURPLE_S)]
    cw, ch = 54, 44
    x0, y0 = 24, 56
    for i in range(4):
        for j in range(8):
            ti, tj = i // 2, j // 4
            tile = ti + 2 * tj
            elem = (i % 2) + 2 * (j % 4)
            fill, stroke = cols[tile]
            x, y = x0 + j * cw, y0 + i * ch
            f.r(x, y, cw, ch, fill, stroke, sw=0.8)
            f.t(x + cw / 2, y + 19, f"T{tile}", size=15, anchor="middle", bold=True)
            f.t(x + cw / 2, y + 37, f"e{elem}", size=15, anchor="middle")
    f.ln(x0 + 4 * cw, y0, x0 + 4 * cw, y0 + 4 * ch, sw=3)
    f.ln(x0, y0 + 2 * ch, x0 + 8 * cw, y0 + 2 * ch, sw=3)
    f.t(16, 270, "mode 0, (2,4): element e0..e7 inside a tile", size=15)
    f.t(16, 294, "mode 1, (2,2): tile T0..T3 of the grid", size=15)
    f.t(16, 334, "local_tile(gA, tile, coord) picks one T:", size=15, bold=True)
    f.t(16, 358, "the tile that block coord owns.", size=15)
    return f


# ---------------------------------------------------------------- capsule 68


@figure
def f68_async_error():
    f = Fig(
        "68-async-error",
        400,
        "Where an asynchronous kernel error is reported, with and without blocking launches",
        "Top, default: the host enqueues kernels A, B and C and carries on; kernel B faults on the GPU, but the "
        "error is raised only at the next call that synchronises, an unrelated torch.cat, with a stack trace that "
        "points there. Bottom, with CUDA_LAUNCH_BLOCKING=1: every launch waits for its kernel, so the error is raised "
        "at the launch of B and the trace points at the operation that caused it.",
    )
    f.heading("Where does the error surface?")

    def row(y, label, segs):
        f.t(16, y + 18, label, size=15)
        for x, w, text, fill, stroke in segs:
            f.r(x, y, w, 26, fill, stroke, sw=1)
            if text:
                f.t(x + w / 2, y + 18, text, size=15, anchor="middle")

    f.t(16, 62, "default (asynchronous)", size=15, bold=True)
    row(
        74,
        "host",
        [
            (70, 44, "A", LIGHT, GREY),
            (118, 44, "B", LIGHT, GREY),
            (166, 44, "C", LIGHT, GREY),
            (214, 140, "more Python", "#ffffff", RULE),
            (358, 106, "torch.cat", RED, RED_S),
        ],
    )
    row(
        108,
        "GPU",
        [(90, 80, "A", BLUE, BLUE_S), (172, 80, "B: fault", RED, RED_S), (254, 80, "C (fails)", LIGHT, GREY)],
    )
    f.t(464, 160, "error raised here, trace points here", size=15, anchor="end", fill=RED_S, bold=True)
    f.ln(16, 182, W - 16, 182, stroke=RULE)
    f.t(16, 214, "CUDA_LAUNCH_BLOCKING=1", size=15, bold=True)
    row(226, "host", [(70, 96, "A + wait", LIGHT, GREY), (170, 96, "B + wait", RED, RED_S)])
    row(260, "GPU", [(70, 90, "A", BLUE, BLUE_S), (170, 90, "B: fault", RED, RED_S)])
    f.t(16, 318, "The error is raised at B's launch.", size=15, bold=True)
    f.t(16, 342, "Blind spots: unchecked <<<...>>> launches, and", size=15)
    f.t(16, 366, "CUDA graphs: only the replay fails.", size=15)
    return f


@figure
def f68_error_patterns():
    f = Fig(
        "68-error-patterns",
        330,
        "Three shapes of error in an output tile and what they usually mean",
        "Three schematic maps of where an output differs from its reference. Left: errors only in the last rows and "
        "columns, which points at boundary handling. Middle: a regular stripe repeating every 64 elements, which "
        "points at a tile or swizzle mistake. Right: isolated elements at random places, which points at a race. "
        "Illustrations, not measurements.",
    )
    f.heading("Plot the error: its shape names the bug")
    n, c = 16, 8.5
    import random

    rnd = random.Random(68)
    races = {(rnd.randrange(n), rnd.randrange(n)) for _ in range(9)}
    panels = [
        ("boundary", "edge rows, cols", lambda i, j: i >= 14 or j >= 14),
        ("tile or swizzle", "stripe every 64", lambda i, j: j % 8 == 5),
        ("race", "random, isolated", lambda i, j: (i, j) in races),
    ]
    for k, (title, sub, bad) in enumerate(panels):
        x0, y0 = 16 + k * 156, 56
        for i in range(n):
            for j in range(n):
                f.r(x0 + j * c, y0 + i * c, c, c, RED_S if bad(i, j) else LIGHT, "#ffffff", sw=0.5)
        f.t(x0, y0 + n * c + 26, title, size=15, bold=True)
        f.t(x0, y0 + n * c + 48, sub, size=15)
    f.t(16, 270, "Each square: 8 x 8 output elements (schematic).", size=15, fill=GREY)
    f.t(16, 300, "Localise first: the first layer that diverges.", size=15)
    return f


@figure
def f68_caching_allocator():
    f = Fig(
        "68-caching-allocator",
        350,
        "Why memcheck misses an overrun under PyTorch's caching allocator",
        "Top: with the caching allocator, tensors A and B are slices of one large pooled block; a kernel that writes "
        "past the end of A lands in B, still inside a valid allocation, so compute-sanitizer's memcheck sees "
        "nothing wrong. Bottom: with PYTORCH_NO_CUDA_MEMORY_CACHING=1 each tensor is its own allocation, and the same "
        "overrun falls outside any allocation, where memcheck reports it.",
    )
    f.heading("An overrun past the end of tensor A")
    f.t(16, 62, "caching allocator (default)", size=15, bold=True)
    f.r(16, 74, 448, 44, "#ffffff", GREY, dash="5 3")
    f.box(24, 80, 180, 32, "tensor A", BLUE, BLUE_S)
    f.box(206, 80, 180, 32, "tensor B", GREEN, GREEN_S)
    f.r(206, 80, 40, 32, RED, RED_S)
    f.t(16, 142, "overrun lands in B, a valid address:", size=15)
    f.t(16, 164, "memcheck silent, B corrupted", size=15, bold=True, fill=RED_S)
    f.ln(16, 184, W - 16, 184, stroke=RULE)
    f.t(16, 214, "PYTORCH_NO_CUDA_MEMORY_CACHING=1", size=15, bold=True)
    f.box(16, 226, 180, 32, "tensor A", BLUE, BLUE_S)
    f.r(198, 226, 40, 32, RED, RED_S)
    f.box(280, 226, 180, 32, "tensor B", GREEN, GREEN_S)
    f.t(16, 290, "overrun falls outside any allocation:", size=15)
    f.t(16, 312, "memcheck reports thread, address, line", size=15, bold=True, fill=GREEN_S)
    f.r(330, 50, 14, 14, RED, RED_S)
    f.t(350, 62, "overrun bytes", size=15)
    return f


# ---------------------------------------------------------------- capsule 69


@figure
def f69_levels():
    f = Fig(
        "69-levels",
        300,
        "KernelBench's tasks by level",
        "Bars of task counts: Level 1, single operators, 100 tasks; Level 2, fusion patterns, 100; Level 3, full "
        "architectures, 50; and the later Level 4, whole models from Hugging Face, 20. The original release has "
        "the first three levels, 250 tasks.",
    )
    f.heading("KernelBench: 250 tasks in three levels")
    hbars(
        f,
        16,
        62,
        [
            ("Level 1: single operators", 100, "100", BLUE, BLUE_S),
            ("Level 2: fusion patterns", 100, "100", GREEN, GREEN_S),
            ("Level 3: full architectures", 50, "50", PURPLE, PURPLE_S),
            ("Level 4 (later): whole models", 20, "20", LIGHT, GREY),
        ],
        100,
        width=380,
    )
    f.t(16, 286, "Baselines: PyTorch eager, or torch.compile.", size=15, fill=GREY)
    return f


@figure
def f69_fastp():
    f = Fig(
        "69-fastp",
        360,
        "fast_p against p for two hypothetical models",
        "Step curves of fast_p, the fraction of tasks correct and faster than p times the reference, on a "
        "logarithmic axis of p from 0.5 to 20. Model A is correct everywhere at 1.05 times: fast_p is 1 up to "
        "p = 1.05, then 0, so fast_1 is 1 and fast_1.1 is 0. Model B is 10 times faster on a tenth of the tasks and "
        "fails elsewhere: fast_p is 0.1 up to p = 10. The examples are the capsule's own, not measurements.",
    )
    f.heading("fast_p is a count: read the whole curve")
    x0, x1, y0, y1 = 56, 450, 280, 60
    lo, hi = math.log10(0.5), math.log10(20)

    def X(p):
        return x0 + (x1 - x0) * (math.log10(p) - lo) / (hi - lo)

    def Y(v):
        return y0 + (y1 - y0) * v

    for v in (0, 0.25, 0.5, 0.75, 1):
        f.ln(x0, Y(v), x1, Y(v), stroke=RULE)
        f.t(x0 - 8, Y(v) + 5, f"{v:g}", size=15, anchor="end")
    for p in (0.5, 1, 2, 5, 10, 20):
        f.ln(X(p), y0, X(p), y0 + 5)
        f.t(X(p), y0 + 22, f"{p:g}", size=15, anchor="middle")
    f.t(x1, y0 + 44, "threshold p (log scale)", size=15, anchor="end")
    f.ln(x0, y0, x1, y0)
    f.ln(x0, y0, x0, y1)
    f.p(
        f"M {fmt(X(0.5))} {fmt(Y(1))} L {fmt(X(1.05))} {fmt(Y(1))} L {fmt(X(1.05))} {fmt(Y(0))} "
        f"L {fmt(X(20))} {fmt(Y(0))}",
        stroke=BLUE_S,
        sw=3,
    )
    f.p(
        f"M {fmt(X(0.5))} {fmt(Y(0.1))} L {fmt(X(10))} {fmt(Y(0.1))} L {fmt(X(10))} {fmt(Y(0))}",
        stroke=ORANGE_S,
        sw=3,
        dash="7 4",
    )
    f.t(X(1.15), Y(0.93), "A: 1.05x on every task", size=15, fill=BLUE_S, bold=True)
    f.t(X(1.15), Y(0.18), "B: 10x on a tenth, fails elsewhere", size=15, fill=ORANGE_S, bold=True)
    return f


@figure
def f69_speed_of_light():
    f = Fig(
        "69-speed-of-light",
        290,
        "A ReLU's speed of light rules out a claimed 5x speed-up",
        "Bars in microseconds for a ReLU over 4096 by 4096 FP32 values, 134 MB moved at least: the bound at about "
        "4.2 TB/s is 32 microseconds; if PyTorch takes 36, no correct kernel can be even 2 times faster, and a "
        "claimed 5 times speed-up would mean 7.2 microseconds, far below the bound: a bug in the kernel or the "
        "harness.",
    )
    f.heading("ReLU, 4096 x 4096 FP32: 134 MB moved")
    hbars(
        f,
        16,
        62,
        [
            ("PyTorch (example)", 36, "36 µs", LIGHT, GREY),
            ("speed of light at 4.2 TB/s", 32, "32 µs", GREEN, GREEN_S),
            ("a claimed 5x speed-up", 7.2, "7.2 µs: impossible", RED, RED_S),
        ],
        36,
        width=340,
    )
    f.t(16, 236, "Best possible: 36 / 32 = 1.125x.", size=15, bold=True)
    f.t(16, 262, "Larger claims are bugs to find.", size=15)
    return f


# ---------------------------------------------------------------- capsule 70


@figure
def f70_swe_bench():
    f = Fig(
        "70-swe-bench",
        260,
        "SWE-bench Lite solved by one open model with one and with 250 samples",
        "Bars from Large Language Monkeys: one open model solved 15.9 percent of SWE-bench Lite issues with one "
        "sample and 56 percent with 250, above the single-attempt state of the art of the time, 43 percent. With a "
        "verifier to pick the passing sample, coverage becomes accuracy.",
    )
    f.heading("SWE-bench Lite: % of issues solved")
    hbars(
        f,
        16,
        62,
        [
            ("one open model, 1 sample", 15.9, "15.9%", LIGHT, GREY),
            ("the same model, 250 samples", 56, "56%", GREEN, GREEN_S),
            ("single-attempt state of the art then", 43, "43%", BLUE, BLUE_S),
        ],
        60,
        width=380,
    )
    f.t(16, 240, "Where a verifier exists, coverage becomes accuracy.", size=15, fill=GREY)
    return f


@figure
def f70_search_shapes():
    f = Fig(
        "70-search-shapes",
        460,
        "Four shapes of test-time search over kernels",
        "Four small diagrams. Independent sampling: k attempts from the same prompt, the best verified one kept. "
        "Refinement: a chain in which each attempt gets the verifier's feedback on the previous one. Beam search: "
        "branch several refinements from the best few kernels, keep the best few, branch again. Evolution: a "
        "population from which new candidates are mutated from one parent or combine two, selection keeping both "
        "fast and different kernels.",
    )
    f.heading("Ways to spend samples")
    quads = [
        (16, 44, "independent samples"),
        (248, 44, "refinement chain"),
        (16, 250, "beam search"),
        (248, 250, "evolution"),
    ]
    for x, y, label in quads:
        f.r(x, y, 216, 196, "#ffffff", RULE, rx=6)
        f.t(x + 10, y + 24, label, size=15, bold=True)
    # independent
    x, y = 16, 44
    f.c(x + 108, y + 56, 11, LIGHT, GREY)
    for i in range(5):
        cx = x + 28 + i * 40
        f.ln(x + 108, y + 67, cx, y + 130, stroke=GREY)
        best = i == 3
        f.c(cx, y + 140, 11, GREEN if best else BLUE, GREEN_S if best else BLUE_S)
    f.t(x + 10, y + 182, "keep the best verified", size=15)
    # chain
    x, y = 248, 44
    for i in range(4):
        cx = x + 30 + i * 50
        f.c(cx, y + 90, 11, GREEN if i == 3 else BLUE, GREEN_S if i == 3 else BLUE_S)
        if i:
            f.ln(cx - 39, y + 90, cx - 13, y + 90, arrow=True)
    f.t(x + 10, y + 140, "each attempt sees the", size=15)
    f.t(x + 10, y + 160, "verifier's feedback", size=15)
    # beam
    x, y = 16, 250
    levels = [[108], [48, 108, 168], [28, 68, 148, 188]]
    keep = [[0], [0, 2], [2]]
    for li, xs in enumerate(levels):
        for k, cx in enumerate(xs):
            cy = y + 52 + li * 50
            f.c(x + cx, cy, 10, GREEN if k in keep[li] else LIGHT, GREEN_S if k in keep[li] else GREY)
    for a, b in ((108, 48), (108, 108), (108, 168)):
        f.ln(x + a, y + 62, x + b, y + 92, stroke=GREY)
    for a, b in ((48, 28), (48, 68), (168, 148), (168, 188)):
        f.ln(x + a, y + 112, x + b, y + 142, stroke=GREY)
    f.t(x + 10, y + 186, "green: kept; branch again", size=15)
    # evolution
    x, y = 248, 250
    pts = [(40, 60), (90, 50), (150, 64), (60, 110), (120, 100), (180, 112), (96, 150)]
    for i, (px, py) in enumerate(pts):
        f.c(x + px, y + py, 10, PURPLE if i < 6 else GREEN, PURPLE_S if i < 6 else GREEN_S)
    f.ln(x + 60, y + 120, x + 92, y + 141, stroke=GREY, arrow=True)
    f.ln(x + 120, y + 110, x + 100, y + 140, stroke=GREY, arrow=True)
    f.t(x + 10, y + 186, "mutate or combine", size=15)
    return f


@figure
def f70_feedback():
    f = Fig(
        "70-feedback",
        400,
        "The verifier's three stages and the feedback each returns to the model",
        "Three stages in order, compile, test and time, and what each can return to the model, in rising order of "
        "information: compiler errors that say exactly what to fix; a mismatch report with the worst element, its "
        "index and the expected value; and the measured time and speed-up, best with profiler output such as "
        "achieved bandwidth, occupancy and the top stall reasons.",
    )
    f.heading("Verifier stages and their feedback")
    stages = [
        ("compile", ["compiler errors: exactly", "what to fix"], LIGHT, GREY),
        ("test", ["mismatch: worst element,", "index, expected value"], BLUE, BLUE_S),
        ("time", ["speed-up, bandwidth, occupancy,", "top stall reasons (profiler)"], GREEN, GREEN_S),
    ]
    for i, (name, lines, fill, stroke) in enumerate(stages):
        y = 50 + i * 104
        f.box(16, y, 110, 64, name, fill, stroke, bold_first=True)
        f.ln(128, y + 32, 150, y + 32, arrow=True)
        f.box(152, y, 270, 64, lines, "#ffffff", stroke, size=15)
        if i < 2:
            f.ln(71, y + 66, 71, y + 100, arrow=True)
    f.ln(446, 56, 446, 366, arrow=True, sw=2)
    f.t(16, 380, "Information rises down the list; time is the reward.", size=15, fill=GREY)
    return f


# ---------------------------------------------------------------- capsule 71


@figure
def f71_results():
    f = Fig(
        "71-results",
        420,
        "The five CRFM results as generated time over PyTorch time, by source of the gain",
        "Bars of performance relative to PyTorch on an L40S in FP32, with 100 percent marked: Matmul 101.3 percent "
        "and Softmax 111.8, near the library; Conv2D 179.9, a convolution specialised for 3 input channels; "
        "Conv2D plus ReLU plus MaxPool 290.1 percent of eager and 189.0 of torch.compile, partly fusion; LayerNorm "
        "484.4, a weak baseline for a shape of 16 very long rows.",
    )
    f.heading("% of PyTorch's speed (L40S, FP32)")
    x0, width = 16, 400
    rows = [
        ("Matmul 4096²: near the library", 101.3, "101.3%", BLUE, BLUE_S),
        ("Softmax (4096, 65536): near the library", 111.8, "111.8%", BLUE, BLUE_S),
        ("Conv2D, 3 input channels: special shape", 179.9, "179.9%", PURPLE, PURPLE_S),
        ("Conv + ReLU + MaxPool vs torch.compile", 189.0, "189.0%", GREEN, GREEN_S),
        ("Conv + ReLU + MaxPool vs eager", 290.1, "290.1%", GREEN, GREEN_S),
        ("LayerNorm, 16 long rows: weak baseline", 484.4, "484.4%", ORANGE, ORANGE_S),
    ]
    hbars(f, x0, 62, rows, 500, width=width, gap=54, value_inside=False)
    xs = x0 + width * 100 / 500
    for i in range(len(rows)):
        f.ln(xs, 62 + i * 54 + 2, xs, 62 + i * 54 + 32, stroke=RED_S, dash="4 3", sw=1.5)
    f.t(16, 404, "Dashed: 100%, as fast as PyTorch.", size=15, fill=RED_S)
    return f


@figure
def f71_layernorm_sms():
    f = Fig(
        "71-layernorm-sms",
        380,
        "LayerNorm over 16 rows of 4,194,304 elements on the 142 SMs of an L40S",
        "Left: one block per row, the natural design for thousands of short rows, keeps 16 of the L40S's 142 SMs "
        "busy on this shape, so the time is set by 16 SMs' bandwidth. Right: splitting each row across many blocks "
        "and combining partial sums keeps all 142 busy. The 268 MB of data make at least 0.6 to 0.9 ms at 864 GB/s, "
        "and a speed-up of about 5 times is what the arithmetic predicts for the fix.",
    )
    f.heading("16 rows of 4,194,304 elements")
    for k, (label, busy) in enumerate((("one block per row", 16), ("split reduction", 142))):
        x0 = 16 + k * 236
        f.t(x0, 58, label, size=15, bold=True)
        for i in range(142):
            r, c = divmod(i, 12)
            on = i < busy
            f.r(x0 + c * 18, 70 + r * 16, 15, 12, GREEN if on else "#ffffff", GREEN_S if on else GREY, sw=0.7)
        f.t(x0, 290, f"{busy} of 142 SMs busy", size=15, bold=True)
    f.t(16, 330, "268 MB: 0.6 to 0.9 ms at 864 GB/s, at best.", size=15)
    f.t(16, 354, "The fix predicts about 5x; the post reports 484%.", size=15)
    return f


@figure
def f71_floors():
    f = Fig(
        "71-floors",
        270,
        "Lower bounds on the L40S for three of the tasks",
        "Bars of the least time each task can take on the L40S: the softmax moves 2.15 GB, at least 2.5 ms at 864 "
        "GB/s; the 4096 cubed FP32 matmul needs at least 1.5 ms at 91.6 TFLOP/s without tensor cores; the LayerNorm "
        "moves 540 to 810 MB, 0.6 to 0.9 ms.",
    )
    f.heading("Speed of light on the L40S (ms)")
    hbars(
        f,
        16,
        62,
        [
            ("Softmax: 2.15 GB at 864 GB/s", 2.5, "≥ 2.5 ms", BLUE, BLUE_S),
            ("Matmul 4096³ at 91.6 FP32 TFLOP/s", 1.5, "≥ 1.5 ms", PURPLE, PURPLE_S),
            ("LayerNorm: 540 to 810 MB", 0.9, "0.6 to 0.9 ms", ORANGE, ORANGE_S),
        ],
        2.5,
        width=330,
    )
    f.r(16 + 330 * 0.6 / 2.5, 168, 330 * 0.3 / 2.5, 22, ORANGE_S, ORANGE_S, opacity=0.35)
    f.t(16, 250, "Tensor cores, allowed by a 10^-2 tolerance, go lower.", size=15, fill=GREY)
    return f


# ---------------------------------------------------------------- capsule 72


@figure
def f72_results():
    f = Fig(
        "72-results",
        380,
        "Kevin-32B on the held-out KernelBench tasks against its base model and o4-mini",
        "Top: correctness of pure-CUDA kernels, 56 percent for the base model QwQ-32B and 82 percent for Kevin-32B. "
        "Bottom: mean speed-up over PyTorch eager, 0.53 times for the base model, 0.78 for OpenAI's o4-mini and 1.10 "
        "for Kevin-32B, with 1.0, as fast as eager, marked. These are the paper's figures on 20 held-out tasks of "
        "Levels 1 and 2.",
    )
    f.heading("20 held-out tasks, Levels 1 and 2")
    f.t(16, 60, "correct kernels", size=15, bold=True)
    hbars(
        f,
        16,
        86,
        [
            ("QwQ-32B (base)", 56, "56%", LIGHT, GREY),
            ("Kevin-32B", 82, "82%", GREEN, GREEN_S),
        ],
        100,
        width=360,
        gap=48,
    )
    f.t(16, 200, "mean speed-up over PyTorch eager", size=15, bold=True)
    x0, width = 16, 360
    hbars(
        f,
        x0,
        226,
        [
            ("QwQ-32B (base)", 0.53, "0.53x", LIGHT, GREY),
            ("o4-mini", 0.78, "0.78x", BLUE, BLUE_S),
            ("Kevin-32B", 1.10, "1.10x", GREEN, GREEN_S),
        ],
        1.2,
        width=width,
        gap=48,
    )
    xs = x0 + width / 1.2
    f.ln(xs, 214, xs, 366, stroke=RED_S, dash="5 4", sw=1.5)
    f.t(xs - 4, 372, "1.0x", size=15, anchor="end", fill=RED_S)
    return f


@figure
def f72_reward_pipeline():
    f = Fig(
        "72-reward-pipeline",
        440,
        "A reward for one turn: form checks first, then measurement, then the discount",
        "A flow from a model's response to its reward. First the form checks: a response without a CUDA kernel, "
        "or one that calls the PyTorch operations it was meant to replace, gets no reward. Then compile and test: "
        "a failure scores 0. A correct kernel scores from correctness and speed-up. Each turn's reward is its own "
        "score plus 0.4 times the next turn's reward.",
    )
    f.heading("From a response to a turn's reward")
    steps = [
        ("contains a CUDA kernel?", YELLOW, YELLOW_S),
        ("no forbidden PyTorch calls?", YELLOW, YELLOW_S),
        ("compiles and matches?", BLUE, BLUE_S),
        ("score s: correct + speed-up", GREEN, GREEN_S),
    ]
    for i, (label, fill, stroke) in enumerate(steps):
        y = 46 + i * 74
        f.box(16, y, 290, 48, label, fill, stroke)
        if i < 3:
            f.ln(161, y + 50, 161, y + 72, arrow=True)
            f.t(170, y + 66, "yes", size=15, fill=GREY)
            f.ln(308, y + 24, 352, y + 24, arrow=True)
            f.box(354, y + 6, 110, 36, "reward 0", RED, RED_S)
    f.ln(161, 318, 161, 346, arrow=True)
    f.box(16, 348, 448, 48, "R_t = s_t + 0.4 R_(t+1)", PURPLE, PURPLE_S, bold_first=True)
    f.t(16, 424, "Form checks before any measurement.", size=15)
    return f


@figure
def f72_division():
    f = Fig(
        "72-division",
        460,
        "Where generated kernels compete today, and what is still the kernel engineer's job",
        "Two lists. Where AI kernels succeed: fusion of element-wise and reduction chains, memory-bound operators "
        "at fixed shapes, shape specialisation, and porting and variants with a reference to check against, all "
        "short, well-specified tasks with an automatic check. Still human: new hardware, long asynchronous "
        "pipelines, numerics at low precision, whole-system trade-offs, and writing the verifier.",
    )
    f.heading("A division of labour")
    f.r(16, 42, 448, 178, GREEN, GREEN_S, rx=6)
    f.t(28, 66, "models and search, with a verifier", size=15, bold=True)
    for i, s in enumerate(
        [
            "fusion of element-wise and reduction chains",
            "memory-bound operators at fixed shapes",
            "shape specialisation",
            "porting and variants, with a reference",
            "(short, specified, checkable, documented)",
        ]
    ):
        f.t(28, 92 + i * 25, s, size=15, fill=GREY if i == 4 else INK)
    f.r(16, 234, 448, 206, BLUE, BLUE_S, rx=6)
    f.t(28, 258, "still human", size=15, bold=True)
    for i, s in enumerate(
        [
            "new hardware (TMA, wgmma, tensor memory)",
            "long asynchronous pipelines",
            "numerics at low precision",
            "whole-system trade-offs",
            "writing the verifier",
        ]
    ):
        f.t(28, 286 + i * 28, s, size=15)
    return f


# ---------------------------------------------------------------- more where the text calls for it


def timeline_row(f, x0, y, label, segs, h=26, label_size=15):
    """segs: (start, length, text, fill, stroke) in drawing units from x0."""
    f.t(16, y + h / 2 + 5, label, size=label_size)
    for start, length, text, fill, stroke in segs:
        f.r(x0 + start, y, length, h, fill, stroke, sw=1)
        if text:
            f.t(x0 + start + length / 2, y + h / 2 + 5, text, size=15, anchor="middle")


@figure
def f57_sfu_budget():
    f = Fig(
        "57-sfu-budget",
        250,
        "The SiLU kernel's special-function work against its memory time",
        "Bars for the 8192 by 14336 benchmark: the bytes take about 168 microseconds at 4.2 TB/s; the exponential "
        "and the reciprocal, 2 times 1.17 times 10 to the 8 operations on the special function units at 16 results "
        "per clock per SM over 132 SMs at 1.98 GHz, take about 56. The fast path fits under the memory time, with "
        "room for no more than about three times the arithmetic.",
    )
    f.heading("SiLU at 8192 x 14336: what limits it?")
    hbars(
        f,
        16,
        62,
        [
            ("bytes: at least 705 MB at 4.2 TB/s", 168, "168 µs", BLUE, BLUE_S),
            ("exp + reciprocal on the special function units", 56, "56 µs", ORANGE, ORANGE_S),
        ],
        168,
        width=360,
    )
    f.t(16, 186, "SFUs: 16 results per clock per SM,", size=15)
    f.t(16, 210, "132 SMs at 1.98 GHz; 2.34 x 10^8 operations.", size=15)
    return f


@figure
def f58_weight_formats():
    f = Fig(
        "58-weight-formats",
        270,
        "The GEMV's time bound at N = K = 8192 by weight format",
        "Bars of the least time to read an 8192 by 8192 weight matrix at about 4.2 TB/s: 32 microseconds in BF16, "
        "16 in FP8 and near 8 with 4-bit weights and one 16-bit scale per group of 128, about 4.1 bits per weight. "
        "The judge's target for the best BF16 rung, 80 percent of the copy bandwidth, is about 40 microseconds.",
    )
    f.heading("GEMV at N = K = 8192: bound by weight bytes")
    hbars(
        f,
        16,
        62,
        [
            ("BF16 target: 80% of copy bandwidth", 40, "about 40 µs", LIGHT, GREY),
            ("BF16 bound: 134 MB", 32, "32 µs", BLUE, BLUE_S),
            ("FP8 bound", 16, "16 µs", GREEN, GREEN_S),
            ("4-bit, one scale per 128 (4.1 bits)", 8, "near 8 µs", PURPLE, PURPLE_S),
        ],
        40,
        width=300,
    )
    return f


@figure
def f60_schedules():
    f = Fig(
        "60-schedules",
        400,
        "Cooperative and ping-pong schedules of two consumer warpgroups",
        "Two timelines, as an illustration. Cooperative: both consumer warpgroups run the main loop of the same "
        "tile, each on half its rows, then both run the epilogue, during which no wgmma runs on the SM. Ping-pong: "
        "each warpgroup owns a whole, smaller tile and they take turns: while one runs its main loop on the tensor "
        "cores, the other runs the epilogue of its previous tile, so the epilogues hide behind the main loops.",
    )
    f.heading("Two consumers, two schedules (illustration)")
    x0 = 70
    main, epi = 130, 40
    f.t(16, 62, "cooperative: one tile, half the rows each", size=15, bold=True)
    for k, lab in enumerate(("WG 1", "WG 2")):
        segs = [
            (0, main, "tile 0", GREEN, GREEN_S),
            (main, epi, "epi", ORANGE, ORANGE_S),
            (main + epi, main, "tile 1", GREEN, GREEN_S),
            (2 * main + epi, epi, "epi", ORANGE, ORANGE_S),
        ]
        timeline_row(f, x0, 74 + k * 32, lab, segs)
    timeline_row(
        f,
        x0,
        142,
        "TC",
        [
            (0, main, "busy", BLUE, BLUE_S),
            (main, epi, "idle", "#ffffff", RED_S),
            (main + epi, main, "busy", BLUE, BLUE_S),
            (2 * main + epi, epi, "idle", "#ffffff", RED_S),
        ],
    )
    f.ln(16, 190, W - 16, 190, stroke=RULE)
    f.t(16, 220, "ping-pong: a tile each, taking turns", size=15, bold=True)
    m2 = 90
    timeline_row(
        f,
        x0,
        232,
        "WG 1",
        [
            (0, m2, "tile 0", GREEN, GREEN_S),
            (m2, epi, "epi", ORANGE, ORANGE_S),
            (2 * m2, m2, "tile 2", GREEN, GREEN_S),
            (3 * m2, epi, "epi", ORANGE, ORANGE_S),
        ],
    )
    timeline_row(
        f,
        x0,
        264,
        "WG 2",
        [
            (m2, m2, "tile 1", GREEN, GREEN_S),
            (2 * m2, epi, "epi", ORANGE, ORANGE_S),
            (3 * m2, m2, "tile 3", GREEN, GREEN_S),
        ],
    )
    timeline_row(f, x0, 300, "TC", [(0, 4 * m2, "busy: the loops alternate", BLUE, BLUE_S)])
    f.t(16, 356, "TC: tensor cores. Ping-pong hides epilogues;", size=15)
    f.t(16, 380, "cooperative has larger tiles.", size=15)
    return f


@figure
def f61_persistent():
    f = Fig(
        "61-persistent",
        380,
        "One block per tile against a persistent block that loops over tiles",
        "Two timelines of one SM, as an illustration. One block per tile: each block sets up its barriers, fills "
        "its pipeline, runs its main loop, drains it and runs its epilogue with the tensor cores idle, and the next "
        "block starts only after it leaves. Persistent: one block stays; its producer starts loading the next "
        "tile's first stages while the consumers are still in the epilogue of the last one, so when the consumers "
        "return their data is waiting.",
    )
    f.heading("One SM's time (illustration)")
    x0 = 110
    f.t(16, 62, "one block per tile", size=15, bold=True)
    segs = []
    x = 0
    for t in range(2):
        segs += [
            (x, 22, "", LIGHT, GREY),
            (x + 22, 30, "fill", YELLOW, YELLOW_S),
            (x + 52, 80, f"tile {t}", GREEN, GREEN_S),
            (x + 132, 40, "epi", ORANGE, ORANGE_S),
        ]
        x += 180
    timeline_row(f, x0, 74, "block", segs)
    f.t(16, 128, "grey: set-up; fill: pipeline from empty", size=15, fill=GREY)
    f.ln(16, 146, W - 16, 146, stroke=RULE)
    f.t(16, 176, "persistent: the tile loop inside the block", size=15, bold=True)
    timeline_row(
        f,
        x0,
        188,
        "producer",
        [
            (0, 22, "", LIGHT, GREY),
            (22, 100, "loads tile 0", BLUE, BLUE_S),
            (122, 110, "loads tile 1", BLUE, BLUE_S),
            (232, 110, "loads tile 2", BLUE, BLUE_S),
        ],
    )
    timeline_row(
        f,
        x0,
        222,
        "consumers",
        [
            (52, 80, "tile 0", GREEN, GREEN_S),
            (132, 40, "epi", ORANGE, ORANGE_S),
            (172, 80, "tile 1", GREEN, GREEN_S),
            (252, 40, "epi", ORANGE, ORANGE_S),
            (292, 60, "tile 2", GREEN, GREEN_S),
        ],
    )
    f.t(16, 290, "The producer loads the next tile during", size=15)
    f.t(16, 314, "the epilogue: no refill from empty, no gap.", size=15)
    f.t(16, 350, "grid = 132 blocks (66 clusters of 2)", size=15, bold=True)
    return f


@figure
def f62_barriers():
    f = Fig(
        "62-barriers",
        470,
        "The roles and barriers of a Blackwell GEMM",
        "Top to bottom: the TMA warp fills a ring of shared-memory stages; a full barrier tells the MMA warp that a "
        "stage's bytes have landed; the MMA thread issues tcgen05.mma into one of two tensor-memory accumulators and "
        "its tcgen05.commit on the stage's empty barrier tells the producer the stage was read; after a tile's last "
        "K step a commit on accumulator-full wakes the epilogue warpgroup, which reads the accumulator with tcgen05.ld "
        "and arrives on accumulator-empty so that the buffer can take a later tile.",
    )
    f.heading("Three roles, four kinds of barrier")
    f.box(16, 44, 200, 44, "TMA warp (1 thread)", BLUE, BLUE_S)
    f.box(16, 128, 200, 44, "smem stages (ring)", LIGHT, GREY)
    f.box(16, 212, 200, 44, "MMA warp (1 thread)", YELLOW, YELLOW_S)
    f.box(16, 296, 96, 44, "TMEM 0", GREEN, GREEN_S)
    f.box(120, 296, 96, 44, "TMEM 1", GREEN, GREEN_S)
    f.box(16, 380, 200, 44, "epilogue (4 warps)", ORANGE, ORANGE_S)
    f.ln(116, 90, 116, 126, arrow=True)
    f.ln(116, 174, 116, 210, arrow=True)
    f.ln(116, 258, 116, 294, arrow=True)
    f.ln(116, 342, 116, 378, arrow=True)
    notes = [
        (112, "full[s]: bytes landed", "(TMA, expect_tx)"),
        (196, "empty[s]: stage read", "(tcgen05.commit)"),
        (280, "acc_full: tile final", "(commit after last K)"),
        (364, "acc_empty: TMEM free", "(epilogue arrives)"),
    ]
    for y, a, b in notes:
        f.t(256, y, a, size=15, bold=True)
        f.t(256, y + 22, b, size=15)
    f.p("M 216 228 C 240 210, 240 90, 218 70", arrow=True, stroke=GREY, dash="4 3")
    f.p("M 216 398 C 240 385, 240 330, 218 320", arrow=True, stroke=GREY, dash="4 3")
    f.t(16, 452, "Dashed: releases back up the chain.", size=15, fill=GREY)
    return f


@figure
def f64_seesaw():
    f = Fig(
        "64-seesaw",
        440,
        "FlashMLA's seesaw scheduling of two consumer warpgroups",
        "The 64 by 512 output is split by columns into two halves of 64 by 256, one per consumer warpgroup, and "
        "each step takes two key blocks. Warpgroup 0 computes the scores and softmax of the first block while "
        "warpgroup 1 computes the scores of the second. Then each multiplies its own probabilities, and the other "
        "warpgroup's, into its own half of the output, with the running maximum shared and each half rescaled, so "
        "the result equals ordinary online softmax with one accumulator instead of two.",
    )
    f.heading("Seesaw: one output, split by columns")
    f.box(16, 44, 220, 40, "O left 64 x 256: WG 0", GREEN, GREEN_S)
    f.box(244, 44, 220, 40, "O right 64 x 256: WG 1", BLUE, BLUE_S)
    f.t(16, 116, "each step: two key blocks, K0 and K1", size=15, bold=True)
    f.box(16, 130, 220, 56, ["WG 0: S0 = Q K0ᵀ", "softmax → P0"], GREEN, GREEN_S)
    f.box(244, 130, 220, 56, ["WG 1: S1 = Q K1ᵀ", "softmax → P1"], BLUE, BLUE_S)
    f.t(240, 212, "P0 and P1 reach both warpgroups;", size=15, anchor="middle")
    f.t(240, 234, "running maximum shared, halves rescaled", size=15, anchor="middle")
    f.box(16, 250, 220, 56, ["O left +=", "P0 V0 + P1 V1 (left)"], GREEN, GREEN_S)
    f.box(244, 250, 220, 56, ["O right +=", "P0 V0 + P1 V1 (right)"], BLUE, BLUE_S)
    f.t(16, 342, "CUDA-core work (exp, max) of one warpgroup", size=15)
    f.t(16, 366, "overlaps tensor-core work of the other,", size=15)
    f.t(16, 390, "with one 64 x 512 accumulator, not two:", size=15)
    f.t(16, 414, "32,768 FP32 registers, half the SM's.", size=15, bold=True)
    return f


@figure
def f69_stream_timing():
    f = Fig(
        "69-stream-timing",
        330,
        "How work on another stream escapes a CUDA-event timer",
        "Timeline, as an illustration. The harness records a start event, calls the candidate, and records an end "
        "event, all on the default stream. A candidate that launches its work on a side stream returns at once: the "
        "end event completes while the kernel still runs, so the measured time is far shorter than the work. A "
        "device-wide synchronisation and a wall-clock time beside the event time expose the gap.",
    )
    f.heading("Events on one stream, work on another")
    x0 = 120
    timeline_row(
        f, x0, 60, "default", [(0, 14, "", RED_S, RED_S), (14, 50, "call", LIGHT, GREY), (64, 14, "", RED_S, RED_S)]
    )
    timeline_row(f, x0, 100, "side stream", [(20, 300, "the candidate's real work", ORANGE, ORANGE_S)])
    f.t(x0, 150, "start", size=15, anchor="middle", fill=RED_S)
    f.t(x0 + 78, 150, "end", size=15, anchor="middle", fill=RED_S)
    f.p(f"M {x0 + 7} 160 L {x0 + 7} 172 L {x0 + 71} 172 L {x0 + 71} 160", stroke=RED_S)
    f.t(x0 + 39, 192, "event time", size=15, anchor="middle", fill=RED_S, bold=True)
    f.p(f"M {x0 + 7} 208 L {x0 + 7} 220 L {x0 + 320} 220 L {x0 + 320} 208", stroke=GREEN_S)
    f.t(x0 + 160, 240, "wall clock after a device sync", size=15, anchor="middle", fill=GREEN_S, bold=True)
    f.t(16, 284, "Synchronise the whole device, not one stream,", size=15)
    f.t(16, 308, "and record wall-clock time beside the events.", size=15)
    return f


@figure
def f72_context():
    f = Fig(
        "72-context",
        330,
        "What each turn of a Kevin-style trajectory sees",
        "Three turns' contexts as stacked bars. Turn 1 sees the task. Turn 2 sees the task, turn 1's code, its "
        "feedback and a short summary, but not turn 1's full chain of thought, which is dropped. Turn 3 sees the "
        "same for turns 1 and 2. The history of attempts stays; the long reasoning behind them does not, so several "
        "turns fit in the context.",
    )
    f.heading("Context per turn: thoughts dropped")
    x0 = 80

    def seg(x, w, text, fill, stroke):
        return (x, w, text, fill, stroke)

    timeline_row(f, x0, 56, "turn 1", [seg(0, 56, "task", LIGHT, GREY)], h=30)
    T, C, F, S = 56, 70, 56, 32
    timeline_row(
        f,
        x0,
        100,
        "turn 2",
        [
            seg(0, T, "task", LIGHT, GREY),
            seg(T, C, "code 1", BLUE, BLUE_S),
            seg(T + C, F, "fb 1", GREEN, GREEN_S),
            seg(T + C + F, S, "s1", YELLOW, YELLOW_S),
        ],
        h=30,
    )
    o = T + C + F + S
    timeline_row(
        f,
        x0,
        144,
        "turn 3",
        [
            seg(0, T, "task", LIGHT, GREY),
            seg(T, C, "code 1", BLUE, BLUE_S),
            seg(T + C, F, "fb 1", GREEN, GREEN_S),
            seg(T + C + F, S, "s1", YELLOW, YELLOW_S),
            seg(o, C, "code 2", BLUE, BLUE_S),
            seg(o + C, F, "fb 2", GREEN, GREEN_S),
            seg(o + C + F, S, "s2", YELLOW, YELLOW_S),
        ],
        h=30,
    )
    f.r(16, 204, 18, 14, BLUE, BLUE_S)
    f.t(42, 216, "code of the earlier attempts", size=15)
    f.r(16, 228, 18, 14, GREEN, GREEN_S)
    f.t(42, 240, "fb: feedback (errors, mismatch, speed-up)", size=15)
    f.r(16, 252, 18, 14, YELLOW, YELLOW_S)
    f.t(42, 264, "s: a short summary of the reasoning", size=15)
    f.t(16, 306, "Earlier turns' chains of thought are dropped.", size=15, bold=True)
    return f


@figure
def f63_stochastic():
    f = Fig(
        "63-stochastic",
        400,
        "Round-to-nearest against stochastic rounding on the E2M1 grid",
        "Two values on the grid of E2M1 magnitudes, in units of the block scale. 2.4 lies between the codes 2 and "
        "3: round-to-nearest always gives 2, while stochastic rounding gives 3 with probability 0.4 and 2 with "
        "probability 0.6, whose mean is 2.4. 0.2 lies between 0 and 0.5: round-to-nearest always gives 0, so many "
        "small gradients vanish; stochastic rounding gives 0.5 with probability 0.4, mean 0.2.",
    )
    f.heading("Rounding 2.4 and 0.2 to E2M1")
    x0, x1 = 30, 450

    def X(v):
        return x0 + (x1 - x0) * v / 6

    y = 90
    f.ln(x0, y, x1, y)
    for v in (0, 0.5, 1, 1.5, 2, 3, 4, 6):
        f.ln(X(v), y - 8, X(v), y + 8, sw=2)
    for v in (0, 1, 2, 3, 4, 6):
        f.t(X(v), y + 28, f"{v:g}", size=15, anchor="middle")
    f.t(X(0.5), y - 16, "0.5", size=15, anchor="middle", fill=GREY)
    for v, lo, hi, p, yy in ((2.4, 2, 3, 0.4, 160), (0.2, 0, 0.5, 0.4, 290)):
        f.t(16, yy, f"x = {v:g} (between {lo:g} and {hi:g})", size=15, bold=True)
        f.t(16, yy + 26, f"nearest: always {lo:g}; bias {lo - v:+g}", size=15, fill=RED_S)
        f.t(16, yy + 50, f"stochastic: {hi:g} with p = {p:g}, {lo:g} with p = {1 - p:g}", size=15, fill=GREEN_S)
        f.t(16, yy + 74, f"mean = {hi:g} x {p:g} + {lo:g} x {1 - p:g} = {v:g}", size=15)
        f.c(X(v), y, 5, ORANGE, ORANGE_S)
    return f


@figure
def f63_quantiser():
    f = Fig(
        "63-quantiser",
        470,
        "The steps of an on-the-fly NVFP4 quantiser for one block of 16 values",
        "For one block of 16 BF16 values, 32 bytes in: take the largest magnitude; compute the block scale and "
        "round it to E4M3 first; divide each value by the tensor scale times the rounded block scale; round each to "
        "E2M1, nearest-even and saturating at 6; pack two codes per byte; write 8 bytes of codes and 1 byte of "
        "scale in the layout the GEMM expects. That is 2 bytes read and 0.5625 written per element: about 40 "
        "microseconds for an 8192 by 8192 matrix at 4.1 to 4.3 TB/s.",
    )
    f.heading("NVFP4 on the fly: one block of 16")
    steps = [
        ("16 BF16 values in registers (32 bytes)", LIGHT, GREY),
        ("a = max |x|", BLUE, BLUE_S),
        ("block scale = a / 6 / s_tensor, to E4M3 first", BLUE, BLUE_S),
        ("q = x / (s_tensor x rounded scale)", BLUE, BLUE_S),
        ("to_e2m1: nearest-even, saturate at 6", BLUE, BLUE_S),
        ("pack 2 codes per byte", BLUE, BLUE_S),
        ("write 8 B of codes + 1 B of scale", GREEN, GREEN_S),
    ]
    for i, (label, fill, stroke) in enumerate(steps):
        y = 44 + i * 50
        f.box(16, y, 448, 36, label, fill, stroke)
        if i < len(steps) - 1:
            f.ln(240, y + 37, 240, y + 49, arrow=True)
    f.t(16, 418, "2 B read + 0.5625 B written per element:", size=15, bold=True)
    f.t(16, 442, "8192 x 8192 (128 MiB) ≈ 40 µs at ~4.2 TB/s", size=15)
    return f


@figure
def f65_kv_rollback():
    f = Fig(
        "65-kv-rollback",
        400,
        "KV cache after verification: rollback for a linear draft, compaction for a tree",
        "Top: a linear draft of four tokens writes keys and values into the next four slots of the paged cache; "
        "x1 and x2 are accepted and x3 and x4 rejected, so rollback only sets the sequence length back and the "
        "rejected slots are overwritten next step. Bottom: a tree of six nodes is written in node order; the "
        "accepted path, nodes 2 and 5, sits in scattered slots and a small gather kernel compacts it into "
        "consecutive slots.",
    )
    f.heading("After verification: keep the accepted K/V")
    f.t(16, 60, "linear draft: set the length back", size=15, bold=True)
    slots = [
        ("prefix", LIGHT, GREY, 100),
        ("x1", GREEN, GREEN_S, 60),
        ("x2", GREEN, GREEN_S, 60),
        ("x3", RED, RED_S, 60),
        ("x4", RED, RED_S, 60),
    ]
    x = 16
    for label, fill, stroke, w in slots:
        f.box(x, 72, w, 34, label, fill, stroke)
        x += w + 4
    f.ln(16 + 100 + 4 + 128 + 2, 66, 16 + 100 + 4 + 128 + 2, 116, stroke=INK, sw=3)
    f.t(16, 138, "new length after x2: x3, x4 overwritten next step", size=15)
    f.ln(16, 158, W - 16, 158, stroke=RULE)
    f.t(16, 188, "tree draft: gather the accepted path", size=15, bold=True)
    x = 16
    f.box(x, 200, 80, 34, "prefix", LIGHT, GREY)
    for n in range(1, 7):
        acc = n in (2, 5)
        f.box(x + 84 + (n - 1) * 62, 200, 58, 34, f"n{n}", GREEN if acc else LIGHT, GREEN_S if acc else GREY)
    f.p(f"M {16 + 84 + 62 + 29} 236 Q 200 280 130 300", arrow=True, stroke=GREEN_S)
    f.p(f"M {16 + 84 + 4 * 62 + 29} 236 Q 300 290 192 300", arrow=True, stroke=GREEN_S)
    f.box(16, 302, 80, 34, "prefix", LIGHT, GREY)
    f.box(100, 302, 58, 34, "n2", GREEN, GREEN_S)
    f.box(162, 302, 58, 34, "n5", GREEN, GREEN_S)
    f.t(16, 372, "Accepted path 0 → 2 → 5, compacted by a gather.", size=15)
    return f


@figure
def f66_smem_budget():
    f = Fig(
        "66-smem-budget",
        220,
        "Shared memory of the CUTLASS example: four 48 KB stages within 227 KB",
        "A bar of the 227 KB of shared memory a block may opt in to: four pipeline stages of 48 KB, 16 KB of A and "
        "32 KB of B each, take 192 KB; the epilogue's buffers and the barriers fit in the remaining 35 KB. The "
        "builder's automatic stage count is whatever fits after the epilogue.",
    )
    f.heading("227 KB of shared memory per block")
    x0, width = 16, 448

    def Wd(v):
        return width * v / 227

    x = x0
    for k in range(4):
        f.box(x, 50, Wd(48), 44, f"stage {k}", BLUE if k % 2 == 0 else "#90cdf4", BLUE_S)
        x += Wd(48)
    f.box(x, 50, Wd(35), 44, "epi", ORANGE, ORANGE_S)
    f.t(x0, 124, "4 stages x 48 KB (16 KB A + 32 KB B) = 192 KB", size=15)
    f.t(x0, 148, "epilogue buffers and barriers: within the last 35 KB", size=15)
    f.t(x0, 190, "Stage count = what fits after the epilogue.", size=15, bold=True)
    return f


@figure
def f67_where_thread():
    f = Fig(
        "67-where-thread",
        420,
        "Where the thread disappears: CUDA, CuTe and Triton",
        "Three levels. In CUDA C++ the author writes one thread's work and computes every index. In CuTe the unit is "
        "still the thread, but threads and data are described by layouts and partitioned by algebra, with copy and "
        "MMA atoms for the instructions. In Triton and the tile languages the author writes what one program "
        "instance does to blocks of data, and the compiler maps it to threads, shared memory, vector loads and "
        "tensor-core instructions.",
    )
    f.heading("What the author writes, what is decided")
    rows = [
        ("CUDA C++", ["you: one thread, every index,", "every copy, barrier and fragment"], ORANGE, ORANGE_S),
        ("CuTe", ["you: threads, described by layouts;", "algebra partitions tiles; atoms"], PURPLE, PURPLE_S),
        ("Triton", ["you: one program on blocks;", "compiler: threads, smem, MMA"], GREEN, GREEN_S),
    ]
    for i, (name, lines, fill, stroke) in enumerate(rows):
        y = 48 + i * 110
        f.box(16, y, 110, 84, name, fill, stroke, bold_first=True)
        f.box(134, y, 330, 84, lines, "#ffffff", stroke)
    f.t(16, 394, "Down the list, the compiler decides more.", size=15, bold=True)
    return f


@figure
def f71_conv_reuse():
    f = Fig(
        "71-conv-reuse",
        300,
        "Input reuse between neighbouring outputs of an 11 by 11 convolution with stride 4",
        "Along one dimension of the input, the 11-wide windows of three neighbouring outputs start 4 apart: columns "
        "0 to 10, 4 to 14 and 8 to 18. Neighbours share 7 of their 11 columns, so two outputs side by side share "
        "7 times 11, 77, of their 121 inputs, and staging an input patch in shared memory and computing several "
        "outputs per thread reuses most "
        "loads.",
    )
    f.heading("11 x 11 filter, stride 4: shared inputs")
    c = 20
    x0 = 30
    for j in range(21):
        f.r(x0 + j * c, 50, c, 22, LIGHT, GREY, sw=0.6)
        if j % 4 == 0:
            f.t(x0 + j * c + c / 2, 90, str(j), size=15, anchor="middle", fill=GREY)
    cols = [(BLUE, BLUE_S), (GREEN, GREEN_S), (ORANGE, ORANGE_S)]
    for k in range(3):
        fill, stroke = cols[k]
        y = 104 + k * 34
        f.r(x0 + 4 * k * c, y, 11 * c, 26, fill, stroke)
        f.t(x0 + 4 * k * c + 6, y + 19, f"output {k}: inputs {4 * k}-{4 * k + 10}", size=15)
    f.t(16, 240, "Neighbours share 7 of 11 columns: side by side,", size=15)
    f.t(16, 264, "77 of 121 inputs. Stage the patch once.", size=15, bold=True)
    return f


@figure
def f68_repro():
    f = Fig(
        "68-repro",
        440,
        "From a failure in a serving engine to a small reproduction",
        "A funnel of four steps. A failure inside a serving engine with a model and a load generator; capture the "
        "failing call's shapes, strides, dtypes and data, or only its metadata after a sticky error; write a "
        "standalone test with the captured inputs and a higher-precision reference; shrink batch, sequence and heads "
        "until removing anything hides the bug. The shrunk case is very often a boundary: a dimension one past a "
        "tile, a sequence of length 1, an empty expert.",
    )
    f.heading("Shrink the failure to a script")
    steps = [
        (448, "engine + model + load: the bug appears", RED, RED_S),
        (400, "capture shapes, strides, dtypes, data", ORANGE, ORANGE_S),
        (352, "standalone test + higher-precision reference", BLUE, BLUE_S),
        (304, "shrink: batch, sequence, heads", GREEN, GREEN_S),
    ]
    for i, (w, label, fill, stroke) in enumerate(steps):
        y = 48 + i * 70
        f.box(240 - w / 2, y, w, 46, label, fill, stroke)
        if i < 3:
            f.ln(240, y + 48, 240, y + 68, arrow=True)
    f.t(16, 348, "What is left is usually a boundary:", size=15, bold=True)
    f.t(16, 374, "a dimension one past a tile, a sequence of", size=15)
    f.t(16, 398, "length 1, an empty expert.", size=15)
    f.t(16, 428, "After a sticky error: log metadata, replay it.", size=15, fill=GREY)
    return f


@figure
def f70_ideas():
    f = Fig(
        "70-ideas",
        430,
        "Branching over code against branching over ideas",
        "Left: code-level mutation tends to stay local, renaming, reordering or tweaking a constant of one kernel. "
        "Right: asking first for distinct optimisation ideas in prose, such as keeping the row in registers and "
        "fusing the normalisation, a warp per row with shuffles instead of shared memory, or converting to FP16 "
        "for tensor cores, then implementing each, gives structurally different candidates per round, and the "
        "winning ideas are carried into the next round's prompt.",
    )
    f.heading("Branch over code, or over ideas?")
    f.t(16, 62, "code mutations: local", size=15, bold=True)
    f.box(16, 74, 130, 36, "kernel", LIGHT, GREY)
    for i, lab in enumerate(("rename", "reorder", "tweak a constant")):
        f.ln(146, 92, 176, 84 + i * 40 - 10 + 12, stroke=GREY, arrow=True)
        f.box(178, 70 + i * 40, 180, 32, lab, LIGHT, GREY)
    f.ln(16, 204, W - 16, 204, stroke=RULE)
    f.t(16, 234, "ideas first, in prose: structural", size=15, bold=True)
    ideas = ["row in registers, fused norm", "warp per row, shuffles", "FP16 on tensor cores"]
    for i, lab in enumerate(ideas):
        y = 248 + i * 52
        f.box(16, y, 270, 40, lab, PURPLE, PURPLE_S)
        for k in range(3):
            f.ln(288, y + 20, 318 + k * 40, y + 20, stroke=GREY) if k == 0 else None
            f.c(330 + k * 40, y + 20, 11, BLUE, BLUE_S)
    f.t(16, 418, "Each idea: several implementations (circles).", size=15)
    return f


def main(prefixes):
    problems = []
    for name, fn in FIGURES.items():
        fid = name[1:]
        if prefixes and not any(fid.startswith(p) for p in prefixes):
            continue
        f = fn()
        assert f.name == fid, (f.name, fid)
        problems += f.check()
        (OUT / f"{f.name}.svg").write_text(f.svg(), encoding="utf-8")
        print("wrote", f.name)
    for p in problems:
        print("CHECK", p)


if __name__ == "__main__":
    main(sys.argv[1:])

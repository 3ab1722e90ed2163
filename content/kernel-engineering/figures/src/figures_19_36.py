"""Figures of capsules 19-36 (issue 44). Run: python figures_19_36.py [name ...]; writes ../NN-name.svg.

Every number drawn here is stated in the capsule the figure belongs to (or derived from those numbers by the
arithmetic the capsule shows); nothing is measured or invented here.
"""

from __future__ import annotations

import sys

from svglib_19_36 import (
    BLUE,
    GREEN,
    GREY,
    GRID,
    INK,
    LBLUE,
    LGREEN,
    LGREY,
    LORANGE,
    LPURPLE,
    LRED,
    MUTED,
    ORANGE,
    PURPLE,
    RED,
    Fig,
    W,
    hbars,
    text_width,
    wrap,
)

FIGURES = {}
_MEASURED = None


def M(key: str) -> float:
    """A measured figure of the book from measurements.yaml: the value the capsules cite as {{m:KEY}}."""
    global _MEASURED
    if _MEASURED is None:
        import yaml
        from svglib_19_36 import OUT

        _MEASURED = yaml.safe_load((OUT.parent / "measurements.yaml").read_text(encoding="utf-8"))
    return float(_MEASURED[key]["value"])


def MT(key: str) -> str:
    """The measured figure as measurements.yaml writes it (what {{m:KEY:bare}} shows)."""
    M(key)
    return str(_MEASURED[key]["value"])


FLOPS_4096 = 2 * 4096**3


def figure(fn):
    FIGURES[fn.__name__] = fn
    return fn


def cells(f, x, y, n, cw, ch, fills, gap_every=0, gap=4, strokes=MUTED, labels=None, label_fill=None):
    """A row of n cells; fills is a colour or a function of the index. Returns the x after the last cell."""
    cx = x
    for i in range(n):
        if gap_every and i and i % gap_every == 0:
            cx += gap
        fill = fills(i) if callable(fills) else fills
        f.rect(cx, y, cw, ch, fill, strokes, 0.7)
        if labels:
            lab = labels(i) if callable(labels) else labels[i]
            if lab:
                col = label_fill(i) if callable(label_fill) else (label_fill or INK)
                f.text(cx + cw / 2, y + ch / 2 + 5, lab, 14, "middle", col)
        cx += cw
    return cx


# ---------------------------------------------------------------------------------------------------- 19
@figure
def f19_aos_soa():
    f = Fig(
        "19-aos-soa",
        "Reading one field: array of structures against structure of arrays",
        "Three rows of 32 floats of memory, grouped in four 32-byte sectors. Top, an array of 16-byte Particle "
        "structs read for its x field: only every fourth float is used, so the warp's 32 lanes need 16 sectors "
        "and use 25 percent of the bytes. Middle, the x values stored as their own array: 32 consecutive floats, "
        "4 sectors, every byte used. Bottom, the array of structs read whole with one float4 per lane: 512 "
        "contiguous bytes per warp, all of them used.",
        0,
    )
    y = f.heading(
        "Which bytes does one warp instruction need?",
        "Each cell is a float; each group of 8 is a 32-byte sector. Filled cells are the bytes lanes use.",
    )
    cw, x0 = 13, 26
    panels = [
        (
            "AoS, p[i].x: a stride of 4 floats",
            lambda i: BLUE if i % 4 == 0 else "#ffffff",
            lambda i: "xyzw"[i % 4],
            lambda i: "#ffffff" if i % 4 == 0 else MUTED,
            "Lanes 0-7 shown. The warp touches 16 sectors, 25% useful, and the store pays the same again.",
        ),
        (
            "SoA, x[i]: consecutive floats",
            lambda i: BLUE,
            None,
            None,
            "All 32 lanes. The warp touches 4 sectors, 100% useful.",
        ),
        (
            "AoS read whole: one float4 per lane",
            lambda i: GREEN,
            lambda i: "xyzw"[i % 4],
            lambda i: "#ffffff",
            "Lanes 0-7 shown. 512 contiguous bytes per warp, 16 sectors, 100% useful.",
        ),
    ]
    for title, fills, labels, lf, note in panels:
        y += 32
        f.text(16, y, title, 14, bold=True)
        y += 8
        cells(f, x0, y, 32, cw, 24, fills, gap_every=8, labels=labels, label_fill=lf)
        if title.startswith("AoS read"):
            for g in range(8):
                gx = x0 + g * 4 * cw + (g // 2) * 4
                f.rect(gx, y - 3, 4 * cw, 30, "none", INK, 1.2)
        y += 24
        y = f.para(16, y + 20, note, W - 32, fill=MUTED)
    f.h = int(y + 16)
    return f.save()


@figure
def f19_vector_loads():
    f = Fig(
        "19-vector-loads",
        "The same 512 bytes loaded with float and with float4",
        "A strip of 16 sectors, 512 bytes. With float loads a warp needs four load instructions, each covering "
        "4 sectors; with float4 one instruction covers all 16. Both use every byte. The table compares load "
        "instructions per warp (4 against 1), sectors (16 and 16), bytes each lane has in flight per instruction "
        "(4 against 16) and the alignment the start address needs (4 bytes against 16).",
        0,
    )
    y = f.heading("512 bytes, two ways to load them", "Each box is a 32-byte sector; colours are load instructions.")
    sw, x0 = 25, 26
    y += 22
    f.text(16, y, "float: lane t reads x[i + t], four times", 14, bold=True)
    y += 8
    colours = [BLUE, ORANGE, GREEN, PURPLE]
    cells(f, x0, y, 16, sw, 24, lambda i: colours[i // 4], gap_every=4, gap=4, strokes="#ffffff")
    for g in range(4):
        f.text(x0 + g * (4 * sw + 4) + 2 * sw, y + 42, f"load {g + 1}", 14, "middle", colours[g])
    y += 70
    f.text(16, y, "float4: lane t reads 16 bytes, once", 14, bold=True)
    y += 8
    cells(f, x0, y, 16, sw, 24, GREEN, gap_every=4, gap=4, strokes="#ffffff")
    f.text(x0 + 8 * sw + 6, y + 42, "load 1: 512 bytes", 14, "middle", GREEN)
    y += 66
    rows = [
        ("", "float", "float4"),
        ("load instructions per warp", "4", "1"),
        ("sectors touched", "16", "16"),
        ("bytes used", "100%", "100%"),
        ("bytes per lane per load", "4", "16"),
        ("start must be aligned to", "4 B", "16 B"),
    ]
    for i, (a, b, c) in enumerate(rows):
        bold = i == 0
        f.text(16, y, a, 14, bold=bold)
        f.text(330, y, b, 14, "middle", bold=bold)
        f.text(420, y, c, 14, "middle", bold=bold)
        if i == 0:
            f.line(16, y + 7, W - 16, y + 7, MUTED, 0.8)
        y += 24
    f.h = int(y)
    return f.save()


@figure
def f19_naive_transpose():
    f = Fig(
        "19-naive-transpose",
        "The naive transpose reads a row and writes a column",
        "Left, the input matrix with one warp's 32 consecutive elements of a row highlighted: the load touches 4 "
        "sectors. Right, the output matrix, where the same 32 elements land in a column, M floats apart: the "
        "store touches 32 sectors. Below, the sectors per request the capsule predicts: naive load 4, naive "
        "store 32, tiled load 4 and tiled store 4.",
        0,
    )
    y = f.heading("One warp of transpose_naive", "32 consecutive j, one i: out[j * M + i] = in[i * N + j]")
    cs, n = 20, 8
    y += 16
    for ox, name, row in ((40, "in (M x N)", True), (272, "out (N x M)", False)):
        f.text(ox + n * cs / 2, y, name, 14, "middle", bold=True)
        for r in range(n):
            for c in range(n):
                hit = (r == 2) if row else (c == 2)
                f.rect(ox + c * cs, y + 10 + r * cs, cs, cs, (BLUE if row else ORANGE) if hit else "#ffffff", GREY, 0.7)
    f.line(40 + n * cs + 12, y + 10 + 2.5 * cs, 272 - 12, y + 10 + 2.5 * cs, MUTED, 1.4, arrow=True)
    y += 10 + n * cs + 22
    f.text(40 + n * cs / 2, y, "load: a row", 14, "middle", BLUE)
    f.text(272 + n * cs / 2, y, "store: a column", 14, "middle", ORANGE)
    y += 30
    f.text(16, y, "Sectors per warp request, predicted", 14, bold=True)
    y = hbars(
        f,
        y + 2,
        [
            ("naive kernel, load of in", 4, BLUE, "4"),
            ("naive kernel, store of out", 32, ORANGE, "32"),
            ("tiled kernel, load", 4, GREEN, "4"),
            ("tiled kernel, store", 4, GREEN, "4"),
        ],
        32,
        x0=16,
        x1=420,
        ticks=[0, 8, 16, 24, 32],
        bar_h=16,
        gap=12,
    )
    f.h = int(y + 8)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 20
@figure
def f20_grid_sizing():
    f = Fig(
        "20-grid-sizing",
        "Two ways to cover an array: one thread per element, or a grid-stride loop",
        "Top, n equal to 1,000,000 elements covered by 3,907 blocks of 256 threads; the last block, block 3906, "
        "starts at element 999,936, so 64 of its threads have an element and 192 fail the test i < n. Bottom, a "
        "grid-stride loop: a fixed grid of G threads walks the array in passes, thread t taking elements t, t + G, "
        "t + 2G and so on, with the last pass partly empty.",
        0,
    )
    y = f.heading("Covering n = 1,000,000 elements", "blocks = cdiv(n, 256) = 3,907, threads = 1,000,192")
    y += 16
    xs = [16, 92, 168, 244, 340]
    labels = ["block 0", "block 1", "...", "block 3905", "block 3906"]
    widths = [72, 72, 72, 92, 124]
    for x, lab, w in zip(xs, labels, widths, strict=True):
        if lab == "...":
            f.text(x + w / 2, y + 22, lab, 14, "middle", MUTED)
        else:
            f.box(
                x, y, w, 32, [lab], LBLUE if lab != "block 3906" else LORANGE, BLUE if lab != "block 3906" else ORANGE
            )
    y += 62
    f.text(16, y, "The last block, threads 0-255:", 14, bold=True)
    y += 10
    f.rect(16, y, 448 * 64 / 256, 28, BLUE)
    f.rect(16 + 448 * 64 / 256, y, 448 * 192 / 256, 28, LGREY, GREY, 0.8)
    f.text(16 + 56, y + 19, "64 in range", 14, "middle", "#ffffff", bold=True)
    f.text(16 + 112 + 168, y + 19, "192 fail if (i < n): do nothing", 14, "middle", MUTED)
    y += 46
    f.text(16, y, "elements 999,936 ... 999,999", 14, fill=BLUE)
    y += 36
    f.text(16, y, "Grid-stride loop: a fixed grid of G threads", 16, bold=True)
    y += 14
    passes = [("pass 0", 112), ("pass 1", 112), ("pass 2", 112), ("last", 60)]
    x = 16
    for i, (lab, w) in enumerate(passes):
        f.rect(x, y, w, 28, LGREEN if i < 3 else LGREY, GREEN, 0.8)
        f.text(x + w / 2, y + 46, lab, 14, "middle", MUTED)
        f.rect(x + 30, y + 4, 8, 20, GREEN)
        x += w + 4
    y += 66
    y = f.para(
        16,
        y,
        "Thread t takes elements t, t + G, t + 2G, ... (dark marks): any n, any G, and each pass is still coalesced.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f20_partial_warp():
    f = Fig(
        "20-partial-warp",
        "A block of 100 threads occupies four full warps",
        "Four rows of 32 lanes. Warps 0, 1 and 2 are full; warp 3 has 4 active lanes and 28 idle ones. The "
        "block pays for 128 lanes and uses 100: 22 percent of its issue slots do nothing.",
        0,
    )
    y = f.heading("blockDim.x = 100: four warps", "Warps are allocated and scheduled whole, full or not.")
    y += 14
    for w in range(4):
        f.text(16, y + 17, f"warp {w}", 14)
        cells(f, 80, y, 32, 11.5, 24, lambda i, w=w: BLUE if 32 * w + i < 100 else LGREY, strokes="#ffffff")
        y += 30
    y += 12
    f.text(16, y, "100 lanes work, 28 idle: 22% of the issue slots wasted", 14, bold=True)
    f.h = int(y + 18)
    return f.save()


@figure
def f20_cluster():
    f = Fig(
        "20-cluster",
        "Two blocks of a cluster reading each other's shared memory",
        "A GPC holding two SMs. The block of cluster rank 0 runs on one, the block of rank 1 on the other; each "
        "has its own shared variable partial. After a first cluster.sync, rank 0 maps the partner's partial with "
        "map_shared_rank and reads it over the SM-to-SM network, adds its own, and writes the result; a second "
        "cluster.sync keeps block 1, and its shared memory, alive until the read is done.",
        0,
    )
    y = f.heading("pair_sum with __cluster_dims__(2, 1, 1)")
    y += 12
    f.rect(16, y, W - 32, 170, "#ffffff", MUTED, 1.2, 8, dash="6,4")
    f.text(28, y + 22, "one GPC", 14, fill=MUTED, bold=True)
    for i, x in enumerate((36, 256)):
        f.rect(x, y + 34, 188, 120, LGREY, MUTED, 1, 6)
        f.text(x + 94, y + 56, f"SM: block rank {i}", 14, "middle", bold=True)
        f.box(x + 34, y + 90, 120, 44, ["shared", "partial"], LBLUE if i == 0 else LORANGE, BLUE if i == 0 else ORANGE)
    f.path(f"M {36 + 154} {y + 112} C 220 {y + 150}, 250 {y + 150}, {256 + 34} {y + 118}", ORANGE, 2, arrow=True)
    y += 192
    steps = [
        "1. each block writes its partial",
        "2. cluster.sync(): both have written",
        "3. rank 0: other = map_shared_rank(&partial, 1); out = partial + *other",
        "4. cluster.sync(): block 1 stays alive until rank 0 has read",
    ]
    for s in steps:
        y = f.para(16, y, s, W - 32) + 22
    y = f.para(16, y, "Up to 8 blocks per cluster portably, 16 with the non-portable opt-in.", W - 32, fill=MUTED)
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 21
@figure
def f21_reduction_indexing():
    f = Fig(
        "21-reduction-indexing",
        "Which lanes work in two indexings of a block tree reduction",
        "Two grids of 8 warps by 32 lanes for a 256-thread block. Top, the interleaved version at step s = 1, "
        "if tid % 2 == 0: every warp has its even lanes active, so all 8 warps issue the step with 16 lanes "
        "each. Bottom, the sequential version at step s = 128, if tid < 128: warps 0 to 3 are fully active and "
        "warps 4 to 7 have no active lane and skip the step. Both steps do 128 additions.",
        0,
    )
    y = f.heading("128 additions, two ways to hand them out", "256-thread block: 8 warps of 32 lanes; blue = active")
    panels = [
        (
            "Interleaved, s = 1: if (tid % 2 == 0)",
            lambda w, i: i % 2 == 0,
            "8 warps issue the step, each with 16 of 32 lanes",
        ),
        (
            "Sequential, s = 128: if (tid < 128)",
            lambda w, i: w < 4,
            "4 warps issue it with all 32 lanes; warps 4-7 skip it",
        ),
    ]
    for title, active, note in panels:
        y += 26
        f.text(16, y, title, 14, bold=True, mono=False)
        y += 8
        for w in range(8):
            f.text(16, y + 12, f"w{w}", 14, fill=MUTED)
            cells(
                f, 52, y, 32, 12, 13, lambda i, w=w, active=active: BLUE if active(w, i) else LGREY, strokes="#ffffff"
            )
            y += 15
        y += 18
        f.text(16, y, note, 14, fill=MUTED)
    y += 28
    y = f.para(
        16,
        y,
        "The version in between, i = 2 * s * tid, makes the active lanes contiguous but puts "
        "neighbouring lanes 2s words apart: a 2-way bank conflict at s = 1.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f21_predication():
    f = Fig(
        "21-predication",
        "A leaky ReLU compiled to predicated instructions, lane by lane",
        "A table for eight example lanes with inputs 2, -1, 0.5, -3, 4, -0.5, 1.5 and -2. Every lane executes "
        "FMUL to get 0.1 x, FSETP to set predicate P0 = x > 0, and FSEL to pick x where P0 is true and 0.1 x where "
        "it is false. No lane is masked off, there is no jump and nothing to reconverge.",
        0,
    )
    y = f.heading("y = (x > 0) ? x : 0.1f * x", "Three instructions, all 32 lanes, no branch (8 lanes shown)")
    xs = [2, -1, 0.5, -3, 4, -0.5, 1.5, -2]

    def g(v):
        s = f"{v:g}"
        return s.replace("-", "\u2212")

    rows = [
        ("x", [g(v) for v in xs], INK),
        ("FMUL 0.1x", [g(round(0.1 * v, 3)) for v in xs], MUTED),
        ("FSETP P0", ["T" if v > 0 else "F" for v in xs], MUTED),
        ("FSEL y", [g(v if v > 0 else round(0.1 * v, 3)) for v in xs], GREEN),
    ]
    cx0, cw = 120, 43
    y += 12
    for lane in range(8):
        f.text(cx0 + lane * cw + cw / 2, y + 12, f"lane {lane}" if lane == 0 else str(lane), 14, "middle", MUTED)
    y += 22
    for name, vals, _col in rows:
        f.text(16, y + 19, name, 14, bold=True, mono=False)
        for lane, v in enumerate(vals):
            pos = xs[lane] > 0
            fill = "#ffffff"
            if name.startswith("FSEL"):
                fill = LGREEN
            elif name.startswith("FSETP"):
                fill = LBLUE if pos else LORANGE
            f.rect(cx0 + lane * cw, y, cw, 28, fill, GREY, 0.7)
            f.text(cx0 + lane * cw + cw / 2, y + 19, v, 14, "middle", INK)
        y += 32
    y += 18
    y = f.para(
        16,
        y,
        "Every lane runs every instruction; the predicate only chooses which result is kept. "
        "Cheaper than a divergent branch for a few instructions, dearer for a long body.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f21_ballot_compaction():
    f = Fig(
        "21-ballot-compaction",
        "Warp-level stream compaction with a ballot",
        "Sixteen lanes of a warp with a predicate that is true in lanes 0, 2, 3, 6, 8, 9, 10, 13 and 15. "
        "__ballot_sync gathers the predicates into one 32-bit mask that every lane receives. Each true lane "
        "counts the set bits below its own lane number with __popc, which gives it a unique slot, 0 to 8, in a "
        "packed output, with no shared memory and no atomics.",
        0,
    )
    y = f.heading("Packing the lanes where p is true", "First 16 lanes of the warp shown")
    p = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1]
    rank, r = [], 0
    for v in p:
        rank.append(r if v else None)
        r += v
    x0, cw = 80, 24
    y += 10
    rows = [
        ("lane", [str(i) for i in range(16)], None),
        ("p", [str(v) for v in p], lambda i: LBLUE if p[i] else "#ffffff"),
        ("rank", ["" if v is None else str(v) for v in rank], lambda i: LGREEN if p[i] else "#ffffff"),
    ]
    tops = {}
    for name, vals, fill in rows:
        f.text(16, y + 19, name, 14, bold=True)
        tops[name] = y
        for i, v in enumerate(vals):
            if fill:
                f.rect(x0 + i * cw, y, cw, 28, fill(i), GREY, 0.7)
            f.text(x0 + i * cw + cw / 2, y + 19, v, 14, "middle", MUTED if name == "lane" else INK)
        y += 32
    y += 50
    f.text(16, y + 19, "out", 14, bold=True)
    outw = 36
    ox0 = x0 + 8 * cw - 9 * outw / 2
    for k in range(9):
        f.rect(ox0 + k * outw, y, outw, 28, LGREEN, GREEN, 0.8)
        f.text(ox0 + k * outw + outw / 2, y + 19, str(k), 14, "middle")
    for i, v in enumerate(rank):
        if v is not None:
            f.line(x0 + i * cw + cw / 2, tops["rank"] + 30, ox0 + v * outw + outw / 2, y - 2, GREEN, 1, arrow=True)
    y += 58
    f.text(16, y, "ballot = __ballot_sync(0xffffffff, p)", 14, mono=True)
    y += 22
    f.text(16, y, "rank = __popc(ballot & ((1u << lane) - 1))", 14, mono=True)
    f.h = int(y + 16)
    return f.save()


def vflow(f, y, steps, x=16, w=W - 32, gap=22, size=14):
    """Boxes stacked top to bottom with arrows: steps = (lines or text, fill, stroke[, mono]). Returns the y below."""
    for i, step in enumerate(steps):
        lines, fill, stroke = step[:3]
        mono = len(step) > 3 and step[3]
        if isinstance(lines, str):
            lines = wrap(lines, w - 20, size, mono=mono)
        h = 16 + len(lines) * size * 1.25
        f.box(x, y, w, h, lines, fill, stroke, size, mono=mono)
        y += h
        if i < len(steps) - 1:
            f.line(x + w / 2, y + 1, x + w / 2, y + gap - 2, MUTED, 1.4, arrow=True)
            y += gap
    return y


def timeline_row(f, y, label, segs, x0=16, x1=W - 16, tmax=1.0, h=26, label_w=0):
    """A row of segments (start, end, fill, text, text_colour) on a time axis from x0 + label_w to x1."""
    if label:
        f.text(x0, y + h / 2 + 5, label, 14, bold=True)
    a = x0 + label_w
    for seg in segs:
        t0, t1, fill, txt = seg[:4]
        col = seg[4] if len(seg) > 4 else INK
        xa, xb = a + (x1 - a) * t0 / tmax, a + (x1 - a) * t1 / tmax
        f.rect(xa, y, xb - xa, h, fill, "#ffffff", 1)
        if txt and text_width(txt, 14) <= xb - xa - 4:
            f.text((xa + xb) / 2, y + h / 2 + 5, txt, 14, "middle", col)
    return y + h


# ---------------------------------------------------------------------------------------------------- 22
@figure
def f22_launch_path():
    f = Fig(
        "22-launch-path",
        "The path of a kernel launch from the host to the SMs",
        "A vertical flow. On the host, the launch statement goes to the CUDA runtime and driver, which find the "
        "kernel (loading its module, or JIT-compiling its PTX, on first use), validate the configuration and "
        "write a launch command into a command buffer in memory, then ring a doorbell and return to the CPU "
        "before anything has run. On the GPU, the front end reads the command from its hardware queue, puts the "
        "parameters in a constant bank and hands the grid to the block scheduler, which sends each block to an SM "
        "that has free warps, registers and shared memory.",
        0,
    )
    y = f.heading("From a launch statement to running blocks")
    y += 8
    f.text(16, y + 4, "HOST", 14, fill=BLUE, bold=True)
    y += 14
    y = vflow(
        f,
        y,
        [
            (["kernel<<<grid, block, smem, stream>>>(args)"], "#ffffff", BLUE, True),
            (
                "Runtime and driver: find the kernel (load the module, JIT the PTX on first use), validate the "
                "configuration, encode a launch command",
                LBLUE,
                BLUE,
            ),
            ("Command buffer in memory; bump the doorbell. The call returns: nothing has run yet", LBLUE, BLUE),
        ],
    )
    y += 22
    f.line(16, y - 10, W - 16, y - 10, GREY, 1, dash="5,4")
    f.text(16, y + 8, "GPU", 14, fill=GREEN, bold=True)
    y += 18
    y = vflow(
        f,
        y,
        [
            (
                "Front end reads the hardware queue (8 by default), loads the parameters into a constant bank",
                LGREEN,
                GREEN,
            ),
            (
                "Block scheduler: each block goes to an SM with enough free warps, registers and shared memory",
                LGREEN,
                GREEN,
            ),
        ],
    )
    y += 12
    for i in range(6):
        f.box(16 + i * 76, y, 68, 30, ["SM"], LGREY, MUTED)
    f.text(W - 16, y + 50, "the next block starts where one finishes", 14, "end", MUTED)
    f.h = int(y + 64)
    return f.save()


@figure
def f22_decode_budget():
    f = Fig(
        "22-decode-budget",
        "Launch overhead against weight streaming for one decoded token",
        "Bar chart in milliseconds per generated token. For an 8B-parameter model, about 350 launches at about 9 "
        "microseconds of framework and launch cost each come to about 3.2 ms, close to the 3.8 ms it takes to "
        "stream its 16 GB of weights from HBM. For a 1B model the weights take about 0.5 ms, so the launch cost "
        "is most of the step.",
        0,
    )
    y = f.heading("Where a decode step's time can go", "Milliseconds per generated token")
    y = hbars(
        f,
        y + 6,
        [
            ("8B model: 350 launches at about 9 µs each", 3.2, ORANGE, "3.2 ms"),
            ("8B model: streaming 16 GB of weights", 3.8, BLUE, "3.8 ms"),
            ("1B model: streaming its weights", 0.5, BLUE, "about 0.5 ms"),
        ],
        4.2,
        ticks=[0, 1, 2, 3, 4],
        x1=W - 40,
    )
    y = f.para(
        16,
        y + 14,
        "Launch cost does not shrink with the model: graphs, fusion and persistent kernels remove it.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f22_pdl():
    f = Fig(
        "22-pdl",
        "Programmatic dependent launch overlaps a kernel's prologue with the previous kernel's tail",
        "Two timelines of kernel k followed by kernel k + 1 in one stream. Without PDL, kernel k + 1 starts only "
        "after every block of kernel k has exited, and then runs its prologue before its main work. With PDL, "
        "kernel k + 1 is launched while kernel k is finishing; its prologue overlaps kernel k's tail, and it waits "
        "in cudaGridDependencySynchronize only before it reads kernel k's output.",
        0,
    )
    y = f.heading("Kernel k, then kernel k + 1, in one stream", "Schematic timelines, time to the right")
    y += 26
    f.text(16, y, "Without PDL", 14, bold=True)
    y += 8
    timeline_row(
        f,
        y,
        "",
        [
            (0, 0.42, BLUE, "k: main", "#ffffff"),
            (0.42, 0.56, LBLUE, "tail"),
            (0.56, 0.72, LORANGE, "prologue"),
            (0.72, 1.0, ORANGE, "k+1: main", "#ffffff"),
        ],
    )
    y += 50
    f.text(16, y, "With PDL", 14, bold=True)
    y += 8
    timeline_row(f, y, "", [(0, 0.42, BLUE, "k: main", "#ffffff"), (0.42, 0.56, LBLUE, "tail")])
    timeline_row(f, y + 30, "", [(0.40, 0.56, LORANGE, "prologue"), (0.58, 0.86, ORANGE, "k+1: main", "#ffffff")])
    xs = 16 + (W - 32) * 0.57
    f.line(xs, y - 6, xs, y + 64, RED, 1.5, dash="4,3")
    y += 84
    y = f.para(
        16,
        y,
        "The red line is cudaGridDependencySynchronize(): kernel k + 1 waits there, not at its start, "
        "for kernel k's output. The saving is a few microseconds per pair of kernels.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 23
@figure
def f23_capacities():
    f = Fig(
        "23-capacities",
        "Capacity of each memory space on the H200, on a logarithmic scale",
        "Bar chart with a logarithmic axis from 100 bytes to 1 terabyte. Registers: at most 255 per thread, about "
        "1 KB, and 65,536 per SM, 256 KB. Constant memory: 64 KB. Shared memory: up to 227 KB per block. L2: 60 MB. "
        "Global memory: 141 GB of HBM. Each step to the right is a step further from the FMA units.",
        0,
    )
    y = f.heading("How much each space holds (H200)", "Logarithmic scale: each grid line is 1,000 times the last")
    rows = [
        ("registers, one thread: 255 x 4 B", 1020, GREEN, "1 KB"),
        ("constant memory", 64 * 1024, PURPLE, "64 KB"),
        ("shared memory, one block", 227 * 1024, GREEN, "227 KB"),
        ("registers, one SM: 65,536 x 4 B", 256 * 1024, GREEN, "256 KB"),
        ("L2 cache, whole chip", 60e6, ORANGE, "60 MB"),
        ("global memory (HBM)", 141e9, BLUE, "141 GB"),
    ]
    y = hbars(
        f,
        y + 4,
        rows,
        1e12,
        log=True,
        vmin=100,
        ticks=[1e3, 1e6, 1e9, 1e12],
        x1=W - 30,
        tick_fmt=lambda t: {1e3: "1 KB", 1e6: "1 MB", 1e9: "1 GB", 1e12: "1 TB"}[t],
    )
    y = f.para(
        16,
        y + 10,
        "Green: on the SM. The others live in device memory or the L2, reached through caches.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f23_local_memory():
    f = Fig(
        "23-local-memory",
        "When a thread's array lives in registers and when in local memory",
        "Two arrays from the example kernel. acc[8], touched only by fully unrolled loops with constant indices, "
        "becomes eight registers. table[8], indexed by a value known only at run time, cannot live in registers "
        "and goes to the thread's stack frame in local memory, which is device memory reached through the L1 and "
        "L2. Below, the three things that put data in local memory: spills, dynamically indexed arrays, and large "
        "structures or objects whose address is taken; -Xptxas -v reports the stack frame and spill bytes.",
        0,
    )
    y = f.heading("Same declaration, two places to live")
    y += 16
    f.box(16, y, 200, 56, ["float acc[8];", "acc[i], i unrolled"], LGREEN, GREEN, mono=True)
    f.line(220, y + 28, 262, y + 28, MUTED, 1.4, arrow=True)
    f.text(264, y + 14, "registers", 14, fill=GREEN, bold=True)
    cells(f, 264, y + 22, 8, 25, 26, LGREEN, strokes=GREEN, labels=[f"R{i}" for i in range(8)])
    y += 84
    f.box(16, y, 200, 56, ["float table[8];", "table[idx & 7]"], LORANGE, ORANGE, mono=True)
    f.line(220, y + 28, 262, y + 28, MUTED, 1.4, arrow=True)
    f.box(264, y, 200, 56, ["local memory: HBM,", "cached in L1 and L2"], LORANGE, ORANGE)
    y += 86
    f.text(16, y, "What puts data in local memory", 14, bold=True)
    for s in [
        "spills: more registers needed than allowed",
        "arrays indexed by a run-time value",
        "large structures, objects whose address is taken",
    ]:
        y += 22
        f.text(28, y, "\u2022 " + s, 14)
    y += 30
    f.text(16, y, "check: nvcc -Xptxas -v (stack frame, spill bytes)", 14, fill=MUTED)
    f.h = int(y + 16)
    return f.save()


@figure
def f23_constant_broadcast():
    f = Fig(
        "23-constant-broadcast",
        "The constant cache serves one address per pass",
        "Two cases for lanes of a warp reading constant memory. Top, every lane reads taps[k], the same address: "
        "the constant cache serves it as one broadcast, one pass for the whole warp. Bottom, lanes read different "
        "entries of a table: the accesses are serialised, one pass per distinct address, so eight different "
        "addresses take eight passes.",
        0,
    )
    y = f.heading("__constant__ memory: same address or not", "8 of the 32 lanes shown")
    lane_x = [28 + i * 56 for i in range(8)]
    for case in range(2):
        y += 30
        title = "taps[k]: every lane, one address" if case == 0 else "table[lane]: eight different addresses"
        f.text(16, y, title, 14, bold=True)
        y += 10
        for i, x in enumerate(lane_x):
            f.box(x, y, 44, 26, [f"L{i}"], LGREY, MUTED)
        ty = y + 76
        if case == 0:
            f.box(180, ty, 120, 28, ["taps[k]"], LGREEN, GREEN, mono=True)
            for x in lane_x:
                f.line(240, ty, x + 22, y + 28, GREEN, 1, arrow=True)
            note = "1 pass: a broadcast"
        else:
            for i, x in enumerate(lane_x):
                f.box(x, ty, 44, 28, [f"t{i}"], LORANGE, ORANGE)
                f.line(x + 22, ty, x + 22, y + 28, ORANGE, 1, arrow=True)
            note = "8 passes: one per distinct address"
        y = ty + 50
        f.text(16, y, note, 14, fill=GREEN if case == 0 else ORANGE, bold=True)
    f.h = int(y + 16)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 24
@figure
def f24_saxpy_mapping():
    f = Fig(
        "24-saxpy-mapping",
        "Each line of SAXPY in PTX and in SASS",
        "A table with one row per step of the SAXPY kernel. The index uses mov of ctaid, ntid and tid and a mad.lo "
        "in PTX, two S2R and an IMAD in SASS. The bounds check is setp plus a predicated branch in PTX and a "
        "predicated EXIT in SASS. The addresses take cvta, mul.wide and add in PTX and two IMAD.WIDE in SASS. "
        "x[i] is ld.global.nc, LDG.E.CONSTANT in SASS; y[i] is ld.global, LDG.E. The arithmetic is one fma.rn.f32, "
        "an FFMA reading a from the constant bank, and the store is st.global, STG.E.",
        0,
    )
    y = f.heading("saxpy: y[i] = a * x[i] + y[i]", "Source, PTX (virtual ISA) and SASS (sm_90), abridged")
    rows = [
        ("index i", "3 mov, mad.lo", "2 S2R, IMAD"),
        ("i < n ?", "setp, @%p bra", "ISETP, @P0 EXIT"),
        ("&x[i], &y[i]", "cvta, mul.wide, add", "2 IMAD.WIDE"),
        ("load x[i]", "ld.global.nc.f32", "LDG.E.CONSTANT"),
        ("load y[i]", "ld.global.f32", "LDG.E"),
        ("a * x + y", "fma.rn.f32", "FFMA, a in c[0x0]"),
        ("store y[i]", "st.global.f32", "STG.E"),
    ]
    y += 18
    cols = (16, 136, 316)
    for c, h in zip(cols, ("source", "PTX", "SASS"), strict=True):
        f.text(c, y, h, 14, bold=True)
    f.line(16, y + 8, W - 16, y + 8, MUTED, 0.8)
    y += 8
    for i, (a, b, c) in enumerate(rows):
        if i % 2 == 0:
            f.rect(16, y + 2, W - 32, 26, LGREY)
        f.text(cols[0] + 2, y + 20, a, 14)
        f.text(cols[1], y + 20, b, 14, mono=True, fill=BLUE)
        f.text(cols[2], y + 20, c, 14, mono=True, fill=GREEN)
        y += 28
    y += 18
    y = f.para(
        16,
        y,
        "x is const __restrict__, so both levels read it through the read-only path; ptxas folds "
        "the cvta conversions and address arithmetic away and uses 10 registers.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f24_jit_path():
    f = Fig(
        "24-jit-path",
        "What the driver does when it loads a module",
        "A flow chart. If the module holds SASS for the GPU present, the driver runs it directly; the judge always "
        "takes this path, since it compiles a cubin for its workers' exact architecture. If not, the driver "
        "looks for a compiled copy of the embedded PTX in its on-disk compute cache and uses it; otherwise it "
        "JIT-compiles the PTX with its own built-in back end, which takes milliseconds for one kernel and can "
        "take minutes for a large library, stores the result in the cache, and runs it. CUDA_FORCE_PTX_JIT=1 "
        "skips the embedded SASS.",
        0,
    )
    y = f.heading("Loading a module: SASS, cache or JIT")
    y += 10
    f.box(16, y, W - 32, 34, ["module loaded on this GPU"], LGREY, MUTED)
    y += 34
    f.line(W / 2, y + 1, W / 2, y + 18, MUTED, 1.4, arrow=True)
    y += 20
    f.box(16, y, 200, 50, ["SASS for this", "architecture inside?"], "#ffffff", INK)
    f.line(216, y + 25, 262, y + 25, GREEN, 1.4, arrow=True)
    f.text(239, y + 18, "yes", 14, "middle", GREEN, bold=True)
    f.box(264, y, 200, 50, ["run it directly", "(the judge's cubin)"], LGREEN, GREEN)
    y += 50
    f.line(116, y + 1, 116, y + 20, ORANGE, 1.4, arrow=True)
    f.text(124, y + 16, "no", 14, fill=ORANGE, bold=True)
    y += 22
    f.box(16, y, 200, 50, ["PTX already compiled", "in the compute cache?"], "#ffffff", INK)
    f.line(216, y + 25, 262, y + 25, GREEN, 1.4, arrow=True)
    f.text(239, y + 18, "yes", 14, "middle", GREEN, bold=True)
    f.box(264, y, 200, 50, ["load the cached", "SASS: fast start"], LGREEN, GREEN)
    y += 50
    f.line(116, y + 1, 116, y + 20, ORANGE, 1.4, arrow=True)
    f.text(124, y + 16, "no", 14, fill=ORANGE, bold=True)
    y += 22
    f.box(
        16,
        y,
        W - 32,
        50,
        ["JIT-compile the PTX with the driver's back end:", "ms for a kernel, minutes for a big library"],
        LORANGE,
        ORANGE,
    )
    y += 50
    f.line(W / 2, y + 1, W / 2, y + 18, MUTED, 1.4, arrow=True)
    y += 20
    f.box(16, y, W - 32, 34, ["store in ~/.nv/ComputeCache, then run"], LORANGE, ORANGE)
    y += 56
    y = f.para(
        16,
        y,
        "JIT output depends on the installed driver, not on the toolkit; CUDA_FORCE_PTX_JIT=1 "
        "ignores the SASS to test the PTX path.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f24_vector_alignment():
    f = Fig(
        "24-vector-alignment",
        "How a float4 access compiles, and when it faults",
        "Memory drawn as 16-byte chunks of four floats. A float4 load from an address that is a multiple of 16 is "
        "one LDG.E.128 per lane. Four float loads of x[4i] to x[4i + 3] stay four LDG.E, because the compiler "
        "cannot prove that x + 4i is 16-byte aligned. A float4 load from an address that is not a multiple of 16 "
        "is not split: it faults with a misaligned address error and leaves the context unusable.",
        0,
    )
    y = f.heading("16-byte loads in SASS", "Each box is a float; thick lines are 16-byte boundaries")

    def strip(y, start, colour):
        for i in range(12):
            f.rect(40 + i * 34, y, 34, 26, colour if start <= i < start + 4 else "#ffffff", GREY, 0.7)
        for b in range(4):
            f.line(40 + b * 4 * 34, y - 4, 40 + b * 4 * 34, y + 30, INK, 2)

    cases = [
        ("float4 at a multiple of 16", 4, GREEN, "one LDG.E.128: 16 bytes per lane"),
        ("x[4*i] ... x[4*i + 3] as four floats", 4, BLUE, "four LDG.E: alignment not provable"),
        ("float4 at an address off by 4 bytes", 5, RED, "fault: misaligned address, context lost"),
    ]
    for title, start, colour, note in cases:
        y += 28
        f.text(16, y, title, 14, bold=True)
        y += 10
        strip(y, start, colour)
        y += 48
        f.text(40, y, note, 14, fill=colour, bold=True)
    y += 28
    y = f.para(
        16,
        y,
        "Grep the SASS after the change: LDG.E.128 is the proof that the 16-byte path was taken.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 25
@figure
def f25_cc_versions():
    f = Fig(
        "25-cc-versions",
        "Compute capabilities of the GPUs used for LLM work, grouped by major version",
        "Six rows grouped into three major versions. 8.0 Ampere, A100: cp.async, BF16 and TF32 tensor cores. 8.6 "
        "Ampere, RTX A6000: a smaller SM with the same instruction set. 8.9 Ada, L4 and L40S: FP8 tensor-core "
        "instructions. 9.0 Hopper, H100 and H200: clusters, distributed shared memory, TMA, and wgmma in sm_90a. "
        "10.0 data-centre Blackwell, B200: tcgen05 and tensor memory in sm_100a. 12.0 workstation and consumer "
        "Blackwell: a different SM without tcgen05, although its number is larger.",
        0,
    )
    y = f.heading("Compute capability: a version per GPU", "Same colour = same major version; SASS runs only within it")
    rows = [
        ("8.0", "Ampere: A100", "cp.async, BF16 and TF32 tensor cores", 0),
        ("8.6", "Ampere: RTX A6000", "smaller SM, instruction set of 8.0", 0),
        ("8.9", "Ada: L4, L40S", "FP8 tensor-core instructions", 0),
        ("9.0", "Hopper: H100, H200", "clusters, TMA; wgmma in sm_90a", 1),
        ("10.0", "Blackwell: B200", "tcgen05, tensor memory in sm_100a", 2),
        ("12.0", "Blackwell: RTX 50", "a different SM: no tcgen05", 3),
    ]
    fills = [LBLUE, LGREEN, LORANGE, LPURPLE]
    strokes = [BLUE, GREEN, ORANGE, PURPLE]
    y += 8
    for cc, arch, feat, g in rows:
        f.rect(16, y, W - 32, 50, fills[g], strokes[g], 1, 6)
        f.text(30, y + 31, cc, 16, bold=True, fill=strokes[g])
        f.text(90, y + 21, arch, 14, bold=True)
        f.text(90, y + 40, feat, 14)
        y += 56
    y += 10
    y = f.para(
        16,
        y,
        "12.0 is a larger number than 10.0 and lacks its tensor-core instructions: features belong "
        "to targets, not to an ordering of numbers.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f25_gencode():
    f = Fig(
        "25-gencode",
        "What one -gencode clause produces",
        "CUDA C++ is compiled against the virtual architecture named by arch=compute_90 into PTX. Each entry of "
        "code= decides what is kept: code=sm_90 sends the PTX through ptxas to SASS for the real architecture "
        "sm_90, and code=compute_90 keeps the PTX itself. Both go into the fat binary. The shorthand -arch=sm_90 "
        "means arch=compute_90 with code=sm_90 and compute_90. NVRTC, given sm_90, produces a cubin directly, and "
        "given compute_90 produces PTX only.",
        0,
    )
    y = f.heading("One -gencode clause, two products")
    y += 12
    f.box(140, y, 200, 34, ["kernel.cu"], LGREY, MUTED, mono=True)
    y += 34
    f.line(240, y + 1, 240, y + 26, MUTED, 1.4, arrow=True)
    f.text(250, y + 19, "arch=compute_90", 14, fill=BLUE, mono=True)
    y += 28
    f.box(140, y, 200, 40, ["PTX (virtual ISA)"], LBLUE, BLUE)
    y += 40
    f.line(200, y + 1, 110, y + 38, MUTED, 1.4, arrow=True)
    f.line(280, y + 1, 370, y + 38, MUTED, 1.4, arrow=True)
    f.text(16, y + 22, "code=sm_90", 14, fill=GREEN, mono=True)
    f.text(W - 16, y + 22, "code=compute_90", 14, "end", fill=BLUE, mono=True)
    y += 40
    f.box(16, y, 200, 50, ["ptxas: SASS", "for sm_90"], LGREEN, GREEN)
    f.box(264, y, 200, 50, ["the PTX itself,", "kept for later GPUs"], LBLUE, BLUE)
    y += 50
    f.line(116, y + 1, 200, y + 28, MUTED, 1.4, arrow=True)
    f.line(364, y + 1, 280, y + 28, MUTED, 1.4, arrow=True)
    y += 30
    f.box(110, y, 260, 34, ["fat binary"], LGREY, MUTED)
    y += 60
    f.text(16, y, "-arch=sm_90 is this clause. NVRTC instead:", 14, bold=True)
    y += 24
    f.text(28, y, "sm_90 \u2192 a cubin (SASS), what the judge loads", 14)
    y += 22
    f.text(28, y, "compute_90 \u2192 PTX only", 14)
    f.h = int(y + 16)
    return f.save()


@figure
def f25_smem_limits():
    f = Fig(
        "25-smem-limits",
        "Shared memory limits at compute capability 8.0 and 9.0",
        "Bar chart in kilobytes. Shared memory per SM: up to 164 KB at 8.0 and 228 KB at 9.0. The most one block "
        "may opt into: 163 KB at 8.0 and 227 KB at 9.0, which is what the judge reads from the H200 with "
        "cudaDevAttrMaxSharedMemoryPerBlockOptin. Both allow 2,048 resident threads per SM.",
        0,
    )
    y = f.heading("Two rows of the limits table", "Kilobytes of shared memory; 2,048 threads per SM at both")
    y = hbars(
        f,
        y + 4,
        [
            ("8.0 (A100): per SM", 164, BLUE, "164 KB"),
            ("8.0: one block, opt-in", 163, LBLUE, "163 KB"),
            ("9.0 (H100, H200): per SM", 228, GREEN, "228 KB"),
            ("9.0: one block, opt-in (the judge's limit)", 227, LGREEN, "227 KB"),
        ],
        260,
        ticks=[0, 64, 128, 192, 256],
        x1=W - 30,
    )
    f.h = int(y + 12)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 26
@figure
def f26_three_cases():
    f = Fig(
        "26-three-cases",
        "Three ways a warp's shared-memory request meets the banks",
        "Eight lanes and eight of the 32 banks, with each bank drawn as a column of words. Left to right in "
        "time order of the text: lanes reading words in different banks are served in one wavefront; lanes "
        "reading the same word get it by broadcast, also one wavefront; lanes reading different words of the "
        "same bank are served one word per wavefront, so eight lanes need eight wavefronts and a whole warp "
        "down one bank needs 32.",
        0,
    )
    y = f.heading("Banks, words and wavefronts", "8 lanes and banks 0-7 shown; a bank is a column of 4-byte words")
    cw, ch, x0 = 48, 14, 48
    cases = [
        ("Different banks", [(t, 0) for t in range(8)], "1 wavefront", GREEN),
        ("Same word: a broadcast", [(3, 0)] * 8, "1 wavefront", GREEN),
        ("Different words, same bank", [(3, t) for t in range(8)], "8 wavefronts (32 for a full warp)", RED),
    ]
    for title, targets, note, colour in cases:
        y += 26
        f.text(16, y, title, 14, bold=True)
        f.text(16, y + 20, note, 14, fill=colour, bold=True)
        y += 30
        for t in range(8):
            f.box(x0 + t * cw + 4, y, cw - 8, 22, [f"L{t}"], LGREY, MUTED)
        gy = y + 56
        rows = 8 if colour == RED else 4
        for b in range(8):
            for r in range(rows):
                hit = (b, r) in targets
                f.rect(
                    x0 + b * cw + 4,
                    gy + r * ch,
                    cw - 8,
                    ch,
                    (LGREEN if colour == GREEN else LRED) if hit else "#ffffff",
                    GREY,
                    0.6,
                )
        for t, (b, r) in enumerate(targets):
            f.line(x0 + t * cw + cw / 2, y + 23, x0 + b * cw + cw / 2, gy + r * ch + ch / 2, colour, 0.9)
        y = gy + rows * ch + 6
        if title == "Different words, same bank":
            for b in range(8):
                f.text(x0 + b * cw + cw / 2, y + 14, f"b{b}", 14, "middle", MUTED)
            y += 18
    f.h = int(y + 12)
    return f.save()


@figure
def f26_transpose_cost():
    f = Fig(
        "26-transpose-cost",
        "The bank-conflict model for the tiled transpose at 8192 x 8192",
        "Bar chart in microseconds on the H200. Reading and writing the matrix at the copy bandwidth takes about "
        "128 microseconds. The shared-memory column reads of an unpadded 32 by 32 tile, 2 to the 26 wavefronts, "
        "take about 257 microseconds, so they cap the kernel at half of copy speed. Padded or swizzled, the same "
        "reads are 2 to the 22 wavefronts, about 16 microseconds, hidden behind the DRAM transfer.",
        0,
    )
    y = f.heading("Transpose at 8192 x 8192: what bounds it", "Microseconds on the H200, from the capsule's model")
    y = hbars(
        f,
        y + 4,
        [
            ("DRAM: read + write at 4.2 TB/s (the floor)", 128, BLUE, "128 µs"),
            ("shared loads, tile[32][32]: 32-way conflicts", 257, RED, "257 µs"),
            ("shared loads, padded or swizzled tile", 16, GREEN, "16 µs"),
        ],
        300,
        ticks=[0, 100, 200, 300],
        x1=W - 50,
    )
    y = f.para(
        16,
        y + 12,
        "2²⁶ wavefronts against 2²²: one wavefront per clock per SM, 132 SMs at 1.98 GHz.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f26_wide_phases():
    f = Fig(
        "26-wide-phases",
        "How 16-byte shared loads are served in quarter-warp phases",
        "A warp of float4 loads wants 512 bytes, so it is served in four phases of 8 lanes; within a phase, "
        "shared memory acts as 8 super-banks of 16 bytes. Top, 32 consecutive float4s: each phase's 8 lanes hit "
        "8 different super-banks, four wavefronts in all, the minimum for 512 bytes. Bottom, a column of float4 "
        "with a pitch that is a multiple of 128 bytes: all 8 lanes of a phase hit the same super-bank, an 8-way "
        "conflict within every phase.",
        0,
    )
    y = f.heading(
        "float4 in shared memory: count in 16-byte units",
        "Rows: the four phases (quarter-warps); columns: the 8 super-banks of 16 bytes",
    )
    cw, ch, x0 = 44, 22, 112
    for title, bad in (
        ("32 consecutive float4: 4 wavefronts, no conflict", False),
        ("a column of float4, pitch 128 B: 8-way per phase", True),
    ):
        y += 28
        f.text(16, y, title, 14, bold=True)
        y += 8
        for ph in range(4):
            f.text(16, y + 16, f"lanes {8 * ph}-{8 * ph + 7}", 14, fill=MUTED)
            for sb in range(8):
                hit = sb == 0 if bad else True
                f.rect(x0 + sb * cw, y, cw - 4, ch, (LRED if bad else LGREEN) if hit else "#ffffff", GREY, 0.7)
                if hit:
                    f.text(
                        x0 + sb * cw + (cw - 4) / 2, y + 16, "8" if bad else "1", 14, "middle", RED if bad else GREEN
                    )
            y += ch + 4
    y += 20
    y = f.para(
        16,
        y,
        "Numbers: lanes of the phase in that super-bank. Odd padding breaks the 16-byte alignment; pad "
        "by 16 bytes or swizzle 16-byte chunks instead.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 27
@figure
def f27_lost_update():
    f = Fig(
        "27-lost-update",
        "Two threads incrementing a counter without and with an atomic",
        "Two timelines of threads A and B incrementing a counter that holds 5. Without an atomic, each does a "
        "load, an add and a store; both load 5 and both store 6, so one increment is lost. With atomicAdd, each "
        "read-modify-write is indivisible: A's turns 5 into 6, then B's turns 6 into 7.",
        0,
    )
    y = f.heading("*count += 1 from two threads", "Time runs to the right; the counter starts at 5")
    for title, ok in (("Plain load, add, store", False), ("atomicAdd(count, 1)", True)):
        y += 28
        f.text(16, y, title, 14, bold=True)
        y += 8
        if not ok:
            timeline_row(
                f,
                y,
                "A",
                [(0, 0.26, LBLUE, "load 5"), (0.28, 0.5, LBLUE, "+1"), (0.52, 0.78, LBLUE, "store 6")],
                label_w=28,
            )
            timeline_row(
                f,
                y + 30,
                "B",
                [(0.1, 0.36, LORANGE, "load 5"), (0.38, 0.6, LORANGE, "+1"), (0.7, 0.96, LORANGE, "store 6")],
                label_w=28,
            )
            res, col = "counter = 6: one increment lost", RED
        else:
            timeline_row(f, y, "A", [(0, 0.46, BLUE, "5 \u2192 6, indivisible", "#ffffff")], label_w=28)
            timeline_row(f, y + 30, "B", [(0.5, 0.96, ORANGE, "6 \u2192 7, indivisible", "#ffffff")], label_w=28)
            res, col = "counter = 7: both increments counted", GREEN
        y += 80
        f.text(16, y, res, 14, fill=col, bold=True)
    y += 26
    y = f.para(
        16,
        y,
        "Global atomics run in the L2, next to the data; atomics on one address run one after another.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f27_contention():
    f = Fig(
        "27-contention",
        "One atomic per element against one per block, for a sum of 2²⁸ floats",
        "Bar chart on a logarithmic time axis. 2 to the 28 atomicAdds to one address, at an optimistic 1 "
        "nanosecond each, take about 268 milliseconds, a quarter of a second. Reading the array once at 4.2 TB/s "
        "takes about 256 microseconds. The 1,024 atomics of one per block, at the same rate, take about 1 "
        "microsecond.",
        0,
    )
    y = f.heading("Sum of N = 2²⁸ floats: what serialises", "Logarithmic time axis; one update per ns on one address")
    y = hbars(
        f,
        y + 4,
        [
            ("2²⁸ atomicAdds on one address", 268e-3, RED, "268 ms"),
            ("reading the array at 4.2 TB/s", 256e-6, BLUE, "256 µs"),
            ("1,024 atomicAdds, one per block", 1.024e-6, GREEN, "about 1 µs"),
        ],
        1.0,
        log=True,
        vmin=1e-7,
        ticks=[1e-6, 1e-3, 1.0],
        x1=W - 70,
        tick_fmt=lambda t: {1e-6: "1 µs", 1e-3: "1 ms", 1.0: "1 s"}[t],
    )
    y = f.para(16, y + 12, "Reduce locally first, then use one atomic per block, not per element.", W - 32, fill=MUTED)
    f.h = int(y + 14)
    return f.save()


@figure
def f27_bytes_in_flight():
    f = Fig(
        "27-bytes-in-flight",
        "Bytes in flight per SM against what Little's law asks for",
        "Bar chart in kilobytes per SM. To stream at 4.2 TB/s with about a microsecond of loaded DRAM latency the "
        "chip needs about 4.2 MB in flight, about 32 KB per SM. The simple loop, one 4-byte load outstanding per "
        "thread and 2,048 threads per SM, has 8 KB in flight, a quarter of that. Eight float4 loads per thread, "
        "128 bytes, give 256 KB per SM with 2,048 threads, comfortably past the need.",
        0,
    )
    y = f.heading("Little's law for the sum", "Kilobytes in flight per SM, with 2,048 resident threads")
    y = hbars(
        f,
        y + 4,
        [
            ("simple loop: one 4-byte load per thread", 8, ORANGE, "8 KB"),
            ("needed: 4.2 TB/s × 1 µs, over 132 SMs", 32, INK, "about 32 KB"),
            ("eight float4 loads in flight: 128 B a thread", 256, GREEN, "256 KB"),
        ],
        270,
        ticks=[0, 64, 128, 192, 256],
        x1=W - 60,
    )
    f.h = int(y + 12)
    return f.save()


@figure
def f27_error_bounds():
    f = Fig(
        "27-error-bounds",
        "Worst-case rounding error of three summation orders for 2^28 floats",
        "Bar chart on a logarithmic axis, in units of u times the sum of the absolute values, with u = 2 to the "
        "minus 24 the FP32 unit roundoff. One serial accumulator: n - 1, about 268 million. The hierarchical "
        "reduction of this capsule, a serial chain of 1,024 per thread plus about twenty levels above it: about "
        "1,050, some 6 times 10 to the minus 5 of the sum. A balanced tree: log2 n = 28.",
        0,
    )
    y = f.heading("Error bounds for N = 2²⁸", "In units of u·Σ|xᵢ|, u = 2⁻²⁴; logarithmic axis")
    y = hbars(
        f,
        y + 4,
        [
            ("one serial accumulator: n - 1", 2**28 - 1, RED, "2.7 × 10⁸"),
            ("this capsule's hierarchy: 1,024 + about 20", 1050, BLUE, "about 1,050"),
            ("a balanced tree: log₂ n", 28, GREEN, "28"),
        ],
        1e9,
        log=True,
        vmin=1,
        ticks=[1, 1e3, 1e6, 1e9],
        x1=W - 90,
        tick_fmt=lambda t: {1: "1", 1e3: "10³", 1e6: "10⁶", 1e9: "10⁹"}[t],
    )
    y = f.para(
        16,
        y + 10,
        "1,050 u is about 6 × 10⁻⁵ of Σ|xᵢ|; typical errors are far smaller than the bound.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 28
@figure
def f28_default_stream():
    f = Fig(
        "28-default-stream",
        "Two non-blocking streams, and what one legacy default-stream launch does to them",
        "Top, kernels A then B in stream s1 and kernel C in stream s2: the order within s1 is kept, and C may run "
        "before, during or after them, here alongside. Bottom, the same program with one kernel D issued to the "
        "legacy default stream between them: D waits for all earlier work in the other blocking streams, and work "
        "issued after it waits for D, so everything runs in series.",
        0,
    )
    y = f.heading("Streams order work only within themselves", "Schematic timelines, time to the right")
    y += 28
    f.text(16, y, "s1 and s2 created non-blocking", 14, bold=True)
    y += 8
    timeline_row(f, y, "s1", [(0, 0.35, BLUE, "A", "#ffffff"), (0.37, 0.7, BLUE, "B", "#ffffff")], label_w=68)
    timeline_row(f, y + 30, "s2", [(0.1, 0.5, ORANGE, "C", "#ffffff")], label_w=68)
    y += 84
    f.text(16, y, "kernel D in the legacy default stream", 14, bold=True)
    y += 8
    timeline_row(f, y, "s1", [(0, 0.22, BLUE, "A", "#ffffff"), (0.5, 0.72, BLUE, "B", "#ffffff")], label_w=68)
    timeline_row(f, y + 30, "default", [(0.24, 0.36, GREY, "D")], label_w=68)
    timeline_row(f, y + 60, "s2", [(0.74, 1.0, ORANGE, "C", "#ffffff")], label_w=68)
    y += 110
    y = f.para(
        16,
        y,
        "D waits for all earlier work in blocking streams, and later work waits for D: the program "
        "serialises. Streams created with cudaStreamNonBlocking, or the per-thread default stream, avoid it.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f28_event_wait():
    f = Fig(
        "28-event-wait",
        "An event orders a consumer in one stream after a producer in another",
        "Three rows: the host, stream s1 and stream s2. The host issues the producer to s1, records the event "
        "ready after it, makes s2 wait for the event, issues the consumer to s2, and carries on without blocking. "
        "On the GPU the consumer starts only when s1 reaches the event. cudaEventSynchronize(ready) blocks the host "
        "only until that point, not until s1 is idle.",
        0,
    )
    y = f.heading("cudaEventRecord + cudaStreamWaitEvent", "The wait is enforced on the GPU; the host keeps issuing")
    y += 18
    timeline_row(
        f,
        y,
        "host",
        [
            (0, 0.1, LGREY, "1"),
            (0.1, 0.2, LGREY, "2"),
            (0.2, 0.3, LGREY, "3"),
            (0.3, 0.4, LGREY, "4"),
            (0.4, 0.9, "#ffffff", "other work"),
        ],
        label_w=52,
    )
    y += 40
    timeline_row(
        f, y, "s1", [(0.08, 0.5, BLUE, "producer", "#ffffff"), (0.54, 0.9, LBLUE, "later s1 work")], label_w=52
    )
    ex = 16 + 52 + (W - 32 - 52) * 0.515
    f.line(ex, y - 8, ex, y + 78, RED, 1.8, dash="4,3")
    f.text(ex, y + 96, "event ready", 14, "middle", RED, bold=True)
    y += 40
    timeline_row(
        f, y, "s2", [(0.2, 0.5, "#ffffff", "waiting"), (0.52, 0.86, ORANGE, "consumer", "#ffffff")], label_w=52
    )
    y += 74
    for s in [
        "1. producer<<<..., s1>>>",
        "2. cudaEventRecord(ready, s1)",
        "3. cudaStreamWaitEvent(s2, ready)",
        "4. consumer<<<..., s2>>>: the host carries on",
    ]:
        f.text(16, y, s, 14, mono=False)
        y += 22
    y += 6
    y = f.para(16, y, "cudaEventSynchronize(ready) blocks the host only until the red line.", W - 32, fill=MUTED)
    f.h = int(y + 14)
    return f.save()


@figure
def f28_launch_costs():
    f = Fig(
        "28-launch-costs",
        "Host cost per kernel against the GPU time of a small kernel",
        "Bar chart in microseconds, measured in capsule 2 on this platform. A small x + y in eager PyTorch costs "
        "about 9.3 microseconds of host time, a launch from Python through CuPy about 5.8; a small kernel runs for "
        "3.4 to 4.8 microseconds on the GPU; replaying a graph of a hundred small adds costs about 1 microsecond "
        "per kernel.",
        0,
    )
    y = f.heading("Per kernel, in microseconds", "Host cost of issuing it against GPU time of running it")
    y = hbars(
        f,
        y + 4,
        [
            ("eager PyTorch x + y (host)", 9.3, RED, "9.3 µs"),
            ("one launch from Python through CuPy (host)", 5.8, ORANGE, "5.8 µs"),
            ("a small kernel on the GPU", 4.8, BLUE, "3.4 to 4.8 µs"),
            ("a kernel replayed in a CUDA graph", 1.0, GREEN, "about 1 µs"),
        ],
        10,
        ticks=[0, 2, 4, 6, 8, 10],
        x1=W - 40,
    )
    y = f.para(
        16,
        y + 12,
        "When the host needs longer to issue a kernel than the GPU needs to run it, the GPU waits.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f28_allocator_reuse():
    f = Fig(
        "28-allocator-reuse",
        "The caching allocator reusing memory still read by another stream",
        "Tensor x is allocated on the main stream and read by a kernel on a side stream. When the host drops its "
        "last reference, the allocator may hand x's block to a new tensor on the main stream at once, and a "
        "kernel there overwrites it while the side stream is still reading: wrong results. After "
        "x.record_stream(side), the allocator waits for the side stream's queued work before reusing the block.",
        0,
    )
    y = f.heading(
        "Why x.record_stream(side) exists", "x was allocated on the main stream; a side-stream kernel reads it"
    )
    for title, safe in (("Without record_stream", False), ("With x.record_stream(side)", True)):
        y += 28
        f.text(16, y, title, 14, bold=True)
        y += 8
        timeline_row(f, y, "side", [(0.05, 0.75, BLUE, "consume(x) reads x", "#ffffff")], label_w=52)
        if safe:
            timeline_row(f, y + 30, "main", [(0.78, 1.0, GREEN, "z reuses", "#ffffff")], label_w=52)
        else:
            timeline_row(f, y + 30, "main", [(0.3, 0.75, RED, "new z writes x's block", "#ffffff")], label_w=52)
        fx = 16 + 52 + (W - 32 - 52) * 0.25
        f.line(fx, y - 4, fx, y + 60, MUTED, 1.4, dash="4,3")
        f.text(fx - 4, y + 76, "host: del x", 14, "middle", MUTED)
        y += 90
    y += 6
    y = f.para(
        16, y, "Red: the new tensor overwrites memory a side-stream kernel is still reading.", W - 32, fill=MUTED
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 29
@figure
def f29_block_size():
    f = Fig(
        "29-block-size",
        "Resident warps per SM for each block size, at the H100 and H200 limits",
        "Bar chart of resident warps per SM when only the limits of 64 warps and 32 blocks per SM apply. Blocks of "
        "32 threads stop at 32 blocks of one warp, 32 warps, half of what the SM can hold. Blocks of 64, 128, 256, "
        "512 and 1,024 threads all reach 64 warps: 32, 16, 8, 4 and 2 blocks.",
        0,
    )
    y = f.heading("Block size and a full SM (vector add)", "Limits: 64 warps and 32 blocks per SM")
    rows = []
    for t in (32, 64, 128, 256, 512, 1024):
        warps = t // 32
        blocks = min(32, 64 // warps)
        rows.append(
            (
                f"{t} threads: {blocks} blocks of {warps} warp{'s' if warps > 1 else ''}",
                blocks * warps,
                ORANGE if blocks * warps < 64 else BLUE,
                f"{blocks * warps} warps",
            )
        )
    y = hbars(f, y + 4, rows, 64, ticks=[0, 16, 32, 48, 64], x1=W - 90, bar_h=16, gap=10)
    y = f.para(
        16,
        y + 10,
        "Memory-bound kernels want the SM full: more loads in flight hide more of HBM's latency.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f29_judge_run():
    f = Fig(
        "29-judge-run",
        "What the judge does with a vector-add submission",
        "Four steps. Compile: NVRTC compiles the file for sm_90 in a child process and keeps the register and spill "
        "report. Test: at N = 1, 1,000, 4,097 and 1,048,579, fresh random inputs, C poisoned with NaN, guard "
        "bands, the launch plan, a check that A and B are unchanged and a comparison of every element with a "
        "float64 reference. Time: at N = 2 to the 28, rounds with fresh inputs, the L2 flushed and the stream "
        "held busy for 300 microseconds, the kernel and cupy.add timed with CUDA events in alternating order, "
        "until both medians are steady to 0.5 percent after at least 10 rounds, 4 seconds or 100 rounds. Report: "
        "median time, GB/s, percent of cupy.add and percent of the copy-bandwidth roofline.",
        0,
    )
    y = f.heading("One submission, four steps")
    y += 10
    y = vflow(
        f,
        y,
        [
            ("1. Compile: NVRTC for sm_90 in a child process; keep the register and spill report", LGREY, MUTED),
            (
                "2. Test at N = 1, 1,000, 4,097, 1,048,579: fresh inputs, C poisoned with NaN, guard bands, inputs "
                "unchanged, every element against a float64 reference",
                LBLUE,
                BLUE,
            ),
            (
                "3. Time at N = 2²⁸: flush the L2, hold the stream 300 µs, your kernel and cupy.add in alternating "
                "order, "
                "until the medians are steady to 0.5% (4 s or 100 rounds at most)",
                LORANGE,
                ORANGE,
            ),
            (
                "4. Report: median ms, GB/s, % of cupy.add, % of the roofline (the worker's measured copy bandwidth)",
                LGREEN,
                GREEN,
            ),
        ],
        gap=18,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f29_fusion():
    f = Fig(
        "29-fusion",
        "Array passes for y = (a + b) * c, eager against fused",
        "Eager PyTorch runs two kernels: the first reads a and b and writes a temporary t, the second reads t and "
        "c and writes y, six passes over arrays of N floats. A fused kernel reads a, b and c and writes y, four "
        "passes. At equal bandwidth the fused kernel is 1.5 times faster, and the temporary is never allocated.",
        0,
    )
    y = f.heading("y = (a + b) * c over N floats", "Each box is one pass of 4N bytes through HBM")

    def passes(y, items):
        x = 16
        for lab, kind in items:
            fill, stroke = (LBLUE, BLUE) if kind == "r" else (LORANGE, ORANGE)
            f.box(x, y, 68, 32, [lab], fill, stroke)
            x += 74
        return x

    y += 26
    f.text(16, y, "Eager: two kernels, 6 passes", 14, bold=True)
    y += 10
    passes(y, [("read a", "r"), ("read b", "r"), ("write t", "w")])
    f.text(248, y + 21, "kernel 1", 14, fill=MUTED)
    y += 38
    passes(y, [("read t", "r"), ("read c", "r"), ("write y", "w")])
    f.text(248, y + 21, "kernel 2", 14, fill=MUTED)
    y += 60
    f.text(16, y, "Fused: one kernel, 4 passes", 14, bold=True)
    y += 10
    passes(y, [("read a", "r"), ("read b", "r"), ("read c", "r"), ("write y", "w")])
    y += 60
    f.text(16, y, "6 × 4N / (4 × 4N) = 1.5 times faster", 14, bold=True, fill=GREEN)
    y += 24
    y = f.para(16, y, "torch.compile finds the same fusion and generates one Triton kernel for it.", W - 32, fill=MUTED)
    f.h = int(y + 14)
    return f.save()


def grid(f, x, y, rows, cols, cw, ch, fill, stroke=GREY, sw=0.6):
    """A rows x cols grid of cells; fill(r, c) gives each cell's colour."""
    for r in range(rows):
        for c in range(cols):
            f.rect(x + c * cw, y + r * ch, cw, ch, fill(r, c), stroke, sw)


# ---------------------------------------------------------------------------------------------------- 30
@figure
def f30_broadcast():
    f = Fig(
        "30-broadcast",
        "Puzzle 5: adding a column vector to a row vector",
        "A column vector a of n entries on the left, a row vector b of n entries on top, and the n by n output "
        "between them, with one thread per output element. The highlighted thread, row 2 and column 3, reads a[2] "
        "and b[3]. Every thread of row 2 reads the same a[2], a broadcast within a warp, and consecutive threads "
        "of the row read consecutive elements of b, a coalesced run.",
        0,
    )
    y = f.heading("out[i, j] = a[i, 0] + b[0, j]", "The output's shape decides the thread grid: one thread per cell")
    cs, n = 44, 5
    ox, oy = 120, y + 60
    f.text(ox + n * cs / 2, y + 30, "b (1 x n)", 14, "middle", ORANGE, bold=True)
    grid(f, ox, y + 38, 1, n, cs, 18, lambda r, c: LORANGE if c == 3 else "#ffffff", ORANGE)
    f.text(40, oy - 10, "a (n x 1)", 14, "middle", BLUE, bold=True)
    grid(f, 30, oy, n, 1, 22, cs, lambda r, c: LBLUE if r == 2 else "#ffffff", BLUE)
    grid(f, ox, oy, n, n, cs, cs, lambda r, c: GREEN if (r, c) == (2, 3) else (LGREEN if r == 2 else "#ffffff"))
    f.line(52, oy + 2.5 * cs, ox + 3 * cs + 6, oy + 2.5 * cs, BLUE, 1.4, dash="4,3")
    f.line(ox + 3.5 * cs, y + 56, ox + 3.5 * cs, oy + 2 * cs + 6, ORANGE, 1.4, dash="4,3")
    y = oy + n * cs + 28
    y = f.para(
        16,
        y,
        "Thread (2, 3) reads a[2] and b[3]. Along row 2 (light green) every thread reads the same a[2], "
        "a broadcast, and consecutive b elements, a coalesced run: both cheap.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f30_starter_scan():
    f = Fig(
        "30-starter-scan",
        "The three launches of the starter scan and the bytes each moves",
        "Launch 1: blocks of 1,024 threads, one element each, scan their part in shared memory with a barrier "
        "between steps, write the block-local results to y and each block's total to the workspace; it reads x "
        "and writes y, 8 bytes per element. Launch 2: a single block scans the block totals, a few kilobytes. "
        "Launch 3: every element gets the total of all earlier blocks added, reading and writing y again, 8 more "
        "bytes per element. 16 N bytes where 8 N would do: at N = 2 to the 28 and 4.2 TB/s, 8 N bytes take about "
        "511 microseconds, so the structure cannot get under about a millisecond.",
        0,
    )
    y = f.heading("prefix_sum starter: three launches", "Bytes per element through DRAM in brackets")
    y += 12
    y = vflow(
        f,
        y,
        [
            (
                "Launch 1: each block of 1,024 scans its elements in shared memory; writes y and its total to the "
                "workspace (read x, write y: 8 B)",
                LBLUE,
                BLUE,
            ),
            ("Launch 2: one block scans the block totals (a few KB)", LGREY, MUTED),
            ("Launch 3: add the total of all earlier blocks to every element (read y, write y: 8 B)", LORANGE, ORANGE),
        ],
        gap=18,
    )
    y += 24
    f.text(16, y, "16 bytes per element where 8 would do", 14, bold=True)
    y += 22
    y = f.para(
        16,
        y,
        "At N = 2²⁸ and 4.2 TB/s, 8N bytes take about 511 µs: this structure cannot get under about a millisecond.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 31
@figure
def f31_conv_halo():
    f = Fig(
        "31-conv-halo",
        "What one block of a 1D convolution loads into shared memory",
        "A block of 8 threads computing 8 outputs of a 3-tap convolution, drawn small. Its shared copy of a holds "
        "its own 8 elements plus a halo of K - 1 = 2 elements that belong to the next block; shared_b holds the 3 "
        "taps. Every thread loads its own element, threads 0 to 2 also load one tap each, and threads 6 and 7 also "
        "load one halo element each, so no thread loads more than two values. Output i reads shared_a[i] to "
        "shared_a[i + 2].",
        0,
    )
    y = f.heading("A block of T threads, K taps: T + 2K - 1 loads", "Drawn with T = 8 and K = 3")
    cw, x0 = 40, 36
    y += 20
    f.text(16, y, "shared_a: T own elements + K - 1 halo", 14, bold=True)
    y += 8
    cells(f, x0, y, 10, cw, 28, lambda i: LBLUE if i < 8 else LORANGE, labels=[f"a{i}" for i in range(10)])
    f.text(x0 + 9 * cw, y + 46, "halo", 14, "middle", ORANGE, bold=True)
    y += 74
    f.text(16, y, "shared_b: the K taps", 14, bold=True)
    y += 8
    cells(f, x0, y, 3, cw, 28, LGREEN, labels=["b0", "b1", "b2"])
    y += 60
    f.text(16, y, "Who loads what (at most two each)", 14, bold=True)
    y += 8
    for t in range(8):
        f.box(x0 + t * cw + 3, y, cw - 6, 24, [f"t{t}"], LGREY, MUTED)
    yy = y + 30
    for t in range(8):
        items = [("a" + str(t), BLUE)]
        if t < 3:
            items.append(("b" + str(t), GREEN))
        if t >= 6:
            items.append(("a" + str(t + 2), ORANGE))
        for k, (lab, col) in enumerate(items):
            f.text(x0 + t * cw + cw / 2, yy + 16 + 18 * k, lab, 14, "middle", col, bold=True)
    y = yy + 56
    y = f.para(
        16, y, "Extra loads: (K - 1) / T of the tile. With 4 taps and 256 threads, about 1%.", W - 32, fill=MUTED
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f31_block_scan():
    f = Fig(
        "31-block-scan",
        "A block scan built from warp scans",
        "Drawn for 4 warps with every input equal to 1. Step 1: each warp scans its 32 values with shuffles, so "
        "lane l holds l + 1. Step 2: lane 31 of each warp writes the warp's total, 32, to warp_totals, and the block "
        "synchronises. Step 3: warp 0 scans the totals into 32, 64, 96 and 128, and the block synchronises again. "
        "Step 4: each warp after the first adds the scanned total of the warp before it, so element t ends as "
        "t + 1. Two barriers in all, against twenty for the shared-memory Hillis-Steele scan of 1,024 threads.",
        0,
    )
    y = f.heading("block_inclusive_scan: warps, then their totals", "4 warps drawn, every input 1")
    bw, x0 = 100, 36
    y += 22
    f.text(16, y, "1. each warp scans itself with shuffles", 14, bold=True)
    y += 8
    for w in range(4):
        f.box(x0 + w * (bw + 4), y, bw, 30, ["1 ... 32"], LBLUE, BLUE)
    y += 56
    f.text(16, y, "2. lane 31 writes warp_totals[w]; barrier", 14, bold=True)
    y += 8
    for w in range(4):
        f.box(x0 + w * (bw + 4) + 30, y, 40, 28, ["32"], LGREY, MUTED)
    y += 54
    f.text(16, y, "3. warp 0 scans the totals; barrier", 14, bold=True)
    y += 8
    for w, v in enumerate((32, 64, 96, 128)):
        f.box(x0 + w * (bw + 4) + 30, y, 40, 28, [str(v)], LGREEN, GREEN)
    y += 54
    f.text(16, y, "4. warp w adds the total before it", 14, bold=True)
    y += 8
    for w, lab in enumerate(("1 ... 32", "33 ... 64", "65 ... 96", "97 ... 128")):
        f.box(x0 + w * (bw + 4), y, bw, 30, [lab], LORANGE, ORANGE)
    y += 56
    y = f.para(
        16,
        y,
        "Two barriers for the block, against 20 for Hillis-Steele in shared memory over 1,024 threads.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f31_lookback():
    f = Fig(
        "31-lookback",
        "Decoupled look-back: a block finds its prefix from its predecessors' status words",
        "Six tiles of the input, each with a status word. Tiles 0 to 2 have published their inclusive prefix "
        "(flag P); tiles 3 and 4 have published only their own total (flag A); tile 5 is looking back. It adds "
        "tile 4's total, 9, and tile 3's total, 5, then finds tile 2's inclusive prefix, 29, and stops: its "
        "exclusive prefix is 43. It then publishes its own inclusive prefix for the blocks after it. Example "
        "values.",
        0,
    )
    y = f.heading("Tile 5 looks back for its prefix", "Status word per tile: A = own total only, P = inclusive prefix")
    tw, x0 = 70, 28
    y += 20
    status = [("P", 10), ("P", 17), ("P", 29), ("A", 5), ("A", 9), ("?", None)]
    for t, (flag, val) in enumerate(status):
        x = x0 + t * (tw + 4)
        f.box(x, y, tw, 30, [f"tile {t}"], LGREY if t < 5 else LORANGE, MUTED if t < 5 else ORANGE)
        fill, col = {"P": (LGREEN, GREEN), "A": (LBLUE, BLUE), "?": ("#ffffff", ORANGE)}[flag]
        f.box(x, y + 40, tw, 30, [f"{flag} {val}" if val is not None else "scanning"], fill, col)
    y += 84
    f.path(
        f"M {x0 + 5 * (tw + 4) + tw / 2} {y} C {x0 + 5 * (tw + 4)} {y + 30}, {x0 + 2 * (tw + 4) + tw} {y + 30}, "
        f"{x0 + 2 * (tw + 4) + tw / 2} {y + 2}",
        ORANGE,
        1.6,
        arrow=True,
    )
    y += 56
    for s in [
        "tile 4: A 9, add and keep looking",
        "tile 3: A 5, add and keep looking",
        "tile 2: P 29, add and stop: prefix = 43",
    ]:
        f.text(16, y, s, 14)
        y += 22
    y += 6
    y = f.para(
        16,
        y,
        "x is read once and y written once: 8 bytes per element. The flags need a clearing launch "
        "first, and tiles come from an atomic counter so no block waits on one not yet scheduled.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 32
@figure
def f32_mapping():
    f = Fig(
        "32-mapping",
        "How the naive kernel maps blocks and warps onto C",
        "Left, C divided into 32 by 32 blocks: blockIdx.x runs down the rows and blockIdx.y along the columns. "
        "Right, one block enlarged: threadIdx.x runs down its 32 rows and threadIdx.y along its 32 columns, so a "
        "warp, 32 threads with the same threadIdx.y, is one column of C and 32 consecutive rows.",
        0,
    )
    y = f.heading("Kernel 1: which threads share a warp")
    f.text(16, y + 14, "row = 32·blockIdx.x + threadIdx.x", 14, mono=True)
    f.text(16, y + 34, "col = 32·blockIdx.y + threadIdx.y", 14, mono=True)
    y += 70
    cs = 24
    f.text(16 + 3 * cs, y, "C: blocks of 32 x 32", 14, "middle", bold=True)
    grid(f, 16 + 12, y + 10, 6, 6, cs, cs, lambda r, c: LBLUE if (r, c) == (1, 2) else "#ffffff", MUTED, 0.8)
    f.line(16, y + 14, 16, y + 10 + 6 * cs, BLUE, 1.4, arrow=True)
    f.text(28 + 3 * cs, y + 10 + 6 * cs + 22, "blockIdx.y \u2192", 14, "middle", MUTED)
    f.text(180, y + 10 + 6 * cs + 44, "\u2193 blockIdx.x", 14, "end", MUTED)
    bx, by, bs = 250, y + 10, 200
    f.rect(bx, by, bs, bs, LBLUE, BLUE, 1.2)
    cw = bs / 32
    for c in (0,):
        f.rect(bx + c * cw, by, cw * 1.0, bs, ORANGE)
    f.line(28 + 3 * cs, y + 10 + 1 * cs, bx, by, BLUE, 0.8, dash="3,3")
    f.line(28 + 3 * cs, y + 10 + 2 * cs, bx, by + bs, BLUE, 0.8, dash="3,3")
    f.text(bx + 14, by + 30, "warp 0:", 14, fill=ORANGE, bold=True)
    f.text(bx + 14, by + 50, "threadIdx.y = 0,", 14, fill=ORANGE)
    f.text(bx + 14, by + 70, "threadIdx.x = 0..31", 14, fill=ORANGE)
    f.text(bx + 14, by + 90, "down one column", 14, fill=ORANGE)
    f.text(bx + bs / 2, by + bs + 22, "one block, 1,024 threads", 14, "middle", MUTED)
    y = by + bs + 62
    y = f.para(16, y, "Consecutive lanes are a whole row of A apart: 16 KiB at K = 4096.", W - 32, fill=MUTED)
    f.h = int(y + 14)
    return f.save()


@figure
def f32_ceilings():
    f = Fig(
        "32-ceilings",
        "The naive kernel against the ceilings the capsule computes",
        "Bar chart of TFLOP/s on a logarithmic axis, on the H200. If every byte came from HBM, the sector count "
        "would cap the naive kernel near 0.25 TFLOP/s and its requested bytes near 1 TFLOP/s, but the data sits in "
        "L1. The L1 model, 33 lines per 32 FMAs, predicts 0.51 TFLOP/s; the kernel measures "
        f"{MT('sgemm.k01.tflops')}. cuBLAS reaches {FLOPS_4096 / M('sgemm.k01.cublas_ms') / 1e9:.1f} TFLOP/s "
        "and the measured FP32 FMA ceiling is about 63.",
        0,
    )
    y = f.heading("Kernel 1 and its ceilings (H200)", "TFLOP/s, logarithmic axis")
    y = hbars(
        f,
        y + 4,
        [
            ("HBM at 33 sectors per 64 FLOPs (not the limit)", 0.25, GREY, "about 0.25"),
            ("HBM at 8 bytes per FMA (not the limit)", 1.0, GREY, "about 1"),
            ("L1 model: 32 FMAs per 33 clocks per SM", 0.51, ORANGE, "0.51"),
            (f"kernel 1 measured ({M('sgemm.k01.ms'):.1f} ms)", M("sgemm.k01.tflops"), RED, MT("sgemm.k01.tflops")),
            (
                f"cuBLAS SGEMM ({M('sgemm.k01.cublas_ms'):.3f} ms)",
                FLOPS_4096 / M("sgemm.k01.cublas_ms") / 1e9,
                BLUE,
                f"{FLOPS_4096 / M('sgemm.k01.cublas_ms') / 1e9:.1f}",
            ),
            ("FP32 FMA ceiling, measured", 63, INK, "about 63"),
        ],
        100,
        log=True,
        vmin=0.1,
        ticks=[0.1, 1, 10, 100],
        x1=W - 80,
        tick_fmt=lambda t: f"{t:g}",
    )
    y = f.para(
        16,
        y + 10,
        "99.2% of the load sectors hit in L1: the data is on chip, and the L1 is the wall.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f32_profile():
    f = Fig(
        "32-profile",
        "What Nsight Compute reports for the naive kernel",
        "Bar chart of percentages for kernel 1 on the H200: 99.2 percent of global-load sectors hit in L1; the L1 "
        "runs at 99 percent of its peak throughput; warps spend about 94 percent of their time stalled on a full "
        "L1 queue; DRAM throughput is under 1 percent. Occupancy is full, 64 warps per SM.",
        0,
    )
    y = f.heading("Kernel 1 under the profiler", "Everything waits on one unit, the L1")
    y = hbars(
        f,
        y + 4,
        [
            ("global-load sectors that hit in L1", 99.2, GREEN, "99.2%"),
            ("L1 throughput, of its peak", 99, RED, "99%"),
            ("warp time stalled on a full L1 queue", 94, ORANGE, "about 94%"),
            ("DRAM throughput, of its peak", 1, BLUE, "under 1%"),
        ],
        100,
        ticks=[0, 25, 50, 75, 100],
        x1=W - 100,
        tick_fmt=lambda t: f"{t}%",
    )
    y = f.para(
        16,
        y + 10,
        "16.5 sectors per load request (32 for A, 1 for B); 64 warps per SM, full occupancy.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 33
@figure
def f33_intensity_levels():
    f = Fig(
        "33-intensity-levels",
        "Kernel 2's arithmetic intensity across each link of the memory hierarchy",
        "Bar chart of FLOP per byte on a logarithmic axis for kernel 2 at 4096 cubed. Requested by threads, 550 GB: "
        "0.25 FLOP per byte. From L2 into L1, 15.5 GB: 8.9. Read from DRAM, 4.3 GB: 32. The problem's minimum, "
        "each matrix once, 0.27 GB: 512.",
        0,
    )
    y = f.heading("Kernel 2: intensity depends on the link", "FLOP per byte, logarithmic axis; bytes in brackets")
    y = hbars(
        f,
        y + 4,
        [
            ("requested by threads (550 GB)", 0.25, RED, "0.25"),
            ("from L2 into L1, measured (15.5 GB)", 8.9, ORANGE, "8.9"),
            ("from DRAM, measured (4.3 GB)", 32, BLUE, "32"),
            ("the problem's minimum (0.27 GB)", 512, GREEN, "512"),
        ],
        1000,
        log=True,
        vmin=0.1,
        ticks=[0.1, 1, 10, 100, 1000],
        x1=W - 60,
        tick_fmt=lambda t: f"{t:g}",
    )
    y = f.para(
        16,
        y + 10,
        "The first bar is the one that hurts: two load instructions and two L1 lookups per FMA.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f33_k1_vs_k2():
    f = Fig(
        "33-k1-vs-k2",
        "Kernel 1 against kernel 2: sectors, model and measurement",
        "Three pairs of bars. Sectors per load request: 16.5 for kernel 1, 2.5 for kernel 2. The L1 model's "
        "ceiling: 0.51 TFLOP/s for kernel 1, 8.4 for kernel 2. Measured on the H200: "
        f"{MT('sgemm.k01.tflops')} TFLOP/s for kernel 1 ({M('sgemm.k01.ms'):.1f} ms) and "
        f"{MT('sgemm.k02.tflops')} for kernel 2 ({M('sgemm.k02.ms'):.1f} ms), about 70 percent of its ceiling.",
        0,
    )
    y = f.heading("Two lines swapped", "Kernel 1 (grey) against kernel 2 (blue)")
    for sub, rows, vmax, ticks in (
        (
            "Sectors per load request",
            [("kernel 1", 16.5, GREY, "16.5"), ("kernel 2", 2.5, BLUE, "2.5")],
            20,
            [0, 5, 10, 15, 20],
        ),
        (
            "L1 model's ceiling, TFLOP/s",
            [("kernel 1: 33 lines per step", 0.51, GREY, "0.51"), ("kernel 2: 2 lines per step", 8.4, BLUE, "8.4")],
            10,
            [0, 5, 10],
        ),
        (
            "Measured on the H200, TFLOP/s",
            [
                (f"kernel 1: {M('sgemm.k01.ms'):.1f} ms", M("sgemm.k01.tflops"), GREY, MT("sgemm.k01.tflops")),
                (f"kernel 2: {M('sgemm.k02.ms'):.1f} ms", M("sgemm.k02.tflops"), BLUE, MT("sgemm.k02.tflops")),
            ],
            10,
            [0, 5, 10],
        ),
    ):
        y += 24
        f.text(16, y, sub, 14, bold=True)
        y = hbars(f, y + 4, rows, vmax, ticks=ticks, x1=W - 60, bar_h=16, gap=6)
    f.h = int(y + 10)
    return f.save()


@figure
def f33_block_strips():
    f = Fig(
        "33-block-strips",
        "The strips of A and B that one block of kernel 2 needs",
        "C with one 32 by 32 block of outputs highlighted. To compute it the block needs a 32 by K strip of A, the "
        "same 32 rows, and a K by 32 strip of B, the same 32 columns: 1 MiB in all at K = 4096. The 16,384 blocks "
        "together need about 17 GB from L2; the profiler measured 15.5 GB.",
        0,
    )
    y = f.heading("What one 32 x 32 block reads", "At M = N = K = 4096")
    s = 150
    ax, ay = 16, y + 190
    bx, by = 16 + s + 24, y + 20
    f.rect(bx, by, s, s, "#ffffff", MUTED, 1)
    f.rect(bx + 0.55 * s, by, 0.1 * s, s, LORANGE, ORANGE, 1)
    f.text(bx + s / 2, by - 6, "B (K x N)", 14, "middle", bold=True)
    f.rect(ax, ay, s, s, "#ffffff", MUTED, 1)
    f.rect(ax, ay + 0.3 * s, s, 0.1 * s, LBLUE, BLUE, 1)
    f.text(ax + s / 2, ay - 6, "A (M x K)", 14, "middle", bold=True)
    f.rect(bx, ay, s, s, "#ffffff", MUTED, 1)
    f.rect(bx + 0.55 * s, ay + 0.3 * s, 0.1 * s, 0.1 * s, GREEN, GREEN, 1)
    f.text(bx + s / 2, ay + s + 20, "C: one block", 14, "middle", bold=True)
    tx = bx + s + 14
    f.text(tx, ay + 0.3 * s + 12, "32 x 32", 14, fill=GREEN, bold=True)
    f.text(tx, by + 40, "K x 32", 14, fill=ORANGE, bold=True)
    f.text(tx, by + 60, "strip: 512 KiB", 14, fill=ORANGE)
    f.text(ax, ay + s + 20, "32 x K strip: 512 KiB", 14, fill=BLUE)
    y = ay + s + 52
    y = f.para(
        16,
        y,
        "1 MiB per block x 16,384 blocks: about 17 GB from L2, against 15.5 GB measured. The L1 already "
        "finds almost all the reuse inside a block.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 34
@figure
def f34_two_barriers():
    f = Fig(
        "34-two-barriers",
        "What each of kernel 3's two barriers prevents",
        "Timelines of a fast warp and a slow warp over two rounds of the tile loop. Barrier 1, after the copy, "
        "keeps the fast warp from reading tile slots the slow warp has not written yet, a read-after-write hazard. "
        "Barrier 2, after the compute, keeps the fast warp from overwriting the tiles with the next round's data "
        "while the slow warp is still reading them, a write-after-read hazard.",
        0,
    )
    y = f.heading("copy, barrier, compute, barrier", "Two warps of one block, time to the right")
    y += 30
    timeline_row(
        f, y, "fast", [(0, 0.16, LBLUE, "copy"), (0.3, 0.52, LGREEN, "compute"), (0.7, 0.86, LBLUE, "copy")], label_w=48
    )
    timeline_row(
        f,
        y + 30,
        "slow",
        [
            (0, 0.28, BLUE, "copy", "#ffffff"),
            (0.3, 0.68, GREEN, "compute", "#ffffff"),
            (0.7, 0.98, BLUE, "copy", "#ffffff"),
        ],
        label_w=48,
    )
    for t, lab in ((0.29, "1"), (0.69, "2")):
        x = 16 + 48 + (W - 32 - 48) * t
        f.line(x, y - 10, x, y + 64, RED, 2)
        f.text(x, y - 14, lab, 14, "middle", RED, bold=True)
    y += 92
    f.text(16, y, "Barrier 1, after the copy: read after write", 14, bold=True, fill=RED)
    y += 20
    y = f.para(16, y, "Without it, the fast warp reads As and Bs slots the slow warp has not written yet.", W - 32)
    y += 28
    f.text(16, y, "Barrier 2, after the compute: write after read", 14, bold=True, fill=RED)
    y += 20
    y = f.para(
        16,
        y,
        "Without it, the fast warp overwrites the tiles with round k + 1 while the slow warp still reads round k.",
        W - 32,
    )
    y += 26
    y = f.para(
        16,
        y,
        "Every thread must reach both, so edge threads load zeros instead of returning early.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f34_accounting():
    f = Fig(
        "34-accounting",
        "Why tiling gained 1.49 times: passes per FMA and pipe utilisation",
        "Three pairs of bars for kernel 2 and kernel 3. L1 or shared-memory passes per 32 FMAs: 64 against about "
        "52. Fraction of time the pipe is busy: 71 percent against 86 percent. Passes divided by utilisation, the "
        "clocks per 32 FMAs: about 90 against 60.5, a predicted speed-up of 1.49, which is what was measured "
        f"({M('sgemm.k02.ms'):.1f} ms against {M('sgemm.k03.ms'):.2f} ms).",
        0,
    )
    y = f.heading("Kernel 2 (grey) against kernel 3 (green)", "The capsule's accounting of the L1 and shared pipe")
    for sub, rows, vmax, ticks in (
        (
            "Passes per 32 FMAs",
            [
                ("kernel 2: two L1 passes per iteration", 64, GREY, "64"),
                ("kernel 3: 48 shared + about 4 for the copy", 52, GREEN, "about 52"),
            ],
            100,
            [0, 25, 50, 75, 100],
        ),
        ("Pipe busy", [("kernel 2", 71, GREY, "71%"), ("kernel 3", 86, GREEN, "86%")], 100, [0, 25, 50, 75, 100]),
        (
            "Clocks per 32 FMAs = passes / busy",
            [("kernel 2: 64 / 0.71", 90, GREY, "about 90"), ("kernel 3: 52 / 0.86", 60.5, GREEN, "60.5")],
            100,
            [0, 25, 50, 75, 100],
        ),
    ):
        y += 24
        f.text(16, y, sub, 14, bold=True)
        y = hbars(f, y + 4, rows, vmax, ticks=ticks, x1=W - 90, bar_h=16, gap=6)
    y += 8
    k2, k3 = M("sgemm.k02.ms"), M("sgemm.k03.ms")
    f.text(16, y, f"90 / 60.5 = 1.49 predicted; {k2:.1f} / {k3:.2f} = {k2 / k3:.2f} measured", 14, bold=True)
    f.h = int(y + 16)
    return f.save()


@figure
def f34_traffic():
    f = Fig(
        "34-traffic",
        "What tiling changed in the traffic, and what it did not",
        "Pairs of bars for kernel 2 and kernel 3. Global load requests fell 32 times, from 4.29 billion to 135 "
        "million. Bytes from L2 into the SM barely moved: 15.5 GB against 16.6 GB. DRAM reads went from 4.3 GB to "
        "8.5 GB, still about 13 percent of HBM bandwidth over the run.",
        0,
    )
    y = f.heading("Kernel 2 (grey) against kernel 3 (green)", "Measured at 4096³ on the H200")
    for sub, rows, vmax, ticks, _fmt in (
        (
            "Global load requests, billions",
            [("kernel 2", 4.29, GREY, "4.29"), ("kernel 3", 0.135, GREEN, "0.135")],
            5,
            [0, 1, 2, 3, 4, 5],
            str,
        ),
        (
            "Bytes from L2, GB",
            [("kernel 2", 15.5, GREY, "15.5"), ("kernel 3", 16.6, GREEN, "16.6")],
            20,
            [0, 5, 10, 15, 20],
            str,
        ),
        (
            "Bytes from DRAM, GB",
            [("kernel 2", 4.3, GREY, "4.3"), ("kernel 3", 8.5, GREEN, "8.5")],
            20,
            [0, 5, 10, 15, 20],
            str,
        ),
    ):
        y += 24
        f.text(16, y, sub, 14, bold=True)
        y = hbars(f, y + 4, rows, vmax, ticks=ticks, x1=W - 60, bar_h=16, gap=6)
    y += 6
    y = f.para(
        16,
        y,
        "32 times fewer load instructions; the same bytes from below. Tiling changed how on-chip traffic is served.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 35
@figure
def f35_ladder():
    f = Fig(
        "35-ladder",
        "Percent of cuBLAS for kernels 1 to 4",
        "Paired bars. On the H200 with our judge: kernel 1, "
        f"{M('sgemm.k01.pct_cublas')} percent; kernel 2, {M('sgemm.k02.pct_cublas')}; kernel 3, "
        f"{M('sgemm.k03.pct_cublas')}; kernel 4, {M('sgemm.k04.pct_cublas')} ({M('sgemm.k04.ms'):.3f} ms). "
        "The book's A6000 badges: 1.3, 8.5, 12.8 and 36.5 percent.",
        0,
    )
    y = f.heading("The worklog so far: percent of cuBLAS", "Dark: H200, our judge. Light: A6000, the book's badge")
    data = [
        ("1: naive", M("sgemm.k01.pct_cublas"), 1.3),
        ("2: coalesced", M("sgemm.k02.pct_cublas"), 8.5),
        ("3: shared-memory tiling", M("sgemm.k03.pct_cublas"), 12.8),
        ("4: 1D block-tiling", M("sgemm.k04.pct_cublas"), 36.5),
    ]
    x0, x1, vmax = 16, W - 70, 40
    y += 10
    for t in (0, 10, 20, 30, 40):
        xt = x0 + (x1 - x0) * t / vmax
        f.line(xt, y + 4, xt, y + 4 + len(data) * 64, GRID, 1)
    for name, h, a in data:
        y += 18
        f.text(x0, y, f"kernel {name}", 14, bold=True)
        y += 6
        for v, fill, col in ((h, "#1f4e79", "#1f4e79"), (a, "#c9c9c9", MUTED)):
            wv = (x1 - x0) * v / vmax
            f.rect(x0, y, max(wv, 1.5), 16, fill)
            f.text(x0 + wv + 6, y + 13, f"{v:.1f}%", 14, fill=col, bold=fill != "#c9c9c9")
            y += 19
        y += 2
    y += 16
    for t in (0, 10, 20, 30, 40):
        f.text(x0 + (x1 - x0) * t / vmax, y, f"{t}%", 14, "middle", MUTED)
    f.h = int(y + 14)
    return f.save()


@figure
def f35_tile_loads():
    f = Fig(
        "35-tile-loads",
        "Which elements of the two shared tiles warp 0 of kernel 4 loads",
        "The 64 by 8 slice of A and the 8 by 64 slice of B, 512 floats each, one per thread. Warp 0, threads 0 to "
        "31, loads row 0, columns 0 to 31 of the B slice: 32 consecutive floats, one 128-byte line. In the A slice, "
        "eight floats wide, the same warp loads rows 0 to 3: four 32-byte pieces from four rows of A, each sector "
        "fully used.",
        0,
    )
    y = f.heading("One element per thread per tile", "Warp 0 (threads 0-31) highlighted; first 16 rows of As shown")
    y += 20
    f.text(16, y, "Bs: 8 x 64 (row k0 + r of B)", 14, bold=True)
    y += 8
    grid(f, 16, y, 8, 64, 6.9, 12, lambda r, c: BLUE if (r == 0 and c < 32) else "#ffffff", GREY, 0.4)
    y += 8 * 12 + 22
    f.text(16, y, "warp 0: 32 consecutive floats, one 128-byte line", 14, fill=BLUE)
    y += 30
    f.text(16, y, "As: 64 x 8", 14, bold=True)
    y += 8
    grid(f, 16, y, 16, 8, 24, 12, lambda r, c: ORANGE if r < 4 else "#ffffff", GREY, 0.5)
    f.text(230, y + 24, "warp 0: rows 0-3,", 14, fill=ORANGE)
    f.text(230, y + 44, "8 floats each:", 14, fill=ORANGE)
    f.text(230, y + 64, "four 32-byte sectors", 14, fill=ORANGE)
    f.text(230, y + 84, "from four rows of A", 14, fill=ORANGE)
    y += 16 * 12 + 26
    y = f.para(
        16, y, "Every sector is used whole: no bandwidth wasted, only some request efficiency.", W - 32, fill=MUTED
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f35_issue_slots():
    f = Fig(
        "35-issue-slots",
        "The instructions of one tile's main loop in kernels 3 and 4",
        "Stacked bars of instructions per tile of the main loop as compiled for sm_90. Kernel 3: 100 instructions "
        "of which 32 are FFMA, 32 percent of the issue slots doing arithmetic. Kernel 4: 118 instructions of which "
        "64 are FFMA, 54 percent.",
        0,
    )
    y = f.heading("Issue slots doing arithmetic", "Instructions per tile of the main loop (SASS, sm_90)")
    x0, x1, vmax = 16, W - 16, 120
    y += 16
    for name, ffma, total in (
        ("kernel 3: 100 instructions per 32 FFMA", 32, 100),
        ("kernel 4: 118 instructions per 64 FFMA", 64, 118),
    ):
        y += 18
        f.text(x0, y, name, 14, bold=True)
        y += 8
        wf = (x1 - x0) * ffma / vmax
        wt = (x1 - x0) * total / vmax
        f.rect(x0, y, wf, 30, GREEN)
        f.rect(x0 + wf, y, wt - wf, 30, LGREY, GREY, 0.8)
        f.text(x0 + wf / 2, y + 20, f"FFMA {ffma}", 14, "middle", "#ffffff", bold=True)
        f.text(x0 + wf + (wt - wf) / 2, y + 20, f"other {total - ffma}", 14, "middle", MUTED)
        y += 52
        f.text(x0, y - 8, f"{round(100 * ffma / total)}% of the issue slots are FFMA", 14, fill=GREEN, bold=True)
        y += 12
    y += 10
    y = f.para(
        16,
        y,
        "Other: shared loads (8 LDS and 16 LDS.128 in kernel 4), address arithmetic, barriers, loop control.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 36
@figure
def f36_ladder():
    f = Fig(
        "36-ladder",
        "Kernel 5 on two GPUs, and with a register cap",
        "Bar chart of percent of cuBLAS. On the H200 with our judge: kernel 4, "
        f"{M('sgemm.k04.pct_cublas')} percent ({M('sgemm.k04.ms'):.3f} ms); kernel 5, {M('sgemm.k05.pct_cublas')} "
        f"percent ({M('sgemm.k05.ms'):.3f} ms); kernel 5 with __launch_bounds__(256, 2), 47.9 percent (5.684 ms), "
        "measured in the same session as a run of the shipped kernel at 8.571 ms. The book's "
        "A6000 badges: kernel 4, 36.5 percent; kernel 5, 68.7 percent.",
        0,
    )
    y = f.heading("Percent of cuBLAS SGEMM at 4096³", "H200 with our judge (blue), the book's A6000 badge (grey)")
    y = hbars(
        f,
        y + 4,
        [
            (
                f"H200, kernel 4 ({M('sgemm.k04.ms'):.3f} ms)",
                M("sgemm.k04.pct_cublas"),
                BLUE,
                f"{M('sgemm.k04.pct_cublas'):.1f}%",
            ),
            (
                f"H200, kernel 5 ({M('sgemm.k05.ms'):.3f} ms)",
                M("sgemm.k05.pct_cublas"),
                BLUE,
                f"{M('sgemm.k05.pct_cublas'):.1f}%",
            ),
            ("H200, kernel 5, launch bounds (256, 2)", 47.9, GREEN, "47.9%"),
            ("A6000 badge, kernel 4", 36.5, GREY, "36.5%"),
            ("A6000 badge, kernel 5", 68.7, GREY, "68.7%"),
        ],
        80,
        ticks=[0, 20, 40, 60, 80],
        x1=W - 70,
        tick_fmt=lambda t: f"{t}%",
    )
    y = f.para(
        16,
        y + 10,
        "Capped at 128 registers, kernel 5 fits two blocks per SM and spills 24 bytes per thread: "
        "1.5 times faster on the H200.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f36_one_block():
    f = Fig(
        "36-one-block",
        "Why one block per SM leaves the FMA units idle",
        "Schematic timelines of an SM's FMA units. With one block of 8 warps per SM, all warps load their tile "
        "together, wait at the barrier and compute together, so the FMA units idle during every load phase. With "
        "two blocks per SM, one block's load phase overlaps the other's compute phase and the FMA units stay busy.",
        0,
    )
    y = f.heading("Load, barrier, compute, barrier", "Schematic: what the SM's warps are doing, time to the right")
    y += 26
    f.text(16, y, "One block per SM (kernel 5 as shipped)", 14, bold=True)
    y += 8
    segs = []
    for i in range(3):
        segs += [(i / 3, i / 3 + 0.13, LGREY, "load"), (i / 3 + 0.13, (i + 1) / 3 - 0.01, GREEN, "FMA", "#ffffff")]
    timeline_row(f, y, "A", segs, label_w=36)
    y += 30
    timeline_row(f, y, "FMA", [(i / 3, i / 3 + 0.13, "#ffffff", "idle", RED) for i in range(3)], label_w=36)
    y += 58
    f.text(16, y, "Two blocks per SM (launch bounds 256, 2)", 14, bold=True)
    y += 8
    segs_a, segs_b = [], []
    for i in range(3):
        segs_a += [(i / 3, i / 3 + 0.13, LGREY, "load"), (i / 3 + 0.13, (i + 1) / 3 - 0.01, GREEN, "FMA", "#ffffff")]
        o = 0.15
        segs_b += [
            (i / 3 + o, i / 3 + o + 0.13, LGREY, "load"),
            (i / 3 + o + 0.13, min((i + 1) / 3 + o - 0.01, 1.0), BLUE, "FMA", "#ffffff"),
        ]
    timeline_row(f, y, "A", segs_a, label_w=36)
    timeline_row(f, y + 30, "B", [sg for sg in segs_b if sg[0] < 1.0], label_w=36)
    y += 60
    y += 24
    y = f.para(
        16,
        y,
        "A GPU hides latency by switching warps; when every warp waits for the same loads, there is "
        "nothing to switch to.",
        W - 32,
        fill=MUTED,
    )
    f.h = int(y + 14)
    return f.save()


@figure
def f36_reuse_levels():
    f = Fig(
        "36-reuse-levels",
        "Reuse at the thread and block levels in kernels 4 and 5",
        "Pairs of bars. FMAs per value loaded from shared memory, the thread level: 0.89 in kernel 4, 4 in kernel "
        "5. FMAs per float brought into the SM, the block level: 32 in kernel 4's 64 by 64 tile, 64 in kernel 5's "
        "128 by 128 tile. Bytes brought in from L2 or HBM for the whole product at 4096 cubed: 8.6 GB against 4.3 "
        "GB.",
        0,
    )
    y = f.heading("Kernel 4 (grey) against kernel 5 (green)", "Every measure says twice as fast; the H200 disagreed")
    for sub, rows, vmax, ticks in (
        (
            "Thread: FMAs per shared-memory load",
            [("kernel 4: 8 x 1 strip", 0.89, GREY, "0.89"), ("kernel 5: 8 x 8 tile", 4, GREEN, "4")],
            5,
            [0, 1, 2, 3, 4, 5],
        ),
        (
            "Block: FMAs per float loaded",
            [("kernel 4: 64 x 64 tile", 32, GREY, "32"), ("kernel 5: 128 x 128 tile", 64, GREEN, "64")],
            80,
            [0, 20, 40, 60, 80],
        ),
        (
            "Bytes from L2 or HBM, GB",
            [("kernel 4", 8.6, GREY, "8.6"), ("kernel 5", 4.3, GREEN, "4.3")],
            10,
            [0, 2, 4, 6, 8, 10],
        ),
    ):
        y += 24
        f.text(16, y, sub, 14, bold=True)
        y = hbars(f, y + 4, rows, vmax, ticks=ticks, x1=W - 50, bar_h=16, gap=6)
    f.h = int(y + 10)
    return f.save()


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for name, fn in FIGURES.items():
        if not wanted or any(w in name.replace("_", "-") or w in name for w in wanted):
            print(fn())

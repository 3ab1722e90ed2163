"""Figures of capsules 19-36 (issue 44). Run: python figures_19_36.py [name ...]; writes ../NN-name.svg.

Every number drawn here is stated in the capsule the figure belongs to (or derived from those numbers by the
arithmetic the capsule shows); nothing is measured or invented here.
"""

from __future__ import annotations

import sys

from svglib_19_36 import (BLUE, GREEN, GREY, GRID, INK, LBLUE, LGREEN, LGREY, LORANGE, LPURPLE, LRED, MUTED, ORANGE,
                          PURPLE, RED, W, Fig, hbars, text_width, wrap)

FIGURES = {}


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
    f = Fig("19-aos-soa", "Reading one field: array of structures against structure of arrays",
            "Three rows of 32 floats of memory, grouped in four 32-byte sectors. Top, an array of 16-byte Particle "
            "structs read for its x field: only every fourth float is used, so the warp's 32 lanes need 16 sectors "
            "and use 25 percent of the bytes. Middle, the x values stored as their own array: 32 consecutive floats, "
            "4 sectors, every byte used. Bottom, the array of structs read whole with one float4 per lane: 512 "
            "contiguous bytes per warp, all of them used.", 0)
    y = f.heading("Which bytes does one warp instruction need?",
                  "Each cell is a float; each group of 8 is a 32-byte sector. Filled cells are the bytes lanes use.")
    cw, x0 = 13, 26
    panels = [
        ("AoS, p[i].x: a stride of 4 floats", lambda i: BLUE if i % 4 == 0 else "#ffffff",
         lambda i: "xyzw"[i % 4], lambda i: "#ffffff" if i % 4 == 0 else MUTED,
         "Lanes 0-7 shown. The warp touches 16 sectors, 25% useful, and the store pays the same again."),
        ("SoA, x[i]: consecutive floats", lambda i: BLUE, None, None,
         "All 32 lanes. The warp touches 4 sectors, 100% useful."),
        ("AoS read whole: one float4 per lane", lambda i: GREEN, lambda i: "xyzw"[i % 4], lambda i: "#ffffff",
         "Lanes 0-7 shown. 512 contiguous bytes per warp, 16 sectors, 100% useful."),
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
    f = Fig("19-vector-loads", "The same 512 bytes loaded with float and with float4",
            "A strip of 16 sectors, 512 bytes. With float loads a warp needs four load instructions, each covering "
            "4 sectors; with float4 one instruction covers all 16. Both use every byte. The table compares load "
            "instructions per warp (4 against 1), sectors (16 and 16), bytes each lane has in flight per instruction "
            "(4 against 16) and the alignment the start address needs (4 bytes against 16).", 0)
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
    rows = [("", "float", "float4"), ("load instructions per warp", "4", "1"), ("sectors touched", "16", "16"),
            ("bytes used", "100%", "100%"), ("bytes per lane per load", "4", "16"),
            ("start must be aligned to", "4 B", "16 B")]
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
    f = Fig("19-naive-transpose", "The naive transpose reads a row and writes a column",
            "Left, the input matrix with one warp's 32 consecutive elements of a row highlighted: the load touches 4 "
            "sectors. Right, the output matrix, where the same 32 elements land in a column, M floats apart: the "
            "store touches 32 sectors. Below, the sectors per request the capsule predicts: naive load 4, naive "
            "store 32, tiled load 4 and tiled store 4.", 0)
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
    y = hbars(f, y + 2, [("naive kernel, load of in", 4, BLUE, "4"), ("naive kernel, store of out", 32, ORANGE, "32"),
                         ("tiled kernel, load", 4, GREEN, "4"), ("tiled kernel, store", 4, GREEN, "4")],
              32, x0=16, x1=420, ticks=[0, 8, 16, 24, 32], bar_h=16, gap=12)
    f.h = int(y + 8)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 20
@figure
def f20_grid_sizing():
    f = Fig("20-grid-sizing", "Two ways to cover an array: one thread per element, or a grid-stride loop",
            "Top, n equal to 1,000,000 elements covered by 3,907 blocks of 256 threads; the last block, block 3906, "
            "starts at element 999,936, so 64 of its threads have an element and 192 fail the test i < n. Bottom, a "
            "grid-stride loop: a fixed grid of G threads walks the array in passes, thread t taking elements t, t + G, "
            "t + 2G and so on, with the last pass partly empty.", 0)
    y = f.heading("Covering n = 1,000,000 elements", "blocks = cdiv(n, 256) = 3,907, threads = 1,000,192")
    y += 16
    xs = [16, 92, 168, 244, 340]
    labels = ["block 0", "block 1", "...", "block 3905", "block 3906"]
    widths = [72, 72, 72, 92, 124]
    for x, lab, w in zip(xs, labels, widths):
        if lab == "...":
            f.text(x + w / 2, y + 22, lab, 14, "middle", MUTED)
        else:
            f.box(x, y, w, 32, [lab], LBLUE if lab != "block 3906" else LORANGE, BLUE if lab != "block 3906" else ORANGE)
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
    y = f.para(16, y, "Thread t takes elements t, t + G, t + 2G, ... (dark marks): any n, any G, and each pass is still "
               "coalesced.", W - 32, fill=MUTED)
    f.h = int(y + 14)
    return f.save()


@figure
def f20_partial_warp():
    f = Fig("20-partial-warp", "A block of 100 threads occupies four full warps",
            "Four rows of 32 lanes. Warps 0, 1 and 2 are full; warp 3 has 4 active lanes and 28 idle ones. The "
            "block pays for 128 lanes and uses 100: 22 percent of its issue slots do nothing.", 0)
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
    f = Fig("20-cluster", "Two blocks of a cluster reading each other's shared memory",
            "A GPC holding two SMs. The block of cluster rank 0 runs on one, the block of rank 1 on the other; each "
            "has its own shared variable partial. After a first cluster.sync, rank 0 maps the partner's partial with "
            "map_shared_rank and reads it over the SM-to-SM network, adds its own, and writes the result; a second "
            "cluster.sync keeps block 1, and its shared memory, alive until the read is done.", 0)
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
    steps = ["1. each block writes its partial", "2. cluster.sync(): both have written",
             "3. rank 0: other = map_shared_rank(&partial, 1); out = partial + *other",
             "4. cluster.sync(): block 1 stays alive until rank 0 has read"]
    for s in steps:
        y = f.para(16, y, s, W - 32) + 22
    y = f.para(16, y, "Up to 8 blocks per cluster portably, 16 with the non-portable opt-in.", W - 32, fill=MUTED)
    f.h = int(y + 14)
    return f.save()


# ---------------------------------------------------------------------------------------------------- 21
@figure
def f21_reduction_indexing():
    f = Fig("21-reduction-indexing", "Which lanes work in two indexings of a block tree reduction",
            "Two grids of 8 warps by 32 lanes for a 256-thread block. Top, the interleaved version at step s = 1, "
            "if tid % 2 == 0: every warp has its even lanes active, so all 8 warps issue the step with 16 lanes "
            "each. Bottom, the sequential version at step s = 128, if tid < 128: warps 0 to 3 are fully active and "
            "warps 4 to 7 have no active lane and skip the step. Both steps do 128 additions.", 0)
    y = f.heading("128 additions, two ways to hand them out", "256-thread block: 8 warps of 32 lanes; blue = active")
    panels = [("Interleaved, s = 1: if (tid % 2 == 0)", lambda w, i: i % 2 == 0,
               "8 warps issue the step, each with 16 of 32 lanes"),
              ("Sequential, s = 128: if (tid < 128)", lambda w, i: w < 4,
               "4 warps issue it with all 32 lanes; warps 4-7 skip it")]
    for title, active, note in panels:
        y += 26
        f.text(16, y, title, 14, bold=True, mono=False)
        y += 8
        for w in range(8):
            f.text(16, y + 12, f"w{w}", 14, fill=MUTED)
            cells(f, 52, y, 32, 12, 13, lambda i, w=w: BLUE if active(w, i) else LGREY, strokes="#ffffff")
            y += 15
        y += 18
        f.text(16, y, note, 14, fill=MUTED)
    y += 28
    y = f.para(16, y, "The version in between, i = 2 * s * tid, makes the active lanes contiguous but puts "
               "neighbouring lanes 2s words apart: a 2-way bank conflict at s = 1.", W - 32, fill=MUTED)
    f.h = int(y + 14)
    return f.save()


@figure
def f21_predication():
    f = Fig("21-predication", "A leaky ReLU compiled to predicated instructions, lane by lane",
            "A table for eight example lanes with inputs 2, -1, 0.5, -3, 4, -0.5, 1.5 and -2. Every lane executes "
            "FMUL to get 0.1 x, FSETP to set predicate P0 = x > 0, and FSEL to pick x where P0 is true and 0.1 x where "
            "it is false. No lane is masked off, there is no jump and nothing to reconverge.", 0)
    y = f.heading("y = (x > 0) ? x : 0.1f * x", "Three instructions, all 32 lanes, no branch (8 lanes shown)")
    xs = [2, -1, 0.5, -3, 4, -0.5, 1.5, -2]

    def g(v):
        s = f"{v:g}"
        return s.replace("-", "\u2212")

    rows = [("x", [g(v) for v in xs], INK),
            ("FMUL 0.1x", [g(round(0.1 * v, 3)) for v in xs], MUTED),
            ("FSETP P0", ["T" if v > 0 else "F" for v in xs], MUTED),
            ("FSEL y", [g(v if v > 0 else round(0.1 * v, 3)) for v in xs], GREEN)]
    cx0, cw = 120, 43
    y += 12
    for lane in range(8):
        f.text(cx0 + lane * cw + cw / 2, y + 12, f"lane {lane}" if lane == 0 else str(lane), 14, "middle", MUTED)
    y += 22
    for name, vals, col in rows:
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
    y = f.para(16, y, "Every lane runs every instruction; the predicate only chooses which result is kept. "
               "Cheaper than a divergent branch for a few instructions, dearer for a long body.", W - 32, fill=MUTED)
    f.h = int(y + 14)
    return f.save()


@figure
def f21_ballot_compaction():
    f = Fig("21-ballot-compaction", "Warp-level stream compaction with a ballot",
            "Sixteen lanes of a warp with a predicate that is true in lanes 0, 2, 3, 6, 8, 9, 10, 13 and 15. "
            "__ballot_sync gathers the predicates into one 32-bit mask that every lane receives. Each true lane "
            "counts the set bits below its own lane number with __popc, which gives it a unique slot, 0 to 8, in a "
            "packed output, with no shared memory and no atomics.", 0)
    y = f.heading("Packing the lanes where p is true", "First 16 lanes of the warp shown")
    p = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1]
    rank, r = [], 0
    for v in p:
        rank.append(r if v else None)
        r += v
    x0, cw = 80, 24
    y += 10
    rows = [("lane", [str(i) for i in range(16)], None), ("p", [str(v) for v in p], lambda i: LBLUE if p[i] else "#ffffff"),
            ("rank", ["" if v is None else str(v) for v in rank], lambda i: LGREEN if p[i] else "#ffffff")]
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


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for name, fn in FIGURES.items():
        if not wanted or any(w in name.replace("_", "-") or w in name for w in wanted):
            print(fn())

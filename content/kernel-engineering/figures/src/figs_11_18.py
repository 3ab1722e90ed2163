"""Figures for capsules 11-18 (issue 44). Every number is one the capsule's text states or derives.

Run: python content/kernel-engineering/figures/src/figs_11_18.py
"""

import math

from kit_01_18 import (
    BLUE,
    BLUE_DARK,
    BLUE_LIGHT,
    BLUE_MID,
    FILL_BLUE,
    FILL_GREEN,
    FILL_GREY,
    FILL_ORANGE,
    FILL_PURPLE,
    FILL_RED,
    FILL_YELLOW,
    GREEN,
    GREY,
    GRID,
    ORANGE,
    PURPLE,
    RED,
    Fig,
    Scale,
    haxis,
    hbars,
    text_width,
)


def plot_frame(f, x, y, xticks, yticks, xfmt=str, yfmt=str):
    for t in xticks:
        f.line(x(t), y.p1, x(t), y.p0, stroke=GRID, sw=1)
        f.text(x(t), y.p0 + 20, xfmt(t), anchor="middle")
    for t in yticks:
        f.line(x.p0, y(t), x.p1, y(t), stroke=GRID, sw=1)
        f.text(x.p0 - 6, y(t) + 5, yfmt(t), anchor="end")
    f.rect(x.p0, y.p1, x.p1 - x.p0, y.p0 - y.p1, fill="none", stroke=GREY, sw=1, rx=0)


# 11 -------------------------------------------------------------------------------------------------------
def f11_bank_patterns():
    f = Fig(
        "11-bank-patterns.svg",
        400,
        "Four warp access patterns on the 32 banks of shared memory",
        "Each row shows the 32 banks of shared memory, 4 bytes wide, and which of them one warp instruction "
        "touches. Consecutive floats, one per lane: 32 banks, one pass. A broadcast, every lane reading the "
        "same word: one bank, one pass. A column of a 32 by 32 float tile: all 32 words in one bank, a 32-way "
        "conflict and 32 passes. The same column with rows padded to 33 floats: 32 banks, one pass.",
    )
    f.heading("32 banks × 4 bytes, one warp load")
    cw = 13.5
    rows = [
        ("Consecutive floats: 32 banks, 1 pass", [1] * 32, GREEN),
        ("Broadcast of one word: 1 pass", [1] + [0] * 31, GREEN),
        ("Column of a 32 × 32 tile: 32 passes", [32] + [0] * 31, RED),
        ("Rows padded to 33 floats: 1 pass", [1] * 32, GREEN),
    ]
    y = 56
    for label, hits, colour in rows:
        f.text(16, y, label, bold=True, fill=colour)
        for b in range(32):
            x = 16 + b * cw
            fill = colour if hits[b] else "#ffffff"
            f.rect(x, y + 8, cw - 1.5, 26, fill=fill, stroke=colour if hits[b] else GRID, sw=1, rx=1)
        if hits[0] == 32:
            f.text(16 + cw + 6, y + 27, "32 words in bank 0", fill=RED)
        y += 76
    f.note(364, "bank = (address / 4) mod 32; one word per bank")
    f.note(384, "per pass, any number of lanes on the same word.")
    return f.save()


def f11_blocks_per_sm():
    f = Fig(
        "11-blocks-per-sm.svg",
        380,
        "Resident blocks per SM against shared memory per block",
        "A step chart of floor of 228 over s plus 1, the blocks per SM that shared memory allows when each "
        "block uses s KB, for s from 8 to 227 KB. Marked: 48 KB, the limit without opt-in, 4 blocks; 64 KB, 3 "
        "blocks; 192 KB, 1 block. A dashed line at 227 KB marks the most one block can opt in to.",
    )
    f.heading("Blocks per SM = ⌊228 / (s + 1)⌋")
    x = Scale(0, 228, 60, 456)
    y = Scale(0, 28, 300, 50)
    plot_frame(f, x, y, [0, 48, 96, 144, 192], [0, 4, 8, 12, 16, 20, 24, 28])
    pts = []
    for s in range(7, 228):
        b = 228 // (s + 1)
        pts.append((x(s), y(b)))
        pts.append((x(s + 1), y(b)))
    f.path("M" + " L".join(f"{px:.1f},{py:.1f}" for px, py in pts), stroke=BLUE, sw=2.2)
    f.line(x(48), 50, x(48), 300, stroke=ORANGE, sw=1.8, dash="6 4")
    f.line(x(227), 50, x(227), 300, stroke=RED, sw=1.8, dash="6 4")
    for s, label, anchor, dx in (
        (48, "48 KB: 4", "start", 8),
        (64, "64 KB: 3", "start", 8),
        (192, "192 KB: 1", "end", -8),
    ):
        b = 228 // (s + 1)
        f.circle(x(s), y(b), 5.5, fill=RED)
        f.text(x(s) + dx, y(b) - (30 if s == 48 else 10), label, bold=True, anchor=anchor)
    f.text(x(48) + 6, 70, "no opt-in", fill=ORANGE, bold=True)
    f.text(x(227) - 6, 70, "227 max", anchor="end", fill=RED, bold=True)
    f.text(258, 342, "shared memory per block s (KB)", anchor="middle")
    f.text(22, 175, "blocks", anchor="middle", rotate=-90)
    f.note(370, "Each block also costs 1 KB reserved by the system.")
    return f.save()


def f11_cluster():
    f = Fig(
        "11-cluster.svg",
        380,
        "A cluster of four blocks sharing shared memory across SMs",
        "Four SMs of one GPC, each running one block of a thread block cluster with its own shared memory. An "
        "SM-to-SM network inside the GPC lets each block read, write and perform atomics on the others' shared "
        "memory without a round trip through the L2. Below, the TMA multicasts one tile from global memory, "
        "through the L2, into the shared memory of all four blocks at once.",
    )
    f.heading("One cluster of 4 blocks in one GPC")
    f.rect(16, 40, 448, 190, fill=FILL_GREY, stroke=GREY, sw=1.2)
    f.text(26, 60, "GPC", bold=True, fill=GREY)
    for i in range(4):
        x = 28 + i * 108
        f.rect(x, 70, 100, 96, fill="#ffffff", stroke=BLUE, sw=1.5)
        f.text(x + 50, 92, f"SM {i}", anchor="middle", bold=True, fill=BLUE)
        f.text(x + 50, 112, f"block {i}", anchor="middle")
        f.box(x + 8, 122, 84, 36, "shared", fill=FILL_PURPLE, stroke=PURPLE)
    f.rect(28, 182, 424, 34, fill=FILL_PURPLE, stroke=PURPLE, sw=1.5)
    f.text(240, 204, "SM-to-SM network: distributed shared memory", anchor="middle")
    for i in range(4):
        f.line(28 + i * 108 + 50, 158, 28 + i * 108 + 50, 182, stroke=PURPLE, sw=2)
    f.box(16, 288, 448, 38, "L2 cache: one tile read once", fill=FILL_ORANGE, stroke=ORANGE)
    for i in range(4):
        f.arrow(240, 286, 28 + i * 108 + 50, 234, stroke=ORANGE, sw=1.8)
    f.text(250, 262, "TMA multicast", fill=ORANGE, bold=True)
    f.note(350, "Up to 8 blocks (16 with an opt-in); none may exit")
    f.note(370, "while another can still read its shared memory.")
    return f.save()


# 12 -------------------------------------------------------------------------------------------------------
def f12_l2_sizes():
    f = Fig(
        "12-l2-sizes.svg",
        300,
        "L2 cache size across four generations",
        "Horizontal bars of L2 capacity: V100 6 MB, A100 40 MB, H100 SXM 50 MB, and 60 MB on this platform's "
        "H200 as the device reports it.",
    )
    f.heading("L2 per GPU (MB)")
    s = Scale(0, 64, 16, 420)
    haxis(f, s, 46, 240, [0, 20, 40, 60])
    hbars(
        f,
        [
            ("V100 (Volta)", 6, BLUE_LIGHT, "6"),
            ("A100 (Ampere)", 40, BLUE_MID, "40"),
            ("H100 SXM (Hopper)", 50, BLUE, "50"),
            ("H200, as our device reports it", 60, BLUE_DARK, "60"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=44,
    )
    f.note(284, "Still far smaller than a GEMM's operands.")
    return f.save()


def f12_partitions():
    f = Fig(
        "12-partitions.svg",
        400,
        "The L2 as two partitions of slices behind a crossbar",
        "Schematic: SMs in the GPCs on each side reach the L2 through a crossbar. The L2 is made of slices "
        "attached to the memory controllers, grouped into two partitions that hardware keeps coherent. An "
        "address is mapped to a slice by a hash of its bits, so consecutive 128-byte lines, shown as a strip of "
        "coloured squares, land on different slices and memory channels.",
    )
    f.heading("Slices, partitions, crossbar")
    f.box(16, 42, 216, 40, "GPCs (SMs) on side 0", fill=FILL_BLUE, stroke=BLUE)
    f.box(248, 42, 216, 40, "GPCs (SMs) on side 1", fill=FILL_BLUE, stroke=BLUE)
    f.box(16, 100, 448, 34, "crossbar", fill=FILL_GREY, stroke=GREY)
    for x in (124, 356):
        f.line(x, 82, x, 100, stroke=GREY, sw=2)
    colours = [BLUE_MID, GREEN, ORANGE, PURPLE, "#48c9b0", RED, "#f4d03f", BLUE_DARK]
    for p in range(2):
        x0 = 16 + p * 232
        f.rect(x0, 154, 216, 92, fill=FILL_YELLOW, stroke=ORANGE, sw=1.5)
        f.text(x0 + 108, 174, f"L2 partition {p}", anchor="middle", bold=True)
        for k in range(4):
            c = colours[p * 4 + k]
            f.rect(x0 + 10 + k * 50, 186, 44, 46, fill=c, stroke=c, sw=1, rx=2)
            f.text(x0 + 32 + k * 50, 215, f"s{p * 4 + k}", anchor="middle", fill="#ffffff", bold=True)
        f.line(x0 + 108, 134, x0 + 108, 154, stroke=GREY, sw=2)
        f.box(x0, 262, 216, 34, "memory controllers, HBM", fill=FILL_ORANGE, stroke=ORANGE)
        f.line(x0 + 108, 246, x0 + 108, 262, stroke=GREY, sw=2)
    f.text(240, 206, "⇄", anchor="middle", bold=True)
    f.text(16, 330, "Consecutive lines, hashed to slices:", bold=True)
    for i in range(16):
        c = colours[(i * 5 + i // 3) % 8]
        f.rect(16 + i * 28, 340, 26, 22, fill=c, stroke=c, sw=1, rx=2)
    f.note(388, "A hash of the address picks the slice, not the kernel.")
    return f.save()


def f12_gemm_traffic():
    f = Fig(
        "12-gemm-traffic.svg",
        300,
        "HBM time of a BF16 GEMM of side 8192 with and without L2 reuse",
        "Horizontal bars in milliseconds for a BF16 GEMM of side 8192 with 128 by 128 tiles on the H200. "
        "Without any reuse, the 4,096 tiles read 16 GB of panels from HBM, about 3.9 ms at 4.2 TB/s. With "
        "grouped waves, 31 waves of 46 MB read about 1.4 GB, about a third of a millisecond. A dashed line "
        "marks the 1.41 ms of tensor-core time.",
    )
    f.heading("GEMM 8192³, BF16: HBM time (ms)")
    s = Scale(0, 4.4, 16, 420)
    haxis(f, s, 46, 196, [0, 1, 2, 3, 4])
    hbars(
        f,
        [
            ("No reuse: 4,096 tiles × 4 MB = 16 GB", 3.9, RED, "3.9"),
            ("Grouped waves: 31 × 46 MB ≈ 1.4 GB", 0.33, GREEN, "≈ 0.33"),
        ],
        top=70,
        scale=s,
        bar_h=24,
        gap=60,
    )
    for top in (76, 136):
        f.line(s(1.41), top - 2, s(1.41), top + 26, stroke=BLUE, sw=2.5, dash="5 3")
    f.line(s(1.41), 170, s(1.41), 196, stroke=BLUE, sw=2.5, dash="5 3")
    f.text(16, 244, "Dashed: 1.41 ms of tensor-core arithmetic.", bold=True, fill=BLUE)
    f.note(266, "Without reuse the GEMM would be memory-bound;")
    f.note(288, "grouped, its traffic hides under the arithmetic.")
    return f.save()


# 13 -------------------------------------------------------------------------------------------------------
def f13_package():
    f = Fig(
        "13-package.svg",
        360,
        "Cross-section of a GPU package with HBM stacks",
        "Schematic cross-section, not to scale: the GPU die sits in the middle of a silicon interposer with an "
        "HBM stack on each side. Each stack is several DRAM dies on a base logic die, joined by through-silicon "
        "vias, with a 1,024-bit interface that the interposer's fine wiring carries a few millimetres to the "
        "GPU. The interposer sits on the package substrate, which is mounted on the board.",
    )
    f.heading("GPU package, side view (schematic)")
    f.rect(16, 268, 448, 26, fill=FILL_GREY, stroke=GREY)
    f.text(240, 286, "package substrate", anchor="middle")
    f.rect(36, 236, 408, 30, fill=FILL_GREEN, stroke=GREEN)
    f.text(240, 256, "silicon interposer", anchor="middle", fill=GREEN, bold=True)
    f.box(170, 130, 140, 104, ["GPU die", "SMs, L2"], fill=FILL_BLUE, stroke=BLUE, bold_first=True)
    for x0 in (52, 330):
        for k in range(5):
            fill = FILL_ORANGE if k < 4 else "#f5cba7"
            f.rect(x0, 88 + k * 29 if k < 4 else 204, 98, 26 if k < 4 else 30, fill=fill, stroke=ORANGE, sw=1.2, rx=2)
        for dx in (18, 49, 80):
            f.line(x0 + dx, 90, x0 + dx, 232, stroke=GREY, sw=1.5)
        f.text(x0 + 49, 80, "HBM stack", anchor="middle", bold=True, fill=ORANGE)
    f.path("M150,240 L170,240", stroke=GREEN, sw=3)
    f.path("M310,240 L330,240", stroke=GREEN, sw=3)
    f.note(316, "4 DRAM dies on a base die, vias through them;")
    f.note(336, "1,024 bits per stack, carried a few mm.")
    f.note(356, "H100 SXM: 5 stacks, H200: 6.")
    f.h = 364
    return f.save()


def f13_links():
    f = Fig(
        "13-links.svg",
        320,
        "Bandwidth of HBM, NVLink and PCIe, one direction, log scale",
        "Horizontal bars on a log scale of GB/s, one direction, for an H200 SXM: HBM3e 4,800; NVLink 4 about "
        "450, about one eleventh; PCIe Gen5 x16 about 64, about one seventy-fifth; and a pinned host-to-device "
        "copy over PCIe measuring around 50 to 55.",
    )
    f.heading("GB/s one way, log scale (H200 SXM)")
    s = Scale(10, 10000, 16, 400, log=True)
    haxis(f, s, 46, 246, [10, 100, 1000, 10000], label_fmt=lambda t: f"{t:,}")
    hbars(
        f,
        [
            ("HBM3e: the reference, 1", 4800, BLUE_DARK, "4,800"),
            ("NVLink 4, to other GPUs: about 1/11", 450, GREEN, "450"),
            ("PCIe Gen5 x16, to the CPU: about 1/75", 64, ORANGE, "64"),
            ("Pinned copy over PCIe, measured", 52.5, ORANGE, "50-55"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=44,
    )
    f.note(290, "Datasheets add both directions; a copy gets one.")
    f.note(312, "Anything that crosses PCIe per step is slow.")
    return f.save()


def f13_decode_kv():
    f = Fig(
        "13-decode-kv.svg",
        380,
        "Decode step time split into weights and KV cache",
        "Stacked horizontal bars of the lower bound on one decode step from HBM traffic at 4.2 TB/s, for a "
        "Llama-3-8B-shaped model: the weights take 3.8 ms in every case and the KV cache the rest. Batch 1, "
        "context 2,048: 3.9 ms, 258 tokens per second, cache 2 percent of bytes. Batch 32, context 2,048: 5.9 "
        "ms, 5,466 tokens per second, 35 percent. Batch 32, context 8,192: 12.0 ms, 2,669 tokens per second, "
        "68 percent. Batch 128, context 8,192: 36.5 ms, 3,504 tokens per second, 90 percent.",
    )
    f.heading("One decode step from HBM traffic (ms)")
    f.rect(16, 42, 14, 14, fill=BLUE, stroke=BLUE, rx=2)
    f.text(36, 54, "weights, 16 GB")
    f.rect(176, 42, 14, 14, fill=ORANGE, stroke=ORANGE, rx=2)
    f.text(196, 54, "KV cache")
    s = Scale(0, 40, 16, 420)
    haxis(f, s, 66, 304, [0, 10, 20, 30, 40])
    w = 16e9 / 4.2e12 * 1e3
    y = 86
    for label, t, tps in (
        ("Batch 1, context 2,048", 3.9, "258"),
        ("Batch 32, context 2,048", 5.9, "5,466"),
        ("Batch 32, context 8,192", 12.0, "2,669"),
        ("Batch 128, context 8,192", 36.5, "3,504"),
    ):
        f.text(16, y, f"{label}: {tps} tok/s")
        f.rect(16, y + 6, s(w) - 16, 20, fill=BLUE, stroke=BLUE, sw=1, rx=2)
        f.rect(s(w), y + 6, s(t) - s(w), 20, fill=ORANGE, stroke=ORANGE, sw=1, rx=2)
        vt = f"{t:.1f} ms"
        if s(t) + 6 + text_width(vt, 15, True) < 476:
            f.text(s(t) + 6, y + 22, vt, bold=True)
        else:
            f.text(s(t) - 6, y + 22, vt, bold=True, anchor="end", fill="#ffffff")
        y += 52
    f.note(346, "KV share of bytes: 2%, 35%, 68%, 90%.")
    f.note(368, "Batching pays until the cache takes over.")
    return f.save()


# 14 -------------------------------------------------------------------------------------------------------
def f14_wave_efficiency():
    f = Fig(
        "14-wave-efficiency.svg",
        370,
        "Wave efficiency against the number of tiles on 132 SMs",
        "A sawtooth line of wave efficiency, B over 132 divided by its ceiling, for B from 1 to 540 equal blocks "
        "at one block per SM on 132 SMs. It climbs to 100 percent at each multiple of 132 and drops just after: "
        "121 tiles give 92 percent, 144 tiles 55 percent, 256 tiles 97 percent. Large grids such as 1,024 tiles, "
        "97 percent, sit on the flat part.",
    )
    f.heading("η = (B / 132) / ⌈B / 132⌉")
    x = Scale(0, 540, 60, 456)
    y = Scale(0, 100, 300, 50)
    plot_frame(f, x, y, [0, 132, 264, 396, 528], [0, 25, 50, 75, 100], yfmt=lambda t: f"{t}%")
    pts = []
    for b in range(1, 541):
        eta = (b / 132) / math.ceil(b / 132) * 100
        pts.append(f"{x(b):.1f},{y(eta):.1f}")
    f.path("M" + " L".join(pts), stroke=BLUE, sw=2)
    for b, lx, ly, label in (
        (121, 150, 38, "121 tiles: 92%"),
        (144, 150, 24, "144 tiles: 55%"),
        (256, 284, 52, "256 tiles: 97%"),
    ):
        eta = (b / 132) / math.ceil(b / 132) * 100
        f.line(x(b), y(eta), x(lx) - 3, y(ly) - 5, stroke=GREY, sw=1)
        f.circle(x(b), y(eta), 5.5, fill=RED)
        f.text(x(lx), y(ly), label, bold=True)
    f.text(258, 342, "blocks B, one per SM", anchor="middle")
    f.note(364, "Just past a multiple of 132, most SMs wait.")
    return f.save()


def f14_cluster_fit():
    f = Fig(
        "14-cluster-fit.svg",
        360,
        "Clusters of four on an assumed layout of 132 SMs",
        "Eight rows of squares stand for the GPCs of one assumed 132-SM layout: six GPCs of 16 SMs and two of "
        "18. Clusters of 4 blocks, one block per SM, are outlined in groups of four: four per GPC, 32 in all, "
        "keeping 128 SMs busy. The last two SMs of each 18-SM GPC, four SMs in all, cannot hold a whole cluster "
        "and stay idle.",
    )
    f.heading("Clusters of 4: 128 of 132 SMs busy")
    cw, ch = 24, 24
    y = 48
    colours = [FILL_BLUE, FILL_GREEN]
    for g in range(8):
        n = 18 if g >= 6 else 16
        for k in range(n):
            x = 16 + k * cw
            if k < 16:
                c = colours[(k // 4) % 2]
                f.rect(x, y, cw - 2, ch, fill=c, stroke=BLUE if c == FILL_BLUE else GREEN, sw=1, rx=2)
            else:
                f.rect(x, y, cw - 2, ch, fill=FILL_RED, stroke=RED, sw=1.5, rx=2)
        for q in range(4):
            f.rect(16 + q * 4 * cw - 1, y - 1, 4 * cw, ch + 2, fill="none", stroke=GREY, sw=1.5, rx=3)
        y += ch + 6
    f.note(y + 20, "6 GPCs of 16 SMs and 2 of 18 (one layout that adds")
    f.note(y + 40, "up; the real one is not published). Red: 4 idle SMs.")
    f.note(y + 60, "Sizes 1 and 2 keep all 132 busy.")
    f.h = int(y + 72)
    return f.save()


# 15 -------------------------------------------------------------------------------------------------------
def f15_ridges():
    f = Fig(
        "15-ridges.svg",
        380,
        "Ridge points of four chips, and of the narrow formats",
        "Horizontal bars of ridge points in FLOP per byte, dense peak over datasheet bandwidth: A100 BF16 about "
        "156, H100 BF16 about 295, H200 BF16 about 206, B200 BF16 about 281; H100 with FP8 about 590; B200 "
        "with FP4 about 1,100.",
    )
    f.heading("Ridge point, FLOP per byte (datasheet)")
    s = Scale(0, 1200, 16, 400)
    haxis(f, s, 46, 324, [0, 400, 800, 1200], label_fmt=lambda t: f"{t:,}")
    hbars(
        f,
        [
            ("A100, BF16: 312 / 2.0", 156, BLUE_LIGHT, "156"),
            ("H100, BF16: 989 / 3.35", 295, BLUE, "295"),
            ("H200, BF16: 989 / 4.8", 206, BLUE_MID, "206"),
            ("B200, BF16: 2,250 / 8", 281, BLUE_DARK, "281"),
            ("H100, FP8", 590, ORANGE, "590"),
            ("B200, FP4", 1100, RED, "≈ 1,100"),
        ],
        top=66,
        scale=s,
        bar_h=18,
        gap=44,
    )
    f.note(366, "More bandwidth lowers the ridge; arithmetic raises it.")
    return f.save()


def f15_paths():
    f = Fig(
        "15-paths.svg",
        380,
        "How each generation feeds its tensor cores",
        "A table of three columns, Ampere sm_80, Hopper sm_90a and Blackwell sm_100a. Copy from global to shared "
        "memory: cp.async, then the TMA, then the TMA. The MMA is issued by one warp with mma.sync, by a "
        "warpgroup of four warps with wgmma, by one thread with tcgen05. Operands come from registers, from "
        "shared memory through a descriptor, from shared memory. Accumulators live in registers, in registers, "
        "and in tensor memory.",
    )
    f.heading("Three generations, three data paths")
    cols = [
        ("Ampere", "sm_80", FILL_BLUE, BLUE),
        ("Hopper", "sm_90a", FILL_GREEN, GREEN),
        ("Blackwell", "sm_100a", FILL_PURPLE, PURPLE),
    ]
    cw, x0 = 146, 16
    for i, (name, arch, fill, stroke) in enumerate(cols):
        f.box(x0 + i * (cw + 5), 40, cw, 46, [name, arch], fill=fill, stroke=stroke, bold_first=True)
    rows = [
        ("Copy, global to shared", ["cp.async", "TMA", "TMA"]),
        ("MMA issued by", ["one warp", "4 warps", "one thread"]),
        ("Instruction", ["mma.sync", "wgmma", "tcgen05"]),
        ("Operands from", ["registers", "shared (desc.)", "shared memory"]),
        ("Accumulators in", ["registers", "registers", "tensor memory"]),
    ]
    y = 110
    for label, cells in rows:
        f.text(16, y, label, bold=True, fill=GREY)
        for i, c in enumerate(cells):
            fill, stroke = cols[i][2], cols[i][3]
            f.box(x0 + i * (cw + 5), y + 6, cw, 28, c, fill="#ffffff", stroke=stroke, sw=1.2)
        y += 54
    return f.save()


def f15_measured():
    f = Fig(
        "15-measured.svg",
        320,
        "What the judge measures on the H200 against the datasheet",
        "Bars of measured throughput as a percentage of the H200's datasheet peak: cuBLAS HGEMM at 4096 cubed, "
        "608 of 989 TFLOP/s, about 61 percent; HGEMM at 8192 cubed, about 770, 78 percent; BF16 GEMM at 8192 "
        "cubed, about 790, 80 percent; a device-to-device copy, 4.1 to 4.3 of 4.8 TB/s, 85 to 90 percent.",
    )
    f.heading("Measured as % of datasheet, our H200")
    p = Scale(0, 100, 16, 400)
    haxis(f, p, 46, 256, [0, 25, 50, 75, 100], label_fmt=lambda t: f"{t}%")
    hbars(
        f,
        [
            ("HGEMM 4096³: 608 of 989 TFLOP/s", 61, BLUE_LIGHT, "61%"),
            ("HGEMM 8192³: 770 of 989 TFLOP/s", 78, BLUE_MID, "78%"),
            ("BF16 GEMM 8192³: 790 of 989 TFLOP/s", 80, BLUE_DARK, "80%"),
            ("Copy: 4.1-4.3 of 4.8 TB/s", 87.5, ORANGE, "85-90%"),
        ],
        top=66,
        scale=p,
        bar_h=20,
        gap=46,
    )
    f.note(300, "A datasheet number is a ceiling, never a target.")
    return f.save()


# 16 -------------------------------------------------------------------------------------------------------
def f16_which_roof():
    f = Fig(
        "16-which-roof.svg",
        290,
        "One SGEMM measured against three ceilings",
        "Horizontal bars of cuBLAS SGEMM at 4096 cubed, 50.7 TFLOP/s on the H200, as a share of three "
        "ceilings: about 5 percent of the 989 TFLOP/s dense tensor-core roof, 76 percent of the 67 TFLOP/s FP32 "
        "datasheet roof, and about 80 percent of the 63 TFLOP/s measured FFMA ceiling.",
    )
    f.heading("cuBLAS SGEMM, 50.7 TFLOP/s, against...")
    p = Scale(0, 100, 16, 400)
    haxis(f, p, 46, 200, [0, 25, 50, 75, 100], label_fmt=lambda t: f"{t}%")
    hbars(
        f,
        [
            ("the tensor-core roof, 989 TFLOP/s", 5, RED, "5%"),
            ("the FP32 datasheet roof, 67 TFLOP/s", 76, BLUE_MID, "76%"),
            ("the measured FFMA ceiling, 63 TFLOP/s", 80, BLUE_DARK, "80%"),
        ],
        top=66,
        scale=p,
        bar_h=20,
        gap=46,
    )
    f.note(244, "Same kernel, same time: the roof above it decides")
    f.note(266, "whether it is well written for what it does.")
    return f.save()


def f16_kernel3_levels():
    f = Fig(
        "16-kernel3-levels.svg",
        330,
        "Kernel 3's ceiling at each memory level",
        "Horizontal bars in TFLOP/s for the tiled SGEMM, kernel 3, on the H200. The FP32 flat roof is 63. At 16 "
        "FLOP per DRAM byte the HBM slope allows about 67, above the flat roof. At 0.33 FLOP per shared-memory "
        "byte the shared-memory slope of about 33 TB/s allows about 11. The kernel achieves 8.7, 78 percent of "
        "the shared-memory bound, which is the binding roof.",
    )
    f.heading("Kernel 3: which roof binds (TFLOP/s)")
    s = Scale(0, 70, 16, 400)
    haxis(f, s, 46, 250, [0, 10, 20, 30, 40, 50, 60, 70])
    hbars(
        f,
        [
            ("FP32 flat roof", 63, BLUE_LIGHT, "63"),
            ("HBM slope at 16 FLOP/B: 16 × 4.2", 67, BLUE_LIGHT, "67"),
            ("Shared slope at 0.33 FLOP/B: 0.33 × 33", 11, RED, "≈ 11"),
            ("Kernel 3, measured", 8.7, BLUE_DARK, "8.7"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=46,
    )
    f.note(296, "8.7 is 78% of the shared-memory bound: that roof")
    f.note(318, "binds, so the next rungs keep operands in registers.")
    return f.save()


def f16_moving_points():
    f = Fig(
        "16-moving-points.svg",
        380,
        "The directions an optimisation moves a kernel on the roofline",
        "A schematic roofline without numbers: a sloped memory roof meeting a flat compute roof at the ridge. "
        "From one kernel's point below the slope, three arrows: straight up, less time for the same work, as "
        "coalescing or removing bank conflicts do; to the right, fewer bytes for the same work, as tiling and "
        "fusion do, which raises the roof above the point; and up and to the right together, lower precision.",
    )
    f.heading("Moving a kernel's point (schematic)")
    f.path("M40,300 L250,90 L464,90", stroke=BLUE, sw=2.5)
    f.text(458, 82, "compute roof", anchor="end", fill=BLUE, bold=True)
    f.text(74, 250, "memory roof", fill=BLUE, bold=True, rotate=-45)
    f.line(250, 90, 250, 320, stroke=GRID, sw=1, dash="4 3")
    f.text(250, 338, "ridge", anchor="middle", fill=GREY)
    px, py = 200, 285
    f.circle(px, py, 7, fill=RED)
    f.arrow(px, py - 9, px, 218, stroke=GREEN, sw=2.5)
    f.text(px - 8, 226, "up", anchor="end", bold=True, fill=GREEN)
    f.arrow(px + 9, py, 300, py, stroke=ORANGE, sw=2.5)
    f.text(306, py + 5, "right", bold=True, fill=ORANGE)
    f.arrow(px + 7, py - 7, 262, 226, stroke=PURPLE, sw=2.5)
    f.text(268, 228, "both", bold=True, fill=PURPLE)
    f.note(356, "Up: less time (coalescing, conflicts, latency).")
    f.note(376, "Right: fewer bytes (tiling, fusion). Both: precision.")
    f.h = 386
    return f.save()


# 17 -------------------------------------------------------------------------------------------------------
def f17_ladder():
    f = Fig(
        "17-ladder.svg",
        330,
        "Theoretical occupancy of four SGEMM kernels on the H200",
        "Horizontal bars of theoretical occupancy from the judge's resource reports: kernel 3, 1,024 threads at "
        "32 registers, limited by warps, 64 warps, 100 percent; kernel 4, 512 threads at 56 registers, limited "
        "by registers, 32 warps, 50 percent; kernel 5, 256 threads at 168 registers, 8 warps, 12.5 percent; "
        "kernel 5 with launch bounds (256, 2), 128 registers, 16 warps, 25 percent.",
    )
    f.heading("Occupancy of the SGEMM ladder (H200)")
    p = Scale(0, 100, 16, 400)
    haxis(f, p, 46, 250, [0, 25, 50, 75, 100], label_fmt=lambda t: f"{t}%")
    hbars(
        f,
        [
            ("Kernel 3: 1,024 threads, 32 regs, limit warps", 100, BLUE_LIGHT, "64 warps"),
            ("Kernel 4: 512 threads, 56 regs, limit regs", 50, BLUE_MID, "32 warps"),
            ("Kernel 5: 256 threads, 168 regs, limit regs", 12.5, RED, "8 warps"),
            ("Kernel 5, launch bounds: 128 regs", 25, GREEN, "16 warps"),
        ],
        top=66,
        scale=p,
        bar_h=20,
        gap=46,
    )
    f.note(296, "A second block made kernel 5 1.5 times faster:")
    f.note(318, "occupancy helped here, which it does not always.")
    return f.save()


def f17_threads_needed():
    f = Fig(
        "17-threads-needed.svg",
        320,
        "Threads per SM needed to keep 32 KB in flight",
        "Horizontal bars of the threads per SM needed for about 32 KB of loads in flight, the share of 4.2 "
        "TB/s times a microsecond per SM: about 8,000 with one 4-byte load per thread, four times the 2,048 "
        "an SM can hold; about 2,000 with one 16-byte float4 load; about 500 with four independent float4 "
        "loads. A dashed line marks the 2,048-thread limit.",
    )
    f.heading("Threads per SM for 32 KB in flight")
    s = Scale(0, 8500, 16, 400)
    haxis(f, s, 46, 206, [0, 2000, 4000, 6000, 8000], label_fmt=lambda t: f"{t:,}")
    hbars(
        f,
        [
            ("One 4-byte load per thread", 8000, RED, "≈ 8,000"),
            ("One float4 (16 B) per thread", 2000, ORANGE, "≈ 2,000"),
            ("Four float4 loads per thread", 500, GREEN, "≈ 500"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=46,
    )
    for top in (72, 118, 164):
        f.line(s(2048), top - 2, s(2048), top + 24, stroke=BLUE, sw=2.5, dash="5 3")
    f.line(s(2048), 196, s(2048), 206, stroke=BLUE, sw=2.5)
    f.text(16, 252, "Dashed: the 2,048 threads an SM can hold.", bold=True, fill=BLUE)
    f.note(274, "Occupancy 100%, about 98% and about 25%: ILP")
    f.note(296, "lowers the occupancy a kernel needs.")
    return f.save()


def f17_diagnosis():
    f = Fig(
        "17-diagnosis.svg",
        460,
        "A procedure for diagnosing occupancy limits",
        "Five boxes in sequence. 1: read the resources, registers, shared memory, spills and block size, and "
        "compute theoretical occupancy and its limiter. 2: compare achieved with theoretical; a large gap "
        "points at the launch: too few blocks, a tail wave or imbalance. 3: read the stall reasons; long "
        "scoreboard or barrier stalls with idle issue slots mean more warps or more ILP will help, a busy pipe "
        "means they will not. 4: change one thing, such as launch bounds or a smaller tile, and measure, "
        "watching spills. 5: keep the result, not the metric: the goal is time.",
    )
    f.heading("Is occupancy the problem?")
    steps = [
        ("1. Read the resources", "registers, shared, spills: limiter", FILL_BLUE, BLUE),
        ("2. Achieved vs theoretical", "big gap: fix the grid, not registers", FILL_PURPLE, PURPLE),
        ("3. Read the stall reasons", "idle issue slots: more warps or ILP", FILL_ORANGE, ORANGE),
        ("4. Change one thing, measure", "launch bounds, tile size; spills?", FILL_GREEN, GREEN),
        ("5. Keep the result", "the goal is time, not the metric", FILL_GREY, GREY),
    ]
    y = 42
    for i, (a, b, fill, stroke) in enumerate(steps):
        f.box(40, y, 400, 62, [a, b], fill=fill, stroke=stroke, bold_first=True)
        if i < len(steps) - 1:
            f.arrow(240, y + 64, 240, y + 80)
        y += 82
    f.h = int(y)
    return f.save()


# 18 -------------------------------------------------------------------------------------------------------
def f18_tile_traffic():
    f = Fig(
        "18-tile-traffic.svg",
        330,
        "L2 traffic of an FP32 GEMM at 4096 cubed against the tile edge",
        "Horizontal bars on a log scale of gigabytes read from L2 or DRAM by an FP32 GEMM of side 4096, by "
        "square block tile: 1 by 1, no reuse, 550 GB at 0.25 FLOP per byte; 32 by 32, kernel 3, 17.2 GB at 8, "
        "with the profiler's measured 16.6 GB marked; 64 by 64, 8.6 GB at 16; 128 by 128, kernels 5 to 7, 4.3 GB "
        "at 32.",
    )
    f.heading("Traffic at 4096³ by tile (GB, log)")
    s = Scale(1, 1000, 16, 400, log=True)
    haxis(f, s, 46, 250, [1, 10, 100, 1000], label_fmt=lambda t: f"{t:,}")
    hbars(
        f,
        [
            ("1 × 1, naive: I = 0.25", 550, RED, "550"),
            ("32 × 32, kernel 3: I = 8", 17.2, ORANGE, "17.2"),
            ("64 × 64: I = 16", 8.6, BLUE_MID, "8.6"),
            ("128 × 128, kernels 5-7: I = 32", 4.3, BLUE_DARK, "4.3"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=46,
    )
    x = s(16.6)
    f.line(x, 116, x, 150, stroke=GREEN, sw=3)
    f.text(16, 296, "Green tick: 16.6 GB measured for kernel 3.", bold=True, fill=GREEN)
    f.note(318, "I = b / s: the intensity grows with the tile edge.")
    return f.save()


def f18_prefill_decode():
    K, N = 4096, 14336

    def intensity(t):
        return t * K * N / (K * N + t * K + t * N)

    f = Fig(
        "18-prefill-decode.svg",
        400,
        "Intensity of one gate projection against the number of tokens",
        "Log-log line chart of I(T) = T K N over (K N + T K + T N) for the gate projection of a Llama-3-8B-shaped "
        "model, K = 4096 and N = 14,336, in BF16, for T from 1 to 8,192 tokens. A dashed line marks the H200 "
        "tensor ridge of 186. Decode of one sequence, T = 1, sits at about 1 FLOP per byte; batched decode of "
        "64 at about 63; prefill of a 2,048-token prompt at about 1,247, nearly seven times the ridge.",
    )
    f.heading("Gate projection, K = 4096, N = 14,336")
    x = Scale(1, 8192, 70, 452, log=True)
    y = Scale(0.5, 5000, 320, 50, log=True)
    plot_frame(f, x, y, [1, 8, 64, 512, 4096], [1, 10, 100, 1000], xfmt=lambda t: f"{t:,}", yfmt=lambda t: f"{t:,}")
    pts = [f"{x(t):.1f},{y(intensity(t)):.1f}" for t in [2 ** (i / 8) for i in range(105)]]
    f.path("M" + " L".join(pts), stroke=BLUE, sw=2.5)
    f.line(70, y(186), 452, y(186), stroke=RED, sw=2, dash="6 4")
    f.text(76, y(186) - 8, "ridge 186", fill=RED, bold=True)
    for t, label, dx, dy, anchor in (
        (1, "decode: 1", 10, 4, "start"),
        (64, "batch 64: 63", 10, 18, "start"),
        (2048, "prefill 2,048: 1,247", -10, -12, "end"),
    ):
        f.circle(x(t), y(intensity(t)), 5.5, fill=BLUE_DARK)
        f.text(x(t) + dx, y(intensity(t)) + dy, label, anchor=anchor, bold=True)
    f.text(261, 362, "tokens T (log)", anchor="middle")
    f.text(20, 185, "FLOP/byte (log)", anchor="middle", rotate=-90)
    f.note(392, "Same weights, three orders of magnitude apart.")
    return f.save()


if __name__ == "__main__":
    for fn in [
        f11_bank_patterns,
        f11_blocks_per_sm,
        f11_cluster,
        f12_l2_sizes,
        f12_partitions,
        f12_gemm_traffic,
        f13_package,
        f13_links,
        f13_decode_kv,
        f14_wave_efficiency,
        f14_cluster_fit,
        f15_ridges,
        f15_paths,
        f15_measured,
        f16_which_roof,
        f16_kernel3_levels,
        f16_moving_points,
        f17_ladder,
        f17_threads_needed,
        f17_diagnosis,
        f18_tile_traffic,
        f18_prefill_decode,
    ]:
        print(fn())

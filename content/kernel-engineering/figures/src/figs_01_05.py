"""Figures for capsules 01-05 (issue 44). Every number is one the capsule's text states.

Run: python content/kernel-engineering/figures/src/figs_01_05.py
"""

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


def chips(f: Fig, x0: float, y: float, items, fill=FILL_BLUE, stroke=BLUE, right=464, h=30):
    """Boxes of text joined by arrows, wrapping onto a new line when the row is full. Returns the next y."""
    x = x0
    for i, s in enumerate(items):
        w = text_width(s, 15) + 18
        if x + w > right:
            x, y = x0 + 22, y + h + 14
            f.arrow(x0, y + h / 2, x0 + 18, y + h / 2)
        f.box(x, y, w, h, s, fill=fill, stroke=stroke)
        x += w
        if i < len(items) - 1:
            if x + 22 + text_width(items[i + 1], 15) + 18 > right:
                x += 8
            else:
                f.arrow(x + 2, y + h / 2, x + 18, y + h / 2)
                x += 22
    return y + h


# 01 -------------------------------------------------------------------------------------------------------
def f01_token_ceilings():
    f = Fig(
        "01-token-ceilings.svg",
        250,
        "The two times of one batch-1 decode step",
        "Two horizontal bars on one linear scale in milliseconds for one decode step of an 8-billion-parameter "
        "BF16 model on an H200. Arithmetic, 16 GFLOP at 780 TFLOP/s: 20 microseconds, a sliver. Reading the "
        "16 GB of weights at 4.2 TB/s: 3.8 milliseconds, almost two hundred times longer.",
    )
    f.heading("Batch 1, 8B model, one H200")
    s = Scale(0, 4.0, 16, 400)
    haxis(f, s, 46, 166, [0, 1, 2, 3, 4], label_fmt=lambda t: f"{t} ms")
    hbars(
        f,
        [
            ("Arithmetic: 16 GFLOP at 780 TFLOP/s", 0.02, GREEN, "20 µs"),
            ("Weights: 16 GB read at 4.2 TB/s", 3.8, BLUE, "3.8 ms"),
        ],
        top=66,
        scale=s,
        bar_h=24,
        gap=56,
    )
    f.note(214, "The tensor cores are busy for 20 µs of every 3.8 ms:")
    f.note(234, "idle more than 99% of the step, waiting for bytes.")
    return f.save()


def f01_kv_cache():
    f = Fig(
        "01-kv-cache.svg",
        290,
        "Bytes read per decode step: weights against the KV cache",
        "Three horizontal bars in gigabytes for a model shaped like Llama 3 8B in BF16. The weights, 16 GB, are "
        "read once per step whatever the batch. The KV cache of one sequence of 4,096 tokens is 512 MiB, at 128 "
        "KiB per token. Sixty-four such sequences read 32 GiB of cache per step, twice the weights.",
    )
    f.heading("Bytes read per step, Llama-3-8B shape")
    s = Scale(0, 40, 16, 400)
    haxis(f, s, 46, 214, [0, 10, 20, 30, 40], label_fmt=lambda t: f"{t} GB")
    hbars(
        f,
        [
            ("Weights: shared by the whole batch", 16, BLUE, "16 GB"),
            ("KV cache of 1 sequence, 4,096 tokens", 0.537, ORANGE, "512 MiB"),
            ("KV cache of 64 such sequences", 34.4, RED, "32 GiB"),
        ],
        top=66,
        scale=s,
        bar_h=22,
        gap=50,
    )
    f.note(260, "128 KiB of cache per token, per sequence: not shared.")
    f.note(280, "At batch 64 the cache is twice the weights.")
    return f.save()


def f01_attention_traffic():
    f = Fig(
        "01-attention-traffic.svg",
        470,
        "Unfused and fused attention: where S and P live",
        "Top: unfused attention as three kernels, QK transpose, softmax and multiply by V; the score matrix S "
        "and the probabilities P, 134 MB each per head at 8,192 tokens in BF16, are written to HBM and read "
        "back, about 537 MB per head and 17 GB per layer of 32 heads, about 4 ms at 4.2 TB/s. Bottom: one fused "
        "kernel keeps tiles of S and P in shared memory and registers, so only Q, K, V and the output cross HBM. "
        "At the bottom, two bars per layer: 4 ms of S and P traffic against 1.4 ms of matrix arithmetic.",
    )
    f.heading("Attention at n = 8,192 tokens, d = 128")
    f.text(16, 58, "Unfused: three kernels", bold=True)
    for x, w, label in ((16, 128, "S = QKᵀ"), (160, 160, "P = softmax(S)"), (336, 128, "O = PV")):
        f.box(x, 68, w, 40, label, fill=FILL_BLUE, stroke=BLUE)
    f.rect(16, 150, 448, 38, fill=FILL_ORANGE, stroke=ORANGE)
    f.text(240, 175, "HBM: S and P, 134 MB each per head", anchor="middle")
    f.arrow(80, 108, 80, 148, stroke=RED)
    f.text(88, 134, "S", bold=True, fill=RED)
    f.arrow(200, 150, 200, 110, stroke=RED)
    f.text(185, 134, "S", bold=True, fill=RED)
    f.arrow(280, 108, 280, 148, stroke=RED)
    f.text(288, 134, "P", bold=True, fill=RED)
    f.arrow(400, 150, 400, 110, stroke=RED)
    f.text(385, 134, "P", bold=True, fill=RED)
    f.note(212, "537 MB per head, 17 GB per layer: about 4 ms")
    f.text(16, 250, "Fused: one kernel", bold=True)
    f.box(
        16,
        260,
        448,
        52,
        ["S and P stay on chip, tile by tile,", "in shared memory and registers"],
        fill=FILL_GREEN,
        stroke=GREEN,
    )
    f.rect(16, 330, 448, 34, fill=FILL_ORANGE, stroke=ORANGE)
    f.text(240, 352, "HBM: only Q, K, V read and O written", anchor="middle")
    s = Scale(0, 4.5, 16, 400)
    hbars(
        f,
        [
            ("Per layer: S and P through HBM", 4.0, RED, "4 ms"),
            ("Per layer: the two matrix products", 1.4, GREEN, "1.4 ms"),
        ],
        top=392,
        scale=s,
        bar_h=18,
        gap=46,
    )
    return f.save()


# 02 -------------------------------------------------------------------------------------------------------
def f02_three_costs():
    f = Fig(
        "02-three-costs.svg",
        440,
        "The three costs of three workloads",
        "Grouped horizontal bars on a log scale of microseconds, the output of the capsule's regime function "
        "on the H200's measured ceilings. SGEMM of side 4096: compute 2,182, memory 64, overhead 3.5 "
        "microseconds, so compute-bound. A vector add of 2 to the 28 floats: compute 4.3, memory 767, overhead "
        "3.5, so memory-bound. Ten thousand adds of 4,096 elements: compute 0.7, memory 117, overhead 35,000, "
        "so overhead-bound.",
    )
    f.heading("Compute, memory, overhead (µs, log)")
    lx = 16
    for colour, label in ((BLUE, "compute"), (ORANGE, "memory"), (PURPLE, "overhead")):
        f.rect(lx, 42, 14, 14, fill=colour, stroke=colour, rx=2)
        f.text(lx + 20, 54, label)
        lx += 40 + text_width(label, 15)
    s = Scale(0.1, 1e5, 16, 380, log=True)
    ticks = [0.1, 1, 10, 100, 1e3, 1e4, 1e5]
    names = {0.1: "0.1", 1: "1", 10: "10", 100: "100", 1e3: "1k", 1e4: "10k", 1e5: "100k"}
    haxis(f, s, 70, 400, ticks, label_fmt=lambda t: names[t], label_y=420)
    f.text(464, 420, "µs", anchor="end")
    groups = [
        ("SGEMM 4096³: compute-bound", [2181.6, 63.9, 3.5]),
        ("Add of 2²⁸ floats: memory-bound", [4.3, 767.0, 3.5]),
        ("10,000 adds of 4,096: overhead-bound", [0.7, 117.0, 35000.0]),
    ]
    y = 90
    for title, values in groups:
        f.text(16, y, title, bold=True)
        y += 8
        for colour, v in zip((BLUE, ORANGE, PURPLE), values, strict=True):
            x1 = s(v)
            f.rect(16, y, x1 - 16, 16, fill=colour, stroke=colour, sw=1, rx=2)
            label = f"{v:,.1f}".replace(".0", "") if v < 100 else f"{v:,.0f}"
            f.text(x1 + 6, y + 13, label, bold=True)
            y += 22
        y += 32
    return f.save()


def f02_fusion_bytes():
    f = Fig(
        "02-fusion-bytes.svg",
        300,
        "Bytes per element of y = max(a + b, 0) · s, unfused and fused",
        "Two stacked horizontal bars on one scale of bytes per element. Three separate kernels move 28 bytes: "
        "the add reads a and b and writes a temporary, 12 bytes; the ReLU reads and writes one, 8 bytes; the "
        "scale reads and writes one, 8 bytes. One fused kernel reads a and b once and writes y once: 12 bytes, "
        "about 2.3 times fewer for the same arithmetic.",
    )
    f.heading("y = max(a + b, 0) · s, bytes per element")
    px = 400 / 28
    x = 16
    f.text(16, 62, "Three kernels: 28 bytes", bold=True)
    for label, b, colour, fill in (
        ("add: 12 B", 12, BLUE, FILL_BLUE),
        ("ReLU: 8 B", 8, ORANGE, FILL_ORANGE),
        ("scale: 8 B", 8, PURPLE, FILL_PURPLE),
    ):
        f.box(x, 72, b * px, 36, label, fill=fill, stroke=colour)
        x += b * px
    f.text(16, 150, "One fused kernel: 12 bytes", bold=True)
    f.box(16, 160, 12 * px, 36, "fused: 12 B", fill=FILL_GREEN, stroke=GREEN)
    f.line(16 + 12 * px, 120, 16 + 12 * px, 210, stroke=GREEN, dash="4 3")
    f.note(236, "Intermediates written and read again: 16 bytes.")
    f.note(258, "Same arithmetic, 28 / 12 ≈ 2.3 times fewer bytes,")
    f.note(280, "so about 2.3 times faster when memory-bound.")
    return f.save()


def f02_launch_costs():
    f = Fig(
        "02-launch-costs.svg",
        340,
        "What one small kernel costs, host and device",
        "Horizontal bars in microseconds per call, measured on the H200. Eager PyTorch x + y on 4,096-element "
        "tensors: about 9.3. A loop of empty launches from Python through CuPy: about 5.8. The GPU time of a "
        "vector add of 4,096 elements: 3.65, while its 48 KB would take about 12 nanoseconds at HBM speed. "
        "Replaying one hundred adds captured in a CUDA graph: about 1 per kernel.",
    )
    f.heading("Cost per call of a tiny add (µs)")
    s = Scale(0, 10, 16, 400)
    haxis(f, s, 46, 256, [0, 2, 4, 6, 8, 10])
    hbars(
        f,
        [
            ("Eager PyTorch x + y, 4,096 elements", 9.3, RED, "9.3"),
            ("Empty launch from Python (CuPy)", 5.8, ORANGE, "5.8"),
            ("GPU time of the add itself", 3.65, BLUE, "3.65"),
            ("One kernel of a replayed CUDA graph", 1.0, GREEN, "≈ 1"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=48,
    )
    f.note(296, "The add's 48 KB need about 12 ns of HBM time.")
    f.note(318, "350 launches at 9 µs ≈ 3 ms per token.")
    return f.save()


# 03 -------------------------------------------------------------------------------------------------------
def f03_three_readings():
    f = Fig(
        "03-three-readings.svg",
        430,
        "Datasheet, dense and measured ceilings of the H200",
        "Top: three bars for the same BF16 tensor cores on a scale of TFLOP/s: 1,979 as printed with 2:4 "
        "sparsity, 989 dense, and about 780 measured with cuBLAS. Bottom: measured ceilings as a share of the "
        "datasheet: FP32 FFMA 63 of 67 TFLOP/s, 94 percent; BF16 tensor 780 of 989, 79 percent; HBM copy 4.2 "
        "of 4.8 TB/s, 88 percent.",
    )
    f.heading("One tensor core, three numbers (TFLOP/s)")
    s = Scale(0, 2000, 16, 380)
    haxis(f, s, 46, 194, [0, 500, 1000, 1500, 2000], label_fmt=lambda t: f"{t:,}")
    hbars(
        f,
        [
            ("Datasheet, 'with sparsity'", 1979, BLUE_LIGHT, "1,979"),
            ("Datasheet, dense: halve it", 989, BLUE_MID, "989"),
            ("Measured, cuBLAS 8192³", 780, BLUE_DARK, "≈ 780"),
        ],
        top=66,
        scale=s,
        bar_h=18,
        gap=44,
    )
    f.heading("Measured as a share of the datasheet", y=252)
    p = Scale(0, 100, 16, 400)
    y = 280
    for label, pct, colour in (
        ("FP32 FFMA: 63 of 67 TFLOP/s", 94, GREEN),
        ("BF16 tensor: 780 of 989 TFLOP/s", 79, BLUE),
        ("HBM copy: 4.2 of 4.8 TB/s", 88, ORANGE),
    ):
        f.text(16, y, label)
        f.rect(16, y + 6, 384, 18, fill="#ffffff", stroke=GREY, sw=1, rx=2)
        f.rect(16, y + 6, p(pct) - 16, 18, fill=colour, stroke=colour, sw=1, rx=2)
        f.text(406, y + 21, f"{pct}%", bold=True)
        y += 50
    return f.save()


def f03_ridges():
    f = Fig(
        "03-ridges.svg",
        330,
        "Ridge points: where memory-bound turns into compute-bound",
        "Horizontal bars of the ridge point in FLOP per byte. H200 FP32 with measured ceilings, 63 over 4.2: "
        "15. H200 BF16 measured, 780 over 4.2: about 186. H200 BF16 datasheet, 989 over 4.8: about 206. H100 "
        "BF16 datasheet, 989 over 3.35: about 295. Faster memory lowers the ridge; faster arithmetic raises it.",
    )
    f.heading("Ridge point I* = peak / bandwidth")
    s = Scale(0, 320, 16, 400)
    haxis(f, s, 46, 246, [0, 100, 200, 300])
    hbars(
        f,
        [
            ("H200, FP32, measured: 63 / 4.2", 15, GREEN, "15"),
            ("H200, BF16, measured: 780 / 4.2", 186, BLUE_DARK, "186"),
            ("H200, BF16, datasheet: 989 / 4.8", 206, BLUE_MID, "206"),
            ("H100, BF16, datasheet: 989 / 3.35", 295, BLUE_LIGHT, "295"),
        ],
        top=66,
        scale=s,
        bar_h=18,
        gap=46,
    )
    f.note(296, "FLOP per byte of HBM traffic.")
    f.note(318, "Same tensor cores: slower memory, higher ridge.")
    return f.save()


def f03_gemm_intensity():
    f = Fig(
        "03-gemm-intensity.svg",
        400,
        "Intensity of a square BF16 GEMM against its size",
        "Log-log line chart. Horizontal axis: the side n of a square BF16 GEMM, from 64 to 16,384. Vertical "
        "axis: arithmetic intensity at the algorithmic minimum, n over 3 FLOP per byte. A horizontal line marks "
        "the H200 tensor ridge of 186; the line crosses it near n = 560, below which even a perfect kernel is "
        "memory-bound. The GEMM of side 8192 sits at about 2,730.",
    )
    f.heading("Square BF16 GEMM: I = n / 3")
    x = Scale(64, 16384, 70, 452, log=True)
    y = Scale(10, 10000, 330, 50, log=True)
    f.rect(70, 50, x(560) - 70, 280, fill=FILL_ORANGE, stroke=FILL_ORANGE, rx=0)
    for t in (64, 256, 1024, 4096, 16384):
        f.line(x(t), 50, x(t), 330, stroke=GRID, sw=1)
        f.text(x(t), 350, f"{t:,}", anchor="middle")
    for t in (10, 100, 1000, 10000):
        f.line(70, y(t), 452, y(t), stroke=GRID, sw=1)
        f.text(64, y(t) + 5, f"{t:,}", anchor="end")
    f.rect(70, 50, 382, 280, fill="none", stroke=GREY, sw=1, rx=0)
    f.line(70, y(186), 452, y(186), stroke=RED, sw=2, dash="6 4")
    f.text(448, y(186) + 20, "tensor ridge 186", anchor="end", fill=RED, bold=True)
    f.line(x(64), y(64 / 3), x(16384), y(16384 / 3), stroke=BLUE, sw=2.5)
    f.circle(x(560), y(186), 6, fill=RED)
    f.text(x(560) - 8, y(186) - 12, "n ≈ 560", anchor="end", bold=True)
    f.circle(x(8192), y(2730), 6, fill=BLUE)
    f.text(x(8192) - 10, y(2730) - 8, "8192: 2,730", anchor="end", bold=True)
    f.text(78, 72, "memory-bound", fill=ORANGE, bold=True)
    f.text(261, 372, "matrix side n (log)", anchor="middle")
    f.text(20, 190, "FLOP/byte (log)", anchor="middle", rotate=-90)
    f.note(394, "Shaded: below the ridge even with perfect reuse.")
    return f.save()


# 04 -------------------------------------------------------------------------------------------------------
def f04_loop():
    f = Fig(
        "04-loop.svg",
        330,
        "The loop a kernel engineer is hired for",
        "Four boxes joined by arrows in a cycle. Measure: where does the time go, with Nsight Systems, Nsight "
        "Compute and the judge. Explain: which ceiling binds, from hardware literacy and the roofline. Change "
        "one thing, in CUDA C++, PTX, CUTLASS or Triton. Measure again: faster and still correct, which needs "
        "numerics and tests. Then back to measure.",
    )
    f.heading("Measure, explain, change, measure again")
    boxes = [
        (16, 48, ["1. Measure", "where the time goes", "(Nsight, the judge)"], FILL_BLUE, BLUE),
        (264, 48, ["2. Explain", "which ceiling binds", "(hardware, roofline)"], FILL_PURPLE, PURPLE),
        (264, 196, ["3. Change", "one thing at a time", "(CUDA C++, PTX, Triton)"], FILL_ORANGE, ORANGE),
        (16, 196, ["4. Measure again", "faster, still correct?", "(numerics, tests)"], FILL_GREEN, GREEN),
    ]
    for x, y, lines, fill, stroke in boxes:
        f.box(x, y, 200, 84, lines, fill=fill, stroke=stroke, bold_first=True)
    f.arrow(218, 90, 260, 90)
    f.arrow(364, 134, 364, 192)
    f.arrow(262, 238, 220, 238)
    f.arrow(116, 194, 116, 136)
    f.note(312, "Every skill in the map serves one step of the loop.")
    return f.save()


def f04_spectrum():
    f = Fig(
        "04-spectrum.svg",
        420,
        "Kernel languages from full control to high productivity",
        "A vertical stack of five layers with an arrow beside it: more productivity towards the top, more "
        "control towards the bottom. Triton and tile languages: blocks of data, the compiler maps them to "
        "threads. CUTLASS and CuTe: C++ templates of layouts, copies and MMA atoms. CUDA C++: you place every "
        "thread, byte and barrier. PTX: the virtual instruction set, inline for wgmma or cp.async.bulk. SASS: the "
        "real instructions, read to check vector loads, unrolling and spills.",
    )
    f.heading("One machine, five ways to program it")
    layers = [
        ("Triton, tile languages", "blocks of data; a compiler maps threads", FILL_GREEN, GREEN),
        ("CUTLASS and CuTe", "templates: layouts, copies, MMA atoms", FILL_BLUE, BLUE),
        ("CUDA C++", "you place every thread, byte, barrier", FILL_PURPLE, PURPLE),
        ("PTX (virtual ISA)", "inline for wgmma, cp.async.bulk", FILL_ORANGE, ORANGE),
        ("SASS (machine code)", "read it: vector loads, unrolls, spills", FILL_GREY, GREY),
    ]
    y = 44
    for name, line, fill, stroke in layers:
        f.box(70, y, 394, 62, [name, line], fill=fill, stroke=stroke, bold_first=True)
        y += 70
    f.arrow(36, 380, 36, 50, stroke=GREEN, sw=2)
    f.text(30, 215, "more productivity", anchor="middle", rotate=-90, fill=GREEN, bold=True)
    f.text(56, 300, "more control", anchor="middle", rotate=-90, fill=GREY)
    f.note(412, "The skill: move along it, prototype high, check low.")
    return f.save()


def f04_mantissa():
    f = Fig(
        "04-mantissa.svg",
        470,
        "Mantissa bits per format, and what FP16 accumulation does to a sum",
        "Top: explicit mantissa bits as horizontal bars: FP32 23, FP16 10, BF16 7, FP8 E4M3 3, FP8 E5M2 2. "
        "Bottom: the sum of 100,000 FP16 copies of 0.1: the exact sum is 9,997.56; accumulated in FP32 it is "
        "9,998.41; accumulated in FP16 it stops growing at 256, where the spacing of FP16 values is 0.25.",
    )
    f.heading("Explicit mantissa bits")
    s = Scale(0, 24, 16, 400)
    y = 44
    for name, bits, colour in (
        ("FP32", 23, BLUE_DARK),
        ("FP16", 10, BLUE_MID),
        ("BF16", 7, BLUE),
        ("FP8 E4M3", 3, ORANGE),
        ("FP8 E5M2", 2, ORANGE),
    ):
        f.text(16, y + 15, name)
        f.rect(106, y, (s(bits) - 16) * 0.75, 20, fill=colour, stroke=colour, sw=1, rx=2)
        f.text(106 + (s(bits) - 16) * 0.75 + 6, y + 15, str(bits), bold=True)
        y += 30
    f.heading("Sum of 100,000 × 0.1 in FP16 values", y=224)
    s2 = Scale(0, 10000, 16, 380)
    haxis(f, s2, 236, 400, [0, 2500, 5000, 7500, 10000], label_fmt=lambda t: f"{t:,}")
    hbars(
        f,
        [
            ("Exact (float64)", 9997.56, GREY, "9,997.56"),
            ("Accumulated in FP32", 9998.41, GREEN, "9,998.41"),
            ("Accumulated in FP16", 256, RED, "256.0"),
        ],
        top=256,
        scale=s2,
        bar_h=18,
        gap=46,
    )
    f.note(446, "FP16 stalls at 256: there 0.25 apart, so + 0.1")
    f.note(464, "rounds back. Accumulate wider than you store.")
    return f.save()


# 05 -------------------------------------------------------------------------------------------------------
def f05_parts():
    f = Fig(
        "05-parts.svg",
        420,
        "The book's 72 capsules in seven parts",
        "A chart of the 72 capsules on one horizontal scale, one row per part. Part 0, Start Here: capsules 1 "
        "to 5. Part 1, The GPU from silicon up: 6 to 19. Part 2, The CUDA programming model: 20 to 31. Part 3, "
        "The GEMM worklog: 32 to 46. Part 4, Kernels for inference: 47 to 58. Part 5, The frontier: 59 to 68. "
        "Part 6, AI and kernels: 69 to 72. An arrow from Part 1 to Part 3 marks the dependency that matters "
        "most.",
    )
    f.heading("72 capsules, seven parts")
    s = Scale(0.5, 72.5, 16, 464)
    for t in (0, 5, 19, 31, 46, 58, 68, 72):
        f.line(s(t + 0.5), 40, s(t + 0.5), 392, stroke=GRID, sw=1)
    parts = [
        ("Part 0, Start Here", 1, 5, FILL_GREY, GREY),
        ("Part 1, The GPU from silicon up", 6, 19, FILL_BLUE, BLUE),
        ("Part 2, The CUDA programming model", 20, 31, FILL_PURPLE, PURPLE),
        ("Part 3, The GEMM worklog", 32, 46, FILL_ORANGE, ORANGE),
        ("Part 4, Kernels for inference", 47, 58, FILL_GREEN, GREEN),
        ("Part 5, The frontier", 59, 68, FILL_RED, RED),
        ("Part 6, AI × Kernels", 69, 72, FILL_YELLOW, ORANGE),
    ]
    y = 56
    for name, a, b, fill, stroke in parts:
        x0, x1 = s(a - 0.5), s(b + 0.5)
        width = text_width(name, 15)
        f.text(x0 if x0 + width <= 464 else 464, y, name, anchor="start" if x0 + width <= 464 else "end")
        label = f"{a}-{b}"
        if text_width(label, 15) + 8 < x1 - x0:
            f.box(x0, y + 6, x1 - x0, 26, label, fill=fill, stroke=stroke)
        else:
            f.rect(x0, y + 6, x1 - x0, 26, fill=fill, stroke=stroke, sw=1.5)
            right = x1 + 6 + text_width(label, 15) <= 464
            f.text(x1 + 6 if right else x0 - 6, y + 24, label, anchor="start" if right else "end")
        y += 48
    f.path(f"M{s(12.5)},136 C{s(12.5)},219 {s(20)},219 {s(31.5) - 3},219", stroke=RED, sw=2, arrow=True)
    f.note(410, "Red arrow: Part 3's reasons are Part 1's numbers.")
    return f.save()


def f05_paths():
    f = Fig(
        "05-paths.svg",
        420,
        "Three reading paths through the book",
        "Three rows of capsule ranges joined by arrows. An ML engineer: Part 0 in full, capsules 6 to 15 "
        "quickly, 16 to 19 with care, 20 to 23, the worklog's first rungs 32 to 35, then Part 4. A systems "
        "programmer: everything in order, with the vector-add exercise at 29 and every exercise of Part 3. An "
        "experienced CUDA developer: capsule 3, capsule 15, the worklog's tables, then from capsule 40 and from "
        "capsule 59.",
    )
    f.heading("Three routes")
    f.text(16, 60, "ML engineer, inference performance", bold=True, fill=BLUE)
    y = chips(f, 16, 70, ["1-5", "6-15 quickly", "16-19 with care", "20-23", "32-35", "Part 4"])
    f.text(16, y + 34, "Systems programmer new to GPUs", bold=True, fill=GREEN)
    y = chips(
        f, 16, y + 44, ["1 to 72 in order", "exercise at 29", "every Part 3 exercise"], fill=FILL_GREEN, stroke=GREEN
    )
    f.text(16, y + 34, "Experienced CUDA developer", bold=True, fill=PURPLE)
    y = chips(f, 16, y + 44, ["3", "15", "worklog tables", "40 onwards", "59 onwards"], fill=FILL_PURPLE, stroke=PURPLE)
    f.note(y + 36, "Every capsule's outline is open to all:")
    f.note(y + 56, "skip what you already know.")
    f.h = int(y + 70)
    return f.save()


def f05_checks():
    f = Fig(
        "05-checks.svg",
        380,
        "How the judge checks one output buffer",
        "Two rows show one output buffer surrounded by guard bands. Before the launch, every output element is "
        "poisoned with NaN and the guard bands are filled with a known pattern. After the launch, the guard "
        "bands must come back untouched and every element must match a float64 reference within a tolerance set "
        "by the accumulation precision and the length of each sum. Only then is the kernel timed.",
    )
    f.heading("Checked before it is timed")
    f.text(16, 60, "Before the launch", bold=True)
    f.box(16, 70, 70, 40, "guard", fill=FILL_GREY, stroke=GREY)
    for i in range(5):
        f.box(86 + i * 61.6, 70, 61.6, 40, "NaN", fill=FILL_RED, stroke=RED)
    f.box(394, 70, 70, 40, "guard", fill=FILL_GREY, stroke=GREY)
    f.arrow(240, 116, 240, 148)
    f.text(250, 138, "your kernel runs", fill=GREY)
    f.text(16, 170, "After the launch", bold=True)
    f.box(16, 180, 70, 40, "intact?", fill=FILL_GREY, stroke=GREY)
    for i in range(5):
        f.box(86 + i * 61.6, 180, 61.6, 40, "result", fill=FILL_GREEN, stroke=GREEN)
    f.box(394, 180, 70, 40, "intact?", fill=FILL_GREY, stroke=GREY)
    f.arrow(240, 226, 240, 256)
    f.box(
        16,
        260,
        448,
        56,
        ["every element against a float64 reference,", "tolerance from precision and sum length"],
        fill=FILL_BLUE,
        stroke=BLUE,
    )
    f.note(342, "At several shapes, ragged ones included; a NaN left")
    f.note(362, "behind or a touched guard band fails the kernel.")
    return f.save()


if __name__ == "__main__":
    for fn in [
        f01_token_ceilings,
        f01_kv_cache,
        f01_attention_traffic,
        f02_three_costs,
        f02_fusion_bytes,
        f02_launch_costs,
        f03_three_readings,
        f03_ridges,
        f03_gemm_intensity,
        f04_loop,
        f04_spectrum,
        f04_mantissa,
        f05_parts,
        f05_paths,
        f05_checks,
    ]:
        print(fn())

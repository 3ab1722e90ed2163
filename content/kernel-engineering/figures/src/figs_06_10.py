"""Figures for capsules 06-10 (issue 44). Every number is one the capsule's text states.

Run: python content/kernel-engineering/figures/src/figs_06_10.py
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
)


# 06 -------------------------------------------------------------------------------------------------------
def f06_grid_to_sms():
    f = Fig(
        "06-grid-to-sms.svg",
        420,
        "A grid of 100 blocks on 132 SMs",
        "A grid of 100 thread blocks goes to the hardware block scheduler, which places each block on one SM. "
        "Below, 132 squares stand for the SMs of an H100 or H200 SXM in 12 columns and 11 rows: 100 are filled, "
        "each holding one block for its whole life, and 32 stay empty for the whole kernel, however good the "
        "code in each block.",
    )
    f.heading("100 blocks, 132 SMs")
    f.box(16, 42, 180, 40, "grid: 100 blocks", fill=FILL_PURPLE, stroke=PURPLE)
    f.arrow(198, 62, 250, 62)
    f.box(254, 42, 210, 40, "block scheduler", fill=FILL_GREY, stroke=GREY)
    f.arrow(359, 84, 359, 104)
    cols, cw, ch, gap = 12, 34.5, 19, 3
    for i in range(132):
        r, c = divmod(i, cols)
        x, y = 16 + c * (cw + gap), 110 + r * (ch + gap)
        if i < 100:
            f.rect(x, y, cw, ch, fill=BLUE, stroke=BLUE, sw=1, rx=2)
        else:
            f.rect(x, y, cw, ch, fill="#ffffff", stroke=RED, sw=1.2, rx=2, dash="3 2")
    y = 110 + 11 * (ch + gap) + 20
    f.rect(16, y - 13, 16, 14, fill=BLUE, stroke=BLUE, rx=2)
    f.text(38, y, "SM running one block (100)")
    f.rect(16, y + 9, 16, 14, fill="#ffffff", stroke=RED, rx=2, dash="3 2")
    f.text(38, y + 22, "SM idle for the whole kernel (32)", fill=RED)
    f.note(y + 50, "An SM is busy only while a block lives on it.")
    f.h = int(y + 62)
    return f.save()


def f06_residency():
    f = Fig(
        "06-residency.svg",
        310,
        "Four limits on resident blocks, and the smallest wins",
        "Horizontal bars of how many blocks of 256 threads, with 128 registers per thread and 48 KB of shared "
        "memory, each per-SM limit of an H100 or H200 allows: threads, 2,048 over 256, 8 blocks; block slots, "
        "32; registers, 65,536 over 128 times 256, 2 blocks; shared memory, 228 KB over 49 KB, 4 blocks. The "
        "register limit is the smallest, so 2 blocks and 16 of the 64 warp slots are resident.",
    )
    f.heading("256 threads, 128 registers, 48 KB shared")
    s = Scale(0, 32, 16, 420)
    haxis(f, s, 46, 240, [0, 8, 16, 24, 32])
    hbars(
        f,
        [
            ("Threads: 2,048 / 256", 8, BLUE_LIGHT, "8"),
            ("Block slots: 32", 32, BLUE_LIGHT, "32"),
            ("Registers: 65,536 / (128 × 256)", 2, RED, "2"),
            ("Shared memory: 228 KB / (48 + 1) KB", 4, BLUE_LIGHT, "4"),
        ],
        top=66,
        scale=s,
        bar_h=18,
        gap=44,
    )
    f.note(280, "blocks per SM each limit allows")
    f.text(16, 302, "Registers win: 2 blocks, 16 of 64 warps.", bold=True, fill=RED)
    return f.save()


def f06_bytes_per_clock():
    f = Fig(
        "06-per-clock.svg",
        280,
        "One SM's budget per clock: work against bytes",
        "Horizontal bars per SM per clock on an H100 or H200 at 1.86 GHz: the FP32 lanes can do 256 floating-"
        "point operations; shared memory delivers 128 bytes; the SM's share of the measured 4.2 TB/s of HBM is "
        "about 17 bytes. 256 over 17 is about 15 FLOP per HBM byte, the FP32 ridge point seen from inside one "
        "SM.",
    )
    f.heading("One SM, one clock")
    s = Scale(0, 260, 16, 370)
    hbars(
        f,
        [
            ("FP32 lanes: 128 FMA", 256, BLUE, "256 FLOP"),
            ("Shared memory: 32 banks × 4 B", 128, GREEN, "128 B"),
            ("HBM share: 4.2 TB/s ÷ 132 ÷ 1.86 GHz", 17, ORANGE, "17 B"),
        ],
        top=56,
        scale=s,
        bar_h=22,
        gap=52,
    )
    f.note(230, "256 / 17 ≈ 15 FLOP per byte from HBM: the ridge.")
    f.note(252, "Load a tile once, reuse it from shared memory.")
    return f.save()


# 07 -------------------------------------------------------------------------------------------------------
def f07_pipe_clocks():
    f = Fig(
        "07-pipe-clocks.svg",
        300,
        "Clocks one warp instruction holds each pipe of a processing block",
        "A timeline of eight clocks for one processing block of a Hopper SM. A warp instruction of 32 threads "
        "holds the 32-lane FP32 pipe for 1 clock, the 16-lane INT32 and FP64 pipes for 2 clocks each, and the "
        "special-function unit, 16 results per clock per SM or 4 per processing block, for 8 clocks.",
    )
    f.heading("One warp instruction, 32 threads")
    x0, px = 196, 33
    for c in range(9):
        f.line(x0 + c * px, 46, x0 + c * px, 236, stroke=GRID, sw=1)
    for c in range(8):
        f.text(x0 + c * px + px / 2, 254, str(c + 1), anchor="middle")
    f.text(x0 + 4 * px, 276, "clocks", anchor="middle")
    rows = [
        ("FP32, 32 lanes", 1, BLUE),
        ("INT32, 16 lanes", 2, GREEN),
        ("FP64, 16 lanes", 2, PURPLE),
        ("SFU, 4 lanes", 8, ORANGE),
    ]
    y = 56
    for label, clocks, colour in rows:
        f.text(16, y + 24, label)
        f.rect(x0, y + 6, clocks * px, 28, fill=colour, stroke=colour, sw=1, rx=2)
        f.text(
            x0 + clocks * px + 6 if clocks < 8 else x0 + clocks * px - 6,
            y + 26,
            f"{clocks} clock" + ("s" if clocks > 1 else ""),
            bold=True,
            anchor="start" if clocks < 8 else "end",
            fill="#222222" if clocks < 8 else "#ffffff",
        )
        y += 46
    f.note(296, "The scheduler issues one instruction per clock.", size=15)
    return f.save()


def f07_silu():
    f = Fig(
        "07-silu.svg",
        300,
        "SiLU on the whole H200: the SFU against HBM",
        "Horizontal bars in trillions of elements per second. The special-function units, at about 3.9 "
        "trillion results per second and two per element, can process about 2.0 trillion SiLU elements per "
        "second. HBM at 4.2 TB/s supplies 0.52 trillion elements per second in FP32 (8 bytes each) and 1.05 "
        "trillion in BF16 (4 bytes), so the SFU is busy about a quarter and about half of the time.",
    )
    f.heading("SiLU: elements per second (× 10¹²)")
    s = Scale(0, 2.2, 16, 400)
    haxis(f, s, 46, 196, [0, 0.5, 1, 1.5, 2])
    hbars(
        f,
        [
            ("SFU: 3.9 × 10¹² results/s, 2 per element", 2.0, ORANGE, "2.0"),
            ("HBM, FP32: 8 bytes per element", 0.52, BLUE, "0.52"),
            ("HBM, BF16: 4 bytes per element", 1.05, BLUE_MID, "1.05"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=46,
    )
    f.note(240, "SFU busy about 25% of the time in FP32, 50% in BF16.")
    f.note(262, "One more transcendental, or FP8 storage, and the")
    f.note(284, "'memory-bound' kernel is bound by arithmetic.")
    return f.save()


def f07_attention_split():
    f = Fig(
        "07-attention-split.svg",
        300,
        "Tensor-core and SFU time per attention score",
        "Clocks per score per SM with head dimension 128 on Hopper: the matrix multiplies take 512 over 4,096, "
        "0.125 clocks, and the exponential on the special-function unit takes 1 over 16, 0.0625 clocks. Run one "
        "after the other they take 0.1875 clocks, 50 percent more; overlapped, as FlashAttention-3 does, the "
        "exponentials hide under the matrix multiplies.",
    )
    f.heading("Per score per SM, d = 128 (clocks)")
    s = Scale(0, 0.2, 16, 436)
    haxis(f, s, 46, 206, [0, 0.05, 0.1, 0.15, 0.2])
    f.text(16, 70, "One after the other: 0.1875", bold=True)
    f.rect(16, 78, s(0.125) - 16, 28, fill=BLUE, stroke=BLUE, sw=1, rx=2)
    f.rect(s(0.125), 78, s(0.1875) - s(0.125), 28, fill=ORANGE, stroke=ORANGE, sw=1, rx=2)
    f.text(24, 98, "QKᵀ and PV: 0.125", fill="#ffffff", bold=True)
    f.text(s(0.125) + 6, 98, "exp", fill="#ffffff", bold=True)
    f.text(16, 140, "Overlapped (FlashAttention-3): 0.125", bold=True)
    f.rect(16, 148, s(0.125) - 16, 24, fill=BLUE, stroke=BLUE, sw=1, rx=2)
    f.rect(16, 176, s(0.0625) - 16, 20, fill=ORANGE, stroke=ORANGE, sw=1, rx=2)
    f.text(24, 166, "tensor cores", fill="#ffffff", bold=True)
    f.text(24, 191, "SFU: 0.0625", fill="#ffffff", bold=True)
    f.note(250, "Not overlapped, the exponentials add 50%.")
    f.note(272, "Softmax of one tile runs under the matrix")
    f.note(294, "multiplies of another.")
    return f.save()


# 08 -------------------------------------------------------------------------------------------------------
def f08_mma_shape():
    f = Fig(
        "08-mma-shape.svg",
        370,
        "The operands of one m16n8k16 tensor-core instruction",
        "The tiles of one mma.sync m16n8k16: A of 16 rows by 16 columns (m by k) in BF16 or FP16, B of 16 by 8 "
        "(k by n) above the result, and the accumulators C and D of 16 by 8 in FP32. One instruction performs "
        "16 times 8 times 16, 2,048 multiply-adds; one FFMA warp instruction performs 32.",
    )
    f.heading("D = A × B + C, shape m16n8k16")
    u = 7
    ax, ay = 30, 190
    bx, by = ax + 16 * u + 20, 60
    f.rect(bx, by, 8 * u, 16 * u, fill=FILL_GREEN, stroke=GREEN, sw=1.5, rx=0)
    f.rect(ax, ay, 16 * u, 16 * u, fill=FILL_BLUE, stroke=BLUE, sw=1.5, rx=0)
    f.rect(bx, ay, 8 * u, 16 * u, fill=FILL_ORANGE, stroke=ORANGE, sw=1.5, rx=0)
    for i in range(1, 16):
        f.line(ax, ay + i * u, ax + 16 * u, ay + i * u, stroke="#c8d6e5", sw=0.6)
        f.line(ax + i * u, ay, ax + i * u, ay + 16 * u, stroke="#c8d6e5", sw=0.6)
        f.line(bx, by + i * u, bx + 8 * u, by + i * u, stroke="#b8ddd3", sw=0.6)
        f.line(bx, ay + i * u, bx + 8 * u, ay + i * u, stroke="#f0d5b5", sw=0.6)
    for i in range(1, 8):
        f.line(bx + i * u, by, bx + i * u, by + 16 * u, stroke="#b8ddd3", sw=0.6)
        f.line(bx + i * u, ay, bx + i * u, ay + 16 * u, stroke="#f0d5b5", sw=0.6)
    f.text(ax + 8 * u, ay - 10, "A: 16 × 16", anchor="middle", bold=True, fill=BLUE)
    f.text(bx - 8, by + 8 * u + 5, "B: 16 × 8", anchor="end", bold=True, fill=GREEN)
    f.text(bx + 4 * u, ay + 16 * u + 22, "C, D: 16 × 8", anchor="middle", bold=True, fill=ORANGE)
    tx = 250
    lines = [
        ("A: m × k, BF16 or FP16", False),
        ("B: k × n, BF16 or FP16", False),
        ("C, D: m × n, FP32", False),
        ("", False),
        ("16 × 8 × 16 = 2,048", True),
        ("multiply-adds in one", False),
        ("instruction, for one warp", False),
        ("", False),
        ("One FFMA warp", True),
        ("instruction: 32", False),
    ]
    y = 80
    for s, bold in lines:
        if s:
            f.text(tx, y, s, bold=bold)
        y += 22
    f.note(356, "Operands in registers, as the PTX ISA lays them out.")
    return f.save()


def f08_generations():
    f = Fig(
        "08-generations.svg",
        330,
        "Dense 16-bit tensor throughput of four generations' flagships",
        "Horizontal bars of datasheet dense FP16 or BF16 tensor throughput, without sparsity: Volta V100 "
        "(2017) 125 TFLOP/s, Turing T4 (2018) 65, Ampere A100 (2020) 312, Hopper H100 (2022) 989. Blackwell is "
        "covered in capsule 62.",
    )
    f.heading("Dense 16-bit tensor TFLOP/s (datasheet)")
    s = Scale(0, 1000, 16, 400)
    haxis(f, s, 46, 250, [0, 250, 500, 750, 1000], label_fmt=lambda t: f"{t:,}")
    hbars(
        f,
        [
            ("Volta V100 (2017): FP16, WMMA", 125, BLUE_LIGHT, "125"),
            ("Turing T4 (2018): adds INT8, INT4", 65, BLUE_LIGHT, "65"),
            ("Ampere A100 (2020): TF32, BF16, mma.sync", 312, BLUE_MID, "312"),
            ("Hopper H100 (2022): FP8, async wgmma", 989, BLUE_DARK, "989"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=46,
    )
    f.note(296, "Narrower formats and larger, asynchronous units;")
    f.note(318, "Blackwell's tcgen05 is in capsule 62.")
    return f.save()


def f08_precision():
    f = Fig(
        "08-precision.svg",
        350,
        "Relative error of GEMM modes at 4096 cubed on the H200",
        "Horizontal bars on a log scale of relative error against a float64 reference, measured by the judge "
        "on the H200 at 4096 cubed: cuBLAS in true FP32, 1.2 times ten to the minus 6; FP16 inputs with FP32 "
        "accumulation, 4.9 times ten to the minus 6; TF32 inputs, 2.6 times ten to the minus 4; FP16 "
        "accumulation, 4.4 times ten to the minus 4 to 2.4 times ten to the minus 3. A dashed line marks the "
        "sgemm problem's tolerance, 6.1 times ten to the minus 5: TF32 fails it.",
    )
    f.heading("Relative error at 4096³ (log scale)")
    s = Scale(1e-7, 1e-2, 16, 448, log=True)
    names = {1e-7: "10⁻⁷", 1e-6: "10⁻⁶", 1e-5: "10⁻⁵", 1e-4: "10⁻⁴", 1e-3: "10⁻³", 1e-2: "10⁻²"}
    haxis(f, s, 46, 270, list(names), label_fmt=lambda t: names[t])
    rows = [
        ("cuBLAS, true FP32", 1.2e-6, None, GREEN, "1.2 × 10⁻⁶"),
        ("FP16 inputs, FP32 accumulation", 4.9e-6, None, GREEN, "4.9 × 10⁻⁶"),
        ("TF32 inputs (11 significant bits)", 2.6e-4, None, RED, "2.6 × 10⁻⁴"),
        ("FP16 accumulation", 4.4e-4, 2.4e-3, RED, "up to 2.4 × 10⁻³"),
    ]
    t = s(6.1e-5)
    f.line(t, 40, t, 276, stroke=ORANGE, sw=2, dash="6 4")
    y = 66
    for label, v, v2, colour, vt in rows:
        f.text(16, y, label)
        f.rect(16, y + 6, s(v) - 16, 18, fill=colour, stroke=colour, sw=1, rx=2)
        if v2:
            f.rect(s(v), y + 6, s(v2) - s(v), 18, fill="#f5b7b1", stroke=colour, sw=1, rx=2)
            f.text(464, y, vt, anchor="end", bold=True)
        else:
            f.text(s(v) + 6, y + 21, vt, bold=True)
        y += 50
    f.text(16, 316, "Dashed: the sgemm tolerance, 6.1 × 10⁻⁵.", fill=ORANGE, bold=True)
    f.note(338, "Green passes; TF32 and FP16 accumulation fail.")
    return f.save()


# 09 -------------------------------------------------------------------------------------------------------
def f09_warp_states():
    f = Fig(
        "09-warp-states.svg",
        330,
        "The warps of one processing block in one clock",
        "Eight warps of one processing block at one clock, each in one of three states. Five are stalled: their "
        "next instruction waits for a load, a barrier, a full pipe or an instruction fetch. Two are eligible: "
        "their next instruction could issue now. One of the eligible warps is selected and issues one "
        "instruction for its 32 threads this clock.",
    )
    f.heading("Eight warps, one clock, one issue slot")
    states = ["stalled", "eligible", "stalled", "stalled", "selected", "stalled", "eligible", "stalled"]
    style = {"stalled": (FILL_RED, RED), "eligible": (FILL_GREEN, GREEN), "selected": (BLUE, BLUE)}
    for i, st in enumerate(states):
        fill, stroke = style[st]
        x = 16 + i * 56
        f.rect(x, 48, 50, 40, fill=fill, stroke=stroke, sw=1.5)
        f.text(x + 25, 74, f"W{i}", anchor="middle", bold=True, fill="#ffffff" if st == "selected" else "#222222")
    f.arrow(16 + 4 * 56 + 25, 90, 16 + 4 * 56 + 25, 122, stroke=BLUE, sw=2)
    f.box(90, 126, 300, 34, "issue: 1 instruction, 32 threads", fill=FILL_BLUE, stroke=BLUE)
    y = 196
    for st, text1, text2 in (
        ("stalled", "Stalled: operand not ready, barrier,", "pipe or memory path full, no fetch"),
        ("eligible", "Eligible: could issue this clock", ""),
        ("selected", "Selected: the one eligible warp", "the scheduler picks"),
    ):
        fill, stroke = style[st]
        f.rect(16, y - 14, 18, 18, fill=fill, stroke=stroke, rx=2)
        f.text(42, y, text1)
        if text2:
            f.text(42, y + 20, text2)
        y += 46 if text2 else 30
    return f.save()


def f09_ffma_chains():
    f = Fig(
        "09-ffma-chains.svg",
        290,
        "Little's law for FFMA: four independent chains fill the issue slot",
        "Two timelines of one processing block's issue slot over twelve clocks, with an FFMA latency of four "
        "clocks. With one dependent chain, an FFMA issues every fourth clock and the slot is busy a quarter of "
        "the time. With four independent chains, from four warps or from one warp with four accumulators, an "
        "FFMA issues on every clock.",
    )
    f.heading("FFMA latency 4 clocks, 12 clocks shown")
    x0, px = 16, 37
    colours = [BLUE, GREEN, ORANGE, PURPLE]
    f.text(16, 64, "One dependent chain: busy 3 of 12", bold=True)
    for c in range(12):
        busy = c % 4 == 0
        f.rect(
            x0 + c * px, 72, px - 3, 32, fill=BLUE if busy else "#ffffff", stroke=BLUE if busy else GRID, sw=1.2, rx=2
        )
        if c % 4 == 0 and c < 8:
            f.arrow(x0 + c * px + px / 2, 108, x0 + (c + 4) * px + px / 2 - 4, 108, stroke=GREY, sw=1.2)
    f.text(x0 + 2 * px, 128, "waits 4 clocks for its own result", anchor="start", fill=GREY)
    f.text(16, 172, "Four independent chains: busy 12 of 12", bold=True)
    for c in range(12):
        col = colours[c % 4]
        f.rect(x0 + c * px, 180, px - 3, 32, fill=col, stroke=col, sw=1.2, rx=2)
        f.text(x0 + c * px + (px - 3) / 2, 201, str(c % 4 + 1), anchor="middle", fill="#ffffff", bold=True)
    f.note(240, "Chains 1-4: four warps, or one warp with four")
    f.note(262, "accumulators; in flight = throughput × latency")
    f.note(284, "= 1 per clock × 4 clocks = 4.")
    return f.save()


def f09_bytes_in_flight():
    f = Fig(
        "09-bytes-in-flight.svg",
        330,
        "Bytes in flight per SM against the 32 KB that HBM needs",
        "Horizontal bars of bytes in flight per SM, in KB, against a dashed line at the 32 KB that 4.2 TB/s "
        "times a microsecond of latency, shared by 132 SMs, requires. A vector add loading one float of each "
        "input, 2,048 threads: 16 KB. The same with a float4 of each input, 1,024 threads: 32 KB. The copy with "
        "four float4 loads per thread, 512 threads: 32 KB. A plain copy of one float per thread, 2,048 threads: "
        "8 KB.",
    )
    f.heading("Bytes in flight per SM (KB)")
    s = Scale(0, 40, 16, 400)
    haxis(f, s, 46, 250, [0, 8, 16, 24, 32, 40])
    hbars(
        f,
        [
            ("Add, 1 float per input: 8 B × 2,048", 16, ORANGE, "16"),
            ("Add, float4 per input: 32 B × 1,024", 32, GREEN, "32"),
            ("copy_ilp, 4 float4: 64 B × 512", 32, GREEN, "32"),
            ("Plain copy, 1 float: 4 B × 2,048", 8, RED, "8"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=46,
    )
    f.line(s(32), 40, s(32), 252, stroke=BLUE, sw=2, dash="6 4")
    f.text(16, 296, "Dashed: 4.2 TB/s × 1 µs ÷ 132 SMs ≈ 32 KB.", fill=BLUE, bold=True)
    f.note(318, "Threads are the maximum per SM, or fewer with ILP.")
    return f.save()


# 10 -------------------------------------------------------------------------------------------------------
def f10_operand_bandwidth():
    f = Fig(
        "10-operand-bandwidth.svg",
        290,
        "Bytes per clock per SM from registers, shared memory and HBM",
        "Horizontal bars per SM per clock on an H100 or H200: the register file supplies about 1,536 bytes of "
        "operands, three 4-byte operands for 32 lanes in each of four processing blocks; shared memory delivers "
        "128 bytes; the SM's share of HBM is about 17 bytes.",
    )
    f.heading("Operand bytes per clock, one SM")
    s = Scale(0, 1600, 16, 390)
    haxis(f, s, 46, 200, [0, 400, 800, 1200, 1600], label_fmt=lambda t: f"{t:,}")
    hbars(
        f,
        [
            ("Registers: 4 × 32 lanes × 3 operands × 4 B", 1536, PURPLE, "1,536"),
            ("Shared memory: 32 banks × 4 B", 128, GREEN, "128"),
            ("HBM share (capsule 6)", 17, ORANGE, "17"),
        ],
        top=66,
        scale=s,
        bar_h=20,
        gap=46,
    )
    f.note(240, "More than ten times shared memory: only registers")
    f.note(262, "feed the FMA units at one load per FMA.")
    return f.save()


def f10_kernel5():
    f = Fig(
        "10-kernel5-cap.svg",
        390,
        "Kernel 5 at 162 registers and capped at 128",
        "Two register files of 65,536 registers. At 162 registers per thread, allocated 168, one 256-thread block "
        "takes 43,008 registers and a second does not fit, so 22,528 stay unused: 8 warps, 32.0 percent of "
        "cuBLAS on the H200. Capped at 128 registers, two blocks of 32,768 fill the file: 16 warps, 47.9 "
        "percent of cuBLAS.",
    )
    f.heading("One SM's 65,536 registers, kernel 5")
    s = Scale(0, 65536, 16, 464)
    f.text(16, 62, "162 registers (168 allocated): 1 block, 8 warps", bold=True)
    f.box(16, 70, s(43008) - 16, 36, "block 1: 43,008", fill=FILL_BLUE, stroke=BLUE)
    f.rect(s(43008), 70, 464 - s(43008), 36, fill="#ffffff", stroke=RED, dash="4 3", sw=1.5)
    f.text((s(43008) + 464) / 2, 93, "unused 22,528", anchor="middle", fill=RED)
    f.text(16, 144, "capped at 128: 2 blocks, 16 warps", bold=True)
    f.box(16, 152, s(32768) - 16, 36, "block 1: 32,768", fill=FILL_BLUE, stroke=BLUE)
    f.box(s(32768), 152, 464 - s(32768), 36, "block 2: 32,768", fill=FILL_GREEN, stroke=GREEN)
    f.heading("Speed, % of cuBLAS on the H200", y=236)
    p = Scale(0, 60, 16, 400)
    hbars(
        f,
        [("162 registers, 1 block", 32.0, BLUE, "32.0%"), ("128 registers, 2 blocks", 47.9, GREEN, "47.9%")],
        top=266,
        scale=p,
        bar_h=20,
        gap=48,
    )
    f.note(372, "Same source, one launch bound: 1.5 times faster.")
    return f.save()


def f10_outer_product():
    f = Fig(
        "10-outer-product.svg",
        380,
        "An 8 by 8 register tile as an outer product",
        "One thread's 8 by 8 tile of outputs, 64 accumulators held in registers. At each step along k the thread "
        "loads a column of 8 values of A and a row of 8 values of B from shared memory, 16 loads, and performs "
        "the 64 multiply-adds of their outer product: 4 FMAs per load, against 1 FMA per 2 loads for a 1 by 1 "
        "tile. It costs 64 accumulators plus 16 operands, 80 registers before addresses.",
    )
    f.heading("Thread tile T_M = T_N = 8, one k step")
    u = 24
    gx, gy = 70, 90
    for i in range(8):
        f.rect(gx - u - 10, gy + i * u, u, u - 2, fill=FILL_BLUE, stroke=BLUE, sw=1, rx=2)
        f.rect(gx + i * u, gy - u - 10, u - 2, u, fill=FILL_GREEN, stroke=GREEN, sw=1, rx=2)
        for j in range(8):
            f.rect(gx + j * u, gy + i * u, u - 2, u - 2, fill=FILL_ORANGE, stroke=ORANGE, sw=0.8, rx=1)
    f.text(gx - u - 10, gy - 16, "A", bold=True, fill=BLUE)
    f.text(gx + 8 * u + 4, gy - 18, "B", bold=True, fill=GREEN)
    f.text(gx + 4 * u, gy + 8 * u + 22, "64 accumulators", anchor="middle", bold=True, fill=ORANGE)
    tx = 290
    for i, (s, bold) in enumerate(
        [
            ("Per k step:", True),
            ("8 + 8 = 16 loads", False),
            ("8 × 8 = 64 FMAs", False),
            ("4 FMAs per load", True),
            ("", False),
            ("1 × 1 tile:", True),
            ("2 loads per FMA", False),
            ("", False),
            ("Registers:", True),
            ("64 + 16 = 80", False),
        ]
    ):
        if s:
            f.text(tx, 90 + i * 22, s, bold=bold)
    f.note(352, "FMAs per load = T_M·T_N / (T_M + T_N)")
    f.note(372, "Bigger tiles reuse more and need more registers.")
    return f.save()


if __name__ == "__main__":
    for fn in [
        f06_grid_to_sms,
        f06_residency,
        f06_bytes_per_clock,
        f07_pipe_clocks,
        f07_silu,
        f07_attention_split,
        f08_mma_shape,
        f08_generations,
        f08_precision,
        f09_warp_states,
        f09_ffma_chains,
        f09_bytes_in_flight,
        f10_operand_bandwidth,
        f10_kernel5,
        f10_outer_product,
    ]:
        print(fn())

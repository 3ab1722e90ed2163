"""Triton 01 - one program per row: the whole row in registers where it fits, an online two-pass loop where it does not

Change versus the CUDA ladder: the same problem written as blocks of data, not threads. A program owns a row; Triton
spreads its lanes over the warps, makes the reductions, and chooses the loads. Two builds of the file, one per
kind of row, are launched at every shape; the one a shape is not for gets a grid of one program, which returns at
once (the 4096 in the grids is ROW_BLOCK).
Rows of up to 4096 (the 4096 x 4096 benchmark), softmax_row: the program loads its row once into registers
(16 values a thread over 8 warps), takes the maximum, exp2((x - max) * log2 e), the sum, and writes exp * (1 / sum):
x read once, y written once, the 8 bytes an element of the roofline. Lanes past the row load -inf and add 0.
Longer rows (the 32 x 131072 benchmark), softmax_looped: 16 warps stream the row in 4096-wide chunks keeping a
running maximum and sum per lane (the sum rescaled by exp2((old - new) * log2 e) when the maximum grows), fold the
lanes into the row's maximum and sum, then read the row again (from L2: a row is at most a few hundred KB) to write
it. The first chunk is whole (cols > 4096), so every lane's maximum is finite from then on.
Precision: the difference x - max is taken before the multiplication by log2 e; x * log2 e rounded at |x| near 1e4
would be off by 1e-3 in the exponent, over the tolerance. Everything is FP32. No alignment beyond 4 bytes is
promised, so the loads are 4-byte (coalesced, many in flight a thread).
Prediction: near the copy bandwidth at 4096 x 4096. The 32 long rows use only 32 SMs, which the CUDA cluster rung
(03) avoids by splitting each row over a cluster; this rung does not, so it should trail there.
"""

import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def softmax_row(rows, cols, x, y, ROW_BLOCK: tl.constexpr):
    if cols <= ROW_BLOCK:
        row = tl.program_id(0).to(tl.int64)
        lanes = tl.arange(0, ROW_BLOCK)
        inside = lanes < cols
        v = tl.load(x + row * cols + lanes, mask=inside, other=float("-inf"))
        e = tl.math.exp2((v - tl.max(v, 0)) * LOG2E)
        tl.store(y + row * cols + lanes, e * (1.0 / tl.sum(e, 0)), mask=inside)


@triton.jit
def softmax_looped(rows, cols, x, y, ROW_BLOCK: tl.constexpr, CHUNK: tl.constexpr):
    if cols > ROW_BLOCK:
        row = tl.program_id(0).to(tl.int64)
        x_row = x + row * cols
        y_row = y + row * cols
        lanes = tl.arange(0, CHUNK)
        lane_max = tl.full([CHUNK], float("-inf"), tl.float32)
        lane_sum = tl.zeros([CHUNK], tl.float32)
        for start in range(0, cols, CHUNK):
            v = tl.load(x_row + start + lanes, mask=start + lanes < cols, other=float("-inf"))
            grown = tl.maximum(lane_max, v)
            lane_sum = lane_sum * tl.math.exp2((lane_max - grown) * LOG2E) + tl.math.exp2((v - grown) * LOG2E)
            lane_max = grown
        row_max = tl.max(lane_max, 0)
        inverse = 1.0 / tl.sum(lane_sum * tl.math.exp2((lane_max - row_max) * LOG2E), 0)
        for start in range(0, cols, CHUNK):
            inside = start + lanes < cols
            v = tl.load(x_row + start + lanes, mask=inside, other=float("-inf"))
            tl.store(y_row + start + lanes, tl.math.exp2((v - row_max) * LOG2E) * inverse, mask=inside)


# Rows of up to 4096 (ROW_BLOCK) in registers, longer ones looped; the build a shape is not for runs one program.
PLAN = """
[[launch]]
kernel = "softmax_row"
grid = ["max(1, rows * (1 - min(1, (cols - 1) // 4096)))"]
num_warps = 8
constexprs = { ROW_BLOCK = 4096 }

[[launch]]
kernel = "softmax_looped"
grid = ["max(1, rows * min(1, (cols - 1) // 4096))"]
num_warps = 16
constexprs = { ROW_BLOCK = 4096, CHUNK = 4096 }
"""

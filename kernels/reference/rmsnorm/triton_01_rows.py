"""Triton 01 - one program per row: the whole row in registers where it fits, two passes over it where it does not

Change versus the CUDA ladder: the same problem written as blocks of data, not threads. Two builds of the file, one
per kind of row, are launched at every shape; the one a shape is not for gets a grid of one program, which returns
at once (the 4096 in the grids is ROW_BLOCK).
Rows of up to 4096 (the 8192 x 4096 benchmark), rmsnorm_row: the program loads its BF16 row once (16 values a thread
over 8 warps), widens it to FP32, sums the squares in FP32 (a tree over the lanes, no BF16 on the way), takes
r = 1 / sqrt(mean + eps) once per row, each step correctly rounded (div_rn, sqrt_rn), so the work per element is
two multiplications, and writes bf16(x * r * w), rounded once to nearest even: x and w read once, y written once.
Longer rows, rmsnorm_looped: 16 warps sum the squares over 4096-wide chunks into FP32 lanes, then read the row
again (from L2) to write it. Lanes past the row load 0 and add nothing; memory past the ends is never read.
Alignment: none beyond 2 bytes is promised, so the loads are 2-byte (coalesced, many in flight a thread); CUDA rung
02 checks the alignment at run time for its 16-byte path, which this rung does not.
Prediction: near the copy bandwidth at 8192 x 4096.
"""

import triton
import triton.language as tl


@triton.jit
def rmsnorm_row(rows, hidden, eps, x, w, y, ROW_BLOCK: tl.constexpr):
    if hidden <= ROW_BLOCK:
        row = tl.program_id(0).to(tl.int64)
        lanes = tl.arange(0, ROW_BLOCK)
        inside = lanes < hidden
        v = tl.load(x + row * hidden + lanes, mask=inside, other=0.0).to(tl.float32)
        r = tl.math.div_rn(1.0, tl.sqrt_rn(tl.math.div_rn(tl.sum(v * v, 0), hidden.to(tl.float32)) + eps))
        g = tl.load(w + lanes, mask=inside, other=0.0).to(tl.float32)
        tl.store(y + row * hidden + lanes, (v * r * g).to(tl.bfloat16), mask=inside)


@triton.jit
def rmsnorm_looped(rows, hidden, eps, x, w, y, ROW_BLOCK: tl.constexpr, CHUNK: tl.constexpr):
    if hidden > ROW_BLOCK:
        row = tl.program_id(0).to(tl.int64)
        x_row = x + row * hidden
        y_row = y + row * hidden
        lanes = tl.arange(0, CHUNK)
        squares = tl.zeros([CHUNK], tl.float32)
        for start in range(0, hidden, CHUNK):
            v = tl.load(x_row + start + lanes, mask=start + lanes < hidden, other=0.0).to(tl.float32)
            squares += v * v
        r = tl.math.div_rn(1.0, tl.sqrt_rn(tl.math.div_rn(tl.sum(squares, 0), hidden.to(tl.float32)) + eps))
        for start in range(0, hidden, CHUNK):
            inside = start + lanes < hidden
            v = tl.load(x_row + start + lanes, mask=inside, other=0.0).to(tl.float32)
            g = tl.load(w + start + lanes, mask=inside, other=0.0).to(tl.float32)
            tl.store(y_row + start + lanes, (v * r * g).to(tl.bfloat16), mask=inside)


# Rows of up to 4096 (ROW_BLOCK) in registers, longer ones looped; the build a shape is not for runs one program.
PLAN = """
[[launch]]
kernel = "rmsnorm_row"
grid = ["max(1, rows * (1 - min(1, (hidden - 1) // 4096)))"]
num_warps = 8
constexprs = { ROW_BLOCK = 4096 }

[[launch]]
kernel = "rmsnorm_looped"
grid = ["max(1, rows * min(1, (hidden - 1) // 4096))"]
num_warps = 16
constexprs = { ROW_BLOCK = 4096, CHUNK = 4096 }
"""

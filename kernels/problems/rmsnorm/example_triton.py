"""RMSNorm with Triton: one program per row, two passes over it in BLOCK-wide chunks, so any row length works. The
first pass adds up the squares of the row in FP32 (each lane its own running sum, a tree across the lanes at the
end), which gives r = 1 / sqrt(sum / hidden + eps) once per row; the second pass writes bf16(x * r * w), rounded
once to nearest even. Lanes past the end of the row load 0 and add nothing; memory past it is never read.

To make it faster, first keep the row in registers when it fits (one BLOCK as wide as the row, a row read once
instead of twice), and give each thread more elements in flight with more warps."""

import triton
import triton.language as tl


@triton.jit
def rmsnorm(rows, hidden, eps, x, w, y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x + row * hidden
    y_row = y + row * hidden
    lanes = tl.arange(0, BLOCK)
    squares = tl.zeros([BLOCK], tl.float32)
    for start in range(0, hidden, BLOCK):
        v = tl.load(x_row + start + lanes, mask=start + lanes < hidden, other=0.0).to(tl.float32)
        squares += v * v
    r = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / hidden + eps)
    for start in range(0, hidden, BLOCK):
        mask = start + lanes < hidden
        v = tl.load(x_row + start + lanes, mask=mask, other=0.0).to(tl.float32)
        g = tl.load(w + start + lanes, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + start + lanes, (v * r * g).to(tl.bfloat16), mask=mask)


PLAN = """
[[launch]]
kernel = "rmsnorm"
grid = ["rows"]
num_warps = 4
constexprs = { BLOCK = 1024 }
"""

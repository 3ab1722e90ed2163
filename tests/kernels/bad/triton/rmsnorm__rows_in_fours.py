"""Four rows a program (a ROWS x BLOCK tile: the 2-D idiom for short rows), but the grid rounds the row count down,
max(1, rows // 4): the rows % 4 last rows are never written and keep the judge's NaN. Right at 1 x 1 and 3 x 1000
(one program covers them, masked), wrong at 17 x 4097 and 129 x 8191 (row 16, row 128); the benchmark's 8192 rows
are a multiple of four. The CUDA set's gemv__rows_skipped.cu, in rows of a matrix."""

import triton
import triton.language as tl


@triton.jit
def rmsnorm_rows(rows, hidden, eps, x, w, y, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = row < rows
    lanes = tl.arange(0, BLOCK)
    base = row.to(tl.int64)[:, None] * hidden
    squares = tl.zeros([ROWS, BLOCK], tl.float32)
    for start in range(0, hidden, BLOCK):
        inside = row_ok[:, None] & (start + lanes < hidden)[None, :]
        v = tl.load(x + base + start + lanes[None, :], mask=inside, other=0.0).to(tl.float32)
        squares += v * v
    mean = tl.math.div_rn(tl.sum(squares, 1), hidden.to(tl.float32))
    r = tl.math.div_rn(1.0, tl.sqrt_rn(mean + eps))
    for start in range(0, hidden, BLOCK):
        col_ok = start + lanes < hidden
        inside = row_ok[:, None] & col_ok[None, :]
        v = tl.load(x + base + start + lanes[None, :], mask=inside, other=0.0).to(tl.float32)
        g = tl.load(w + start + lanes, mask=col_ok, other=0.0).to(tl.float32)
        tl.store(y + base + start + lanes[None, :], (v * r[:, None] * g[None, :]).to(tl.bfloat16), mask=inside)


PLAN = """
[[launch]]
kernel = "rmsnorm_rows"
grid = ["max(1, rows // 4)"]
num_warps = 8
constexprs = { ROWS = 4, BLOCK = 1024 }
"""

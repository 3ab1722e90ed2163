"""No shift by the row's maximum: exp overflows to infinity on the rows near +-1e4, and inf / inf is NaN."""

import triton
import triton.language as tl


@triton.jit
def softmax(rows, cols, x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * cols
    y_row = y_ptr + row.to(tl.int64) * cols
    offsets = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        total += tl.where(mask, tl.exp(tl.load(x_row + start + offsets, mask=mask, other=0.0)), 0.0)
    row_sum = tl.sum(total, axis=0)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        x = tl.load(x_row + start + offsets, mask=mask, other=0.0)
        tl.store(y_row + start + offsets, tl.exp(x) / row_sum, mask=mask)


PLAN = """
[[launch]]
kernel = "softmax"
grid = ["rows"]
constexprs = { BLOCK = 1024 }
"""

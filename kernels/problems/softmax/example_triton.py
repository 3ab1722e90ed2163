"""Row softmax with Triton: one program per row, the row read in BLOCK-wide chunks twice (online maximum and sum,
then the normalised write), so any column count works; masked lanes read -inf and add nothing."""

import triton
import triton.language as tl


@triton.jit
def softmax(rows, cols, x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * cols
    y_row = y_ptr + row.to(tl.int64) * cols
    offsets = tl.arange(0, BLOCK)
    running_max = tl.full([BLOCK], float("-inf"), tl.float32)
    running_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        x = tl.load(x_row + start + offsets, mask=mask, other=float("-inf"))
        new_max = tl.maximum(running_max, x)
        scale = tl.where(new_max == float("-inf"), 0.0, tl.exp(running_max - new_max))
        running_sum = running_sum * scale + tl.where(mask, tl.exp(x - new_max), 0.0)
        running_max = new_max
    row_max = tl.max(running_max, axis=0)
    lane_scale = tl.where(running_max == float("-inf"), 0.0, tl.exp(running_max - row_max))
    row_sum = tl.sum(running_sum * lane_scale, axis=0)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        x = tl.load(x_row + start + offsets, mask=mask, other=float("-inf"))
        tl.store(y_row + start + offsets, tl.exp(x - row_max) / row_sum, mask=mask)


PLAN = """
[[launch]]
kernel = "softmax"
grid = ["rows"]
num_warps = 4
constexprs = { BLOCK = 1024 }
"""

"""Uses the input as scratch: the first pass stores exp(x - max) back into x so the last pass reads it instead of
computing the exponential again. Every y is right, but x is a const input: its fingerprint, taken on the host before
the launch, no longer matches after it ("the kernel modified its input x"). The CUDA set's tamper_inputs.cu."""

import triton
import triton.language as tl


@triton.jit
def softmax(rows, cols, x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * cols
    y_row = y_ptr + row.to(tl.int64) * cols
    offsets = tl.arange(0, BLOCK)
    running_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        running_max = tl.maximum(running_max, tl.load(x_row + start + offsets, mask=mask, other=float("-inf")))
    row_max = tl.max(running_max, axis=0)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        e = tl.exp(tl.load(x_row + start + offsets, mask=mask, other=float("-inf")) - row_max)
        tl.store(x_row + start + offsets, e, mask=mask)  # the mistake: x is the judge's, not scratch
        total += tl.where(mask, e, 0.0)
    row_sum = tl.sum(total, axis=0)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        tl.store(y_row + start + offsets, tl.load(x_row + start + offsets, mask=mask) / row_sum, mask=mask)


PLAN = """
[[launch]]
kernel = "softmax"
grid = ["rows"]
constexprs = { BLOCK = 1024 }
"""

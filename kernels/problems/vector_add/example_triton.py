"""C = A + B with Triton: each program adds one block of BLOCK_SIZE elements; the mask covers the ragged tail."""

import triton
import triton.language as tl


@triton.jit
def vector_add(a_ptr, b_ptr, c_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


PLAN = """
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 1024)"]
num_warps = 4
constexprs = { BLOCK_SIZE = 1024 }
"""

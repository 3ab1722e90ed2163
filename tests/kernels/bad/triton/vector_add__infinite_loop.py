"""A loop whose condition never turns false on the GPU: the GPU stage's time limit must end it."""

import triton
import triton.language as tl


@triton.jit
def vector_add(a_ptr, b_ptr, c_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    spin = 0
    while spin >= 0:  # always: each pass stores, so no compiler may drop the loop
        spin = (spin + 1) % 1024
        tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask), mask=mask)


PLAN = """
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 1024)"]
constexprs = { BLOCK_SIZE = 1024 }
"""

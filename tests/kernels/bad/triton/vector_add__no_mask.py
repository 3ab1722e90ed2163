"""No mask: the last block reads past A's and B's ends and writes past C's (the guard bands see it)."""

import triton
import triton.language as tl


@triton.jit
def vector_add(a_ptr, b_ptr, c_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets) + tl.load(b_ptr + offsets))


PLAN = """
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 1024)"]
constexprs = { BLOCK_SIZE = 1024 }
"""

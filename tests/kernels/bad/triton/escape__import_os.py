"""An import of os, for a shell later."""

import os

import triton
import triton.language as tl

@triton.jit
def vector_add(a_ptr, b_ptr, c_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask), mask=mask)


PLAN = """
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 1024)"]
constexprs = { BLOCK_SIZE = 1024 }
"""

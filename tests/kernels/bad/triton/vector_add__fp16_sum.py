"""The sum rounded through FP16: about 3 decimal digits, far outside FP32's tolerance."""

import triton
import triton.language as tl


@triton.jit
def vector_add(a_ptr, b_ptr, c_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask).to(tl.float16)
    b = tl.load(b_ptr + offsets, mask=mask).to(tl.float16)
    tl.store(c_ptr + offsets, (a + b).to(tl.float32), mask=mask)


PLAN = """
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 1024)"]
constexprs = { BLOCK_SIZE = 1024 }
"""

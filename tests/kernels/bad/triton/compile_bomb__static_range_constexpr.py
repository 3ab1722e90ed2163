"""A compile-time bomb the parse check cannot see: tl.static_range over a constexpr the plan sets to a million.
The compile stage's wall-clock limit ends it."""

import triton
import triton.language as tl


@triton.jit
def vector_add(a_ptr, b_ptr, c_ptr, n, UNROLL: tl.constexpr):
    acc = 0.0
    for i in tl.static_range(UNROLL):
        acc += tl.load(a_ptr + i % n)
    tl.store(c_ptr, acc)


PLAN = """
[[launch]]
kernel = "vector_add"
grid = [1]
constexprs = { UNROLL = 1000000 }
"""

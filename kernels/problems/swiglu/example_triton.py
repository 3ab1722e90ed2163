"""SwiGLU with Triton: out = silu(gate) * up, element by element. gate and up have the same shape, so the index is
flat: each program handles BLOCK consecutive elements (a mask covers the ragged tail), widens them to FP32,
computes g / (1 + exp(-g)) * u and rounds once to BF16 (Triton's conversion rounds to nearest even).

To make it faster, first give each thread more elements in flight (a larger BLOCK, or several blocks per
program): the kernel is bound by memory bandwidth, and Triton already makes the loads and stores coalesced."""

import triton
import triton.language as tl


@triton.jit
def swiglu(tokens, inter, gate_ptr, up_ptr, out_ptr, BLOCK: tl.constexpr):
    # tokens * inter stays below 2^31 at every shape of the problem, so 32-bit offsets suffice.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < tokens * inter
    g = tl.load(gate_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    # exp(-g) overflows to inf for g below about -88: g / inf is -0, which is silu's limit there.
    out = g / (1.0 + tl.exp(-g)) * u
    tl.store(out_ptr + offsets, out.to(tl.bfloat16), mask=mask)


PLAN = """
[[launch]]
kernel = "swiglu"
grid = ["cdiv(tokens * inter, 1024)"]
num_warps = 4
constexprs = { BLOCK = 1024 }
"""

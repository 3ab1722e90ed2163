"""Matrix transpose with Triton: each program moves one BLOCK x BLOCK tile, reading rows i0.. of `in` along their
length and writing the same elements to out[j * M + i]. Both edges are masked, so any M and N work; nothing but
loads and stores touches the values, so every bit arrives as it left.

Triton makes both sides coalesced on its own: it gives the load and the store each a layout that runs along
their contiguous dimension and turns the tile between them through shared memory (what the CUDA starter does by
hand). To make it faster, first try larger tiles (64 x 64) with more warps, so that each thread moves several
elements, and check the profile for shared-memory bank conflicts."""

import triton
import triton.language as tl


@triton.jit
def transpose(M, N, in_ptr, out_ptr, BLOCK: tl.constexpr):
    # `in` is a Python keyword, so the parameter has another name; parameters are matched by position.
    i = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[:, None]  # rows of `in`, columns of `out`
    j = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[None, :]  # columns of `in`, rows of `out`
    mask = (i < M) & (j < N)
    tile = tl.load(in_ptr + i * N + j, mask=mask)
    tl.store(out_ptr + j * M + i, tile, mask=mask)


PLAN = """
[[launch]]
kernel = "transpose"
grid = ["cdiv(N, 32)", "cdiv(M, 32)"]
num_warps = 4
constexprs = { BLOCK = 32 }
"""

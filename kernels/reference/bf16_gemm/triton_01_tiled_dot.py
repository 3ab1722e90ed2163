"""Triton 01 - 128 x 256 tiles of tl.dot, three stages, grouped program order: the GEMM in one screen of Python

Change versus the CUDA ladder: no TMA descriptors, no warp specialisation, no persistent scheduling. Each program
computes one 128 x 256 tile of C, walking K in 64-wide slices: a 128 x 64 tile of A and a 64 x 256 tile of B go to
shared memory and tl.dot multiplies them on the tensor cores (wgmma on sm_90a) into an FP32 accumulator held in
registers, 128 values a thread over 8 warps. num_stages = 3 lets Triton's software pipeliner keep two slices in
flight (cp.async into a 3-deep ring, 144 KB of shared memory) while the third is multiplied.
Order: the programs run in a grouped order, GROUP_M tile rows sweeping the tile columns together, so the B panels
they share and their own A panels are read from L2 rather than from memory (what the CUDA rungs' rasterisation
does). The epilogue reads C, computes alpha * acc + beta * C in FP32 and rounds once to BF16 (round to nearest
even).
Wide loads: N and K are multiples of 8, so a row of A, B or C is whole 16-byte chunks, and the arrays are 16-byte
aligned (the judge tells Triton so). Triton cannot see the first, so the kernel writes the strides as (N // 8) * 8
and (K // 8) * 8: equal to N and K by the contract, and provably multiples of 8 to Triton's alignment analysis,
which then issues 16-byte cp.async copies and 8-wide masks. Ragged edges (M anywhere, N and K off the tile sizes)
are masked: reads past them load zeros and add nothing, writes past them are dropped. Tile bases are 64-bit, so no
offset overflows at any M.
Prediction: a large fraction of cuBLAS at 4096^3 and 8192^3, below CUDA rung 04 (clusters, TMA multicast, a
persistent scheduler), which Triton's model does not express.
"""

import triton
import triton.language as tl


@triton.jit
def bf16_gemm(
    M,
    N,
    K,
    alpha,
    A,
    B,
    beta,
    C,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # Grouped order: program ids run down GROUP_M tile rows before moving one tile column right.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % group_rows
    tile_n = (pid % per_group) // group_rows

    # N and K are multiples of 8 (the contract): written so, Triton's analysis knows it too.
    n8 = (N // 8) * 8
    k8 = (K // 8) * 8

    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_ok = tile_m * BLOCK_M + rows < M
    col_ok = tile_n * BLOCK_N + cols < n8
    a_tile = A + (tile_m * BLOCK_M).to(tl.int64) * k8
    b_tile = B + tile_n * BLOCK_N
    a_ptrs = a_tile + rows[:, None] * k8 + ks[None, :]
    b_ptrs = b_tile + ks[:, None] * n8 + cols[None, :]

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, k8, BLOCK_K):
        k_ok = k0 + ks < k8
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * n8

    # Epilogue: FP32 alpha * AB + beta * C, one rounding to BF16.
    c_ptrs = C + (tile_m * BLOCK_M).to(tl.int64) * n8 + tile_n * BLOCK_N + rows[:, None] * n8 + cols[None, :]
    c_ok = row_ok[:, None] & col_ok[None, :]
    old = tl.load(c_ptrs, mask=c_ok, other=0.0).to(tl.float32)
    tl.store(c_ptrs, (alpha * acc + beta * old).to(tl.bfloat16), mask=c_ok)


PLAN = """
[[launch]]
kernel = "bf16_gemm"
grid = ["cdiv(M, 128) * cdiv(N, 256)"]
num_warps = 8
num_stages = 3
constexprs = { BLOCK_M = 128, BLOCK_N = 256, BLOCK_K = 64, GROUP_M = 8 }
"""

"""The accumulator kept in BF16 between K slices (half the registers of an FP32 one, the tempting saving): each
slice's tl.dot still sums in FP32, but the running total is rounded to BF16 after every slice, ceil(K / 32) roundings
where the contract allows one. Every test shape fails, 1 x 8 x 8 already (one slice: the sum rounded to BF16, then
alpha * sum + beta * C rounded again; a NumPy model of this kernel against the judge's comparison puts 4 of its 8
elements outside one correct rounding, and 41 to 64 % of them at the other shapes). The CUDA set's
bf16_gemm__bf16_splitk.cu makes the same mistake once, between two launches."""

import triton
import triton.language as tl


@triton.jit
def bf16_gemm(M, N, K, alpha, A, B, beta, C, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tile_m = tl.program_id(0)
    tile_n = tl.program_id(1)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_ok = rows < M
    col_ok = cols < N
    a_ptrs = A + rows.to(tl.int64)[:, None] * K + ks[None, :]
    b_ptrs = B + ks[:, None] * N + cols[None, :]

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.bfloat16)
    for k0 in range(0, K, BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc.to(tl.float32)).to(tl.bfloat16)  # the mistake: a rounding per slice
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N

    c_ptrs = C + rows.to(tl.int64)[:, None] * N + cols[None, :]
    c_ok = row_ok[:, None] & col_ok[None, :]
    old = tl.load(c_ptrs, mask=c_ok, other=0.0).to(tl.float32)
    tl.store(c_ptrs, (alpha * acc.to(tl.float32) + beta * old).to(tl.bfloat16), mask=c_ok)


PLAN = """
[[launch]]
kernel = "bf16_gemm"
grid = ["cdiv(M, 64)", "cdiv(N, 64)"]
num_warps = 4
num_stages = 3
constexprs = { BLOCK_M = 64, BLOCK_N = 64, BLOCK_K = 32 }
"""

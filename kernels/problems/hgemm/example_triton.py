"""HGEMM with Triton: C = alpha * A B + beta * C, A and B FP16, C FP32. Each program computes one BLOCK_M x BLOCK_N
tile of C: it walks K in BLOCK_K-wide steps, loads a tile of A and a tile of B (masked at the ragged edges, zeros
past them, so any M, N and K work) and adds their product into an FP32 accumulator with tl.dot, which runs on the
tensor cores (FP16 operands, FP32 accumulation); then it reads the tile of C and writes alpha * acc + beta * C.
Triton stages the tiles through shared memory and overlaps the next steps' loads with the math (num_stages).

To make it faster, first tune the tile shape, warps and stages (128 x 128 tiles, BLOCK_K 64), then order the
programs so that neighbours share tiles of A and B in L2 (grouped program ids). No alignment is promised, so
Triton loads 2 bytes at a time here; wider loads need rows known to start at 16-byte boundaries."""

import triton
import triton.language as tl


@triton.jit
def hgemm(M, N, K, alpha, A, B, beta, C, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        a = tl.load(A + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(B + k[:, None] * N + cols[None, :], mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    c_ptrs = C + rows[:, None] * N + cols[None, :]
    c = tl.load(c_ptrs, mask=mask, other=0.0)
    tl.store(c_ptrs, alpha * acc + beta * c, mask=mask)


PLAN = """
[[launch]]
kernel = "hgemm"
grid = ["cdiv(N, 64)", "cdiv(M, 64)"]
num_warps = 4
num_stages = 3
constexprs = { BLOCK_M = 64, BLOCK_N = 64, BLOCK_K = 32 }
"""

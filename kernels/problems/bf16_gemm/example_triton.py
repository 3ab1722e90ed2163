"""BF16 GEMM with Triton: C = alpha * A B + beta * C, A, B and C BF16. Each program computes one BLOCK_M x BLOCK_N
tile of C: it walks K in BLOCK_K-wide steps, loads a tile of A and a tile of B (masked at the ragged edges, zeros
past them, so any M, N and K work) and adds their product into an FP32 accumulator with tl.dot, which
runs on the tensor cores (BF16 operands, FP32 accumulation); then it reads the tile of C, computes
alpha * acc + beta * C in FP32 and rounds it to BF16 once. Triton stages the tiles through shared memory and
overlaps the next steps' loads with the math (num_stages).

To make it faster, first tune the tile shape, warps and stages (128 x 256 tiles, BLOCK_K 64, 8 warps), then order
the programs so that neighbours share tiles of A and B in L2 (grouped program ids). The contract makes N and K
multiples of 8, so rows are whole 16-byte chunks: writing the strides so that Triton can see it, (K // 8) * 8,
lets it copy 16 bytes at a time."""

import triton
import triton.language as tl


@triton.jit
def bf16_gemm(M, N, K, alpha, A, B, beta, C, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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
    c = tl.load(c_ptrs, mask=mask, other=0.0).to(tl.float32)
    tl.store(c_ptrs, (alpha * acc + beta * c).to(tl.bfloat16), mask=mask)


PLAN = """
[[launch]]
kernel = "bf16_gemm"
grid = ["cdiv(N, 64)", "cdiv(M, 64)"]
num_warps = 4
num_stages = 3
constexprs = { BLOCK_M = 64, BLOCK_N = 64, BLOCK_K = 32 }
"""

"""Batched GEMV with Triton: y[b, n] = bf16(sum_k W[n, k] x[b, k]). Each program computes BLOCK_N outputs of one
vector b: it walks K in BLOCK_K-wide steps, multiplies a BLOCK_N x BLOCK_K tile of W by the matching slice of x
in FP32 and keeps the products in an FP32 tile of partial sums, which it adds up along K once at the end (a
tree, no BF16 on the way) and rounds to BF16 once. Masks cover the ragged edges in N and K.

The B programs that share a tile of W are neighbours in the grid (b is its first axis, the one that runs
fastest), so they run at about the same time and all but the first tend to find the tile in L2.

To make it faster, first have one program handle all B vectors of its tile of W (W is then read once, into
registers), then widen the loads where the rows are 16-byte aligned."""

import triton
import triton.language as tl


@triton.jit
def gemv(N, K, B, W, x, y, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    b = tl.program_id(0)
    rows = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = tl.arange(0, BLOCK_K)
    row_ok = rows < N
    # N * K stays below 2^31 at every shape of the problem, so 32-bit offsets suffice.
    w_rows = W + rows[:, None] * K
    x_row = x + b * K
    partial = tl.zeros([BLOCK_N, BLOCK_K], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + cols
        k_ok = k < K
        w = tl.load(w_rows + k[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0).to(tl.float32)
        v = tl.load(x_row + k, mask=k_ok, other=0.0).to(tl.float32)
        partial += w * v[None, :]
    acc = tl.sum(partial, axis=1)
    tl.store(y + b * N + rows, acc.to(tl.bfloat16), mask=row_ok)


PLAN = """
[[launch]]
kernel = "gemv"
grid = ["B", "cdiv(N, 16)"]
num_warps = 4
constexprs = { BLOCK_N = 16, BLOCK_K = 128 }
"""

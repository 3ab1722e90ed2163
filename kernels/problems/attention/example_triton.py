"""Attention forward with Triton, FlashAttention's loop in its plainest form: each program takes BLOCK_M query rows
of one (batch, head) and streams the keys and values past them BLOCK_N at a time. For each tile of keys:
S = Q K^T / sqrt(head_dim) on the tensor cores (FP32), keys past seq or, when causal, after the query set to
-inf; the running row maximum m and sum of exponentials (FP32) grow, and the FP32 accumulator of P V is rescaled by
exp(m_old - m_new) whenever m grows, so logits of 100-200 never reach exp unshifted. P is rounded to BF16 as the
tensor-core operand of P V, which the contract allows. At the end O = acc / sum is rounded to BF16 once. Every
row's first tile holds key 0, which every query sees, so m is finite from the first tile on. The score workspace
S is not used.

head_dim (64 or 128) arrives at run time, but a tile's width must be known when Triton compiles: the tiles are
HEAD = 128 wide and the columns past head_dim are masked (zeros, which add nothing to a dot product). A causal
program stops at its last query's tile.

To make it faster, first compile one build per head_dim (no wasted columns at 64), then split the key loop into
the tiles that need no mask and the few that do, use exp2 with log2(e) folded into the scale, and launch the
heaviest causal tiles first."""

import triton
import triton.language as tl


@triton.jit
def attention(
    batch,
    heads,
    seq,
    head_dim,
    causal,
    Q,
    K,
    V,
    Out,
    S,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HEAD: tl.constexpr,
):
    # One (batch, head) is a contiguous seq x head_dim matrix in each of Q, K, V and O.
    base = tl.program_id(1).to(tl.int64) * seq * head_dim
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    keys = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD)
    dim_ok = dims < head_dim
    row_mask = (rows[:, None] < seq) & dim_ok[None, :]
    q = tl.load(Q + base + rows[:, None] * head_dim + dims[None, :], mask=row_mask, other=0.0)
    scale = 1.0 / tl.sqrt(head_dim.to(tl.float32))

    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    denom = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD], tl.float32)
    end = seq
    if causal != 0:
        end = tl.minimum(seq, (tl.program_id(0) + 1) * BLOCK_M)  # no key after the tile's last query
    for start in range(0, end, BLOCK_N):
        cols = start + keys
        tile_mask = (cols[:, None] < seq) & dim_ok[None, :]
        k = tl.load(K + base + cols[:, None] * head_dim + dims[None, :], mask=tile_mask, other=0.0)
        v = tl.load(V + base + cols[:, None] * head_dim + dims[None, :], mask=tile_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        seen = (cols[None, :] < seq) & ((causal == 0) | (cols[None, :] <= rows[:, None]))
        s = tl.where(seen, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        shrink = tl.exp(m - m_new)
        denom = denom * shrink + tl.sum(p, axis=1)
        acc = acc * shrink[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m = m_new

    out = acc / denom[:, None]
    tl.store(Out + base + rows[:, None] * head_dim + dims[None, :], out.to(tl.bfloat16), mask=row_mask)


PLAN = """
[[launch]]
kernel = "attention"
grid = ["cdiv(seq, 64)", "batch * heads"]
num_warps = 8
num_stages = 2
constexprs = { BLOCK_M = 64, BLOCK_N = 64, HEAD = 128 }
"""

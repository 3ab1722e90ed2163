"""Triton 01 - FlashAttention-2's loop: one 128-query tile of one (batch, head) per program, head_dim 64 and 128

Change versus the CUDA ladder: the same online softmax written as blocks of data. The program loads its Q tile once
and keeps it; K and V stream through in BLOCK_N-key tiles (Triton's pipeliner keeps num_stages of them in flight
through shared memory). For each tile: S = Q K^T on the tensor cores (FP32), scaled by log2(e) / sqrt(head_dim) so
that exp2 does the exponentials; the running row maximum m and sum are FP32, the accumulator O = sum P V is FP32
and is rescaled by exp2(m_old - m_new) whenever the maximum grows (the shift that keeps logits of 100-200 from
overflowing); P is rounded to BF16 only as the tensor-core operand of P V, which the contract allows. At the end
O / l is rounded once to BF16. The score workspace S is not touched.
Masks: key tiles are in two loops. The tiles every query row of the program sees in full (all keys before the query
tile when causal; every whole tile when not) run without masks, then the few tiles that need one: the diagonal
tiles when causal (keys after the query are -inf), the ragged last tile (keys past seq). Causal programs skip the
tiles above the diagonal entirely, and take their query tiles last-first, so the programs with the most keys start
first and the short ones fill the tail. Every row's first tile holds key 0, which every query sees, so the running
maximum is finite from the first tile on (no -inf - -inf).
Builds: head_dim is a size the kernel gets at run time, but Triton needs it as a constexpr: the plan launches one
build for 64 (128 x 128 tiles) and one for 128 (128 x 64 tiles, what fits three stages of K and V beside Q in
shared memory), and each build's programs do nothing unless head_dim is theirs; the other build's grid shrinks to
a single program.
Prediction: a large fraction of FlashAttention-2's speed at the benchmark shapes (head_dim 128), below CUDA rung 04
(wgmma and TMA written by hand).
"""

import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


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
    HEAD: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    if head_dim == HEAD:
        # Heaviest query tiles first: under a causal mask, the last tile sees the most keys.
        tile = tl.cdiv(seq, BLOCK_M) - 1 - tl.program_id(0)
        base = tl.program_id(1).to(tl.int64) * seq * HEAD
        rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
        keys = tl.arange(0, BLOCK_N)
        dims = tl.arange(0, HEAD)
        row_ok = rows < seq
        q = tl.load(Q + base + rows[:, None] * HEAD + dims[None, :], mask=row_ok[:, None], other=0.0)
        k_ptrs = K + base + keys[:, None] * HEAD + dims[None, :]
        v_ptrs = V + base + keys[:, None] * HEAD + dims[None, :]
        scale = LOG2E / tl.sqrt_rn(head_dim.to(tl.float32))

        m = tl.full([BLOCK_M], float("-inf"), tl.float32)
        denom = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, HEAD], tl.float32)

        if causal != 0:
            full_end = tile * BLOCK_M
            end = tl.minimum(seq, (tile + 1) * BLOCK_M)
        else:
            full_end = (seq // BLOCK_N) * BLOCK_N
            end = seq

        # Tiles every row sees in full: no masks.
        for start in range(0, full_end, BLOCK_N):
            k = tl.load(k_ptrs + start * HEAD)
            v = tl.load(v_ptrs + start * HEAD)
            s = tl.dot(q, tl.trans(k)) * scale
            m_new = tl.maximum(m, tl.max(s, 1))
            p = tl.math.exp2(s - m_new[:, None])
            shrink = tl.math.exp2(m - m_new)
            denom = denom * shrink + tl.sum(p, 1)
            acc = acc * shrink[:, None] + tl.dot(p.to(tl.bfloat16), v)
            m = m_new

        # The diagonal tiles (causal) and the ragged last tile: keys past seq, or after the query, are -inf.
        for start in range(full_end, end, BLOCK_N):
            cols = start + keys
            col_ok = cols < seq
            k = tl.load(k_ptrs + start * HEAD, mask=col_ok[:, None], other=0.0)
            v = tl.load(v_ptrs + start * HEAD, mask=col_ok[:, None], other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            seen = col_ok[None, :] & ((causal == 0) | (cols[None, :] <= rows[:, None]))
            s = tl.where(seen, s, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))
            p = tl.math.exp2(s - m_new[:, None])
            shrink = tl.math.exp2(m - m_new)
            denom = denom * shrink + tl.sum(p, 1)
            acc = acc * shrink[:, None] + tl.dot(p.to(tl.bfloat16), v)
            m = m_new

        out = acc / denom[:, None]
        tl.store(Out + base + rows[:, None] * HEAD + dims[None, :], out.to(tl.bfloat16), mask=row_ok[:, None])


# One build per head_dim; the build whose head_dim it is not runs one empty program.
PLAN = """
[[launch]]
kernel = "attention"
grid = ["max(1, cdiv(seq, 128) * (2 - head_dim // 64))", "max(1, batch * heads * (2 - head_dim // 64))"]
num_warps = 8
num_stages = 3
constexprs = { HEAD = 64, BLOCK_M = 128, BLOCK_N = 128 }

[[launch]]
kernel = "attention"
grid = ["max(1, cdiv(seq, 128) * (head_dim // 128))", "max(1, batch * heads * (head_dim // 128))"]
num_warps = 8
num_stages = 3
constexprs = { HEAD = 128, BLOCK_M = 128, BLOCK_N = 64 }
"""

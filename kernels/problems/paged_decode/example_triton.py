"""Paged decode attention with Triton: one program per (query head h, sequence s), walking the sequence's context
one page (16 tokens) at a time. For each page: its physical index from the block table, the 16 x 128 tile of K
of kv head h / G (G = heads / kv_heads query heads share one kv head) and the scores x_j = scale * q . K_j in
FP32; tokens past the context are masked (never read, and -inf in the softmax), so the garbage in the last
page's tail never counts. The running maximum m and sum of exponentials are FP32, and the FP32 accumulator of
sum_j exp(x_j - m) V_j is rescaled by exp(m_old - m_new) whenever m grows, so logits in the hundreds never reach
exp unshifted. At the end acc / sum is rounded to BF16 once. The loop stops at the context's last page, so the
poison entries of the block table past it are never read. The workspace is not used.

To make it faster, first have one program serve all G query heads of a kv head (K and V are then read once per
group instead of G times), then split long contexts over several programs (flash decoding: each writes its
maximum, sum and accumulator to the workspace, and a second launch combines them), and take several pages per
step."""

import triton
import triton.language as tl


@triton.jit
def paged_decode(
    num_seqs,
    heads,
    kv_heads,
    max_pages,
    page_size,
    head_dim,
    scale,
    q,
    k_cache,
    v_cache,
    block_table,
    context_lens,
    out,
    workspace,
    PAGE: tl.constexpr,
    HEAD: tl.constexpr,
):
    # page_size and head_dim are 16 and 128 by the contract; the tiles' shapes must be known when Triton
    # compiles, so they are the constexprs PAGE and HEAD.
    h = tl.program_id(0)
    s = tl.program_id(1)
    g = h // (heads // kv_heads)
    context = tl.load(context_lens + s)
    slots = tl.arange(0, PAGE)
    dims = tl.arange(0, HEAD)
    q_row = (s * heads + h).to(tl.int64) * HEAD
    query = tl.load(q + q_row + dims).to(tl.float32)
    token_stride = kv_heads * HEAD  # elements from one token of a page to the next

    m = float("-inf")  # no token seen yet
    denom = 0.0
    acc = tl.zeros([HEAD], tl.float32)
    for page in range(tl.cdiv(context, PAGE)):
        physical = tl.load(block_table + s.to(tl.int64) * max_pages + page).to(tl.int64)
        tokens = page * PAGE + slots
        inside = tokens < context
        rows = (physical * PAGE + slots) * token_stride + g * HEAD
        k = tl.load(k_cache + rows[:, None] + dims[None, :], mask=inside[:, None], other=0.0).to(tl.float32)
        x = tl.sum(k * query[None, :], axis=1) * scale
        x = tl.where(inside, x, float("-inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        p = tl.exp(x - m_new)
        shrink = tl.exp(m - m_new)
        v = tl.load(v_cache + rows[:, None] + dims[None, :], mask=inside[:, None], other=0.0).to(tl.float32)
        denom = denom * shrink + tl.sum(p, axis=0)
        acc = acc * shrink + tl.sum(p[:, None] * v, axis=0)
        m = m_new
    tl.store(out + q_row + dims, (acc / denom).to(tl.bfloat16))


PLAN = """
[[launch]]
kernel = "paged_decode"
grid = ["heads", "num_seqs"]
num_warps = 4
constexprs = { PAGE = 16, HEAD = 128 }
"""

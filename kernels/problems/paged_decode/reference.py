"""paged_decode: one query token per sequence over a paged BF16 KV cache (layout in problem.toml); reference in
float64 from the BF16 values; baseline PyTorch: gather the pages through the block table, then masked SDPA.
Array-module generic (NumPy or CuPy, from the generator) but for the baseline.

The layout decisions (context lengths, page assignment, shared prefixes) are small integer arrays drawn from the
seed and laid out on the host (`layout`), so the CPU tests and the GPU draw the same structure from the same
generator type; the bulk values (q, the caches) are drawn with the generator's own array module."""

import numpy as np

from kernels.problems import dtypes

HEAD_DIM = 128
PAGE_SIZE = 16
# Every block-table entry past a sequence's last page: a page index far outside any pool, however a kernel computes
# the offset it leads to. Its bits alternate (0101...), so the index times any power of two (the page stride in
# elements, bytes, 16-byte chunks or rows: every factor here is a power of two), cut to 32 bits, is still at least
# 2^30 in size, positive or negative: gigabytes away from the cache, where 2^30 itself wrapped to page 0 in 32-bit
# offsets and let a read past the context land in the pool. In 64-bit offsets it is over a billion pages away.
# It is also the first word of the int32 guard bands (kernels/problems/__init__.py GUARD_BITS).
POISON_PAGE = 0x55555555
SHARE_GROUP = 4  # consecutive sequences sharing a prefix
MAX_SHARED_PAGES = 4  # the prefix they share, in pages (fewer if a member's context has fewer full pages)
LARGE_LOGIT_EVERY = 4  # sequences s % 4 == 3 have their query scaled up ...
LARGE_LOGIT_SCALE = 100.0  # ... so that the logits reach the hundreds
TAIL_GARBAGE = 64.0  # K and V of the slots past a context in its last page: uniform in [-64, 64)


def _host(array):
    return array.get() if hasattr(array, "get") else np.asarray(array)


def context_lengths(sizes, rng) -> np.ndarray:
    """Ragged lengths summing to `tokens`: the first is 1, the others proportional to weights uniform in
    [0.25, 1.75), each at least 1 and at most 16 * (max_pages - 1) (so every block-table row keeps a poison
    entry past its pages); rounding leftovers and clamped excess go one token at a time to rows with room."""
    n, total, cap = sizes["num_seqs"], sizes["tokens"], PAGE_SIZE * (sizes["max_pages"] - 1)
    if not n <= total <= (1 + (n - 1) * cap if n > 1 else cap):
        raise ValueError(f"paged_decode: tokens = {total} cannot be split into {n} contexts of 1..{cap} tokens")
    weights = _host(dtypes.uniform(rng, (n,), "float32", 0.25, 1.75)).astype(np.float64)
    lens = np.ones(n, dtype=np.int64)
    if n > 1:
        rest = total - 1
        lens[1:] = np.floor(weights[1:] / weights[1:].sum() * rest)
    lens = np.clip(lens, 1, cap)
    short = total - int(lens.sum())
    i = 1 if n > 1 else 0
    while short != 0:  # at most n steps per token moved; the leftovers are a few tokens per sequence
        step = 1 if short > 0 else -1
        if 1 <= lens[i] + step <= cap and not (i == 0 and n > 1):
            lens[i] += step
            short -= step
        i = (i + 1) % n
    return lens


def layout(sizes, rng):
    """(context_lens, block_table) as NumPy int32 arrays: each sequence's pages drawn from a shuffled pool, the
    first pages of each group of 4 consecutive sequences shared, poison past each sequence's pages."""
    n, max_pages, num_pages = sizes["num_seqs"], sizes["max_pages"], sizes["num_pages"]
    lens = context_lengths(sizes, rng)
    pages = (lens + PAGE_SIZE - 1) // PAGE_SIZE
    # A shuffled pool: CuPy's Generator has no permutation(), so sort random keys (stable: ties stay a permutation).
    pool = np.argsort(_host(rng.random(num_pages)), kind="stable").astype(np.int64)
    table = np.full((n, max_pages), POISON_PAGE, dtype=np.int64)
    taken = 0

    def take(count):
        nonlocal taken
        if taken + count > num_pages:
            raise ValueError(f"paged_decode: the contexts need more than num_pages = {num_pages} pages")
        chosen = pool[taken : taken + count]
        taken += count
        return chosen

    for start in range(0, n, SHARE_GROUP):
        group = range(start, min(start + SHARE_GROUP, n))
        # Only full pages can be shared (a prefix's last token is not the end of anyone's context).
        shared = min(MAX_SHARED_PAGES, *(int(lens[s]) // PAGE_SIZE for s in group)) if len(group) > 1 else 0
        prefix = take(shared)
        for s in group:
            table[s, :shared] = prefix
            table[s, shared : pages[s]] = take(int(pages[s]) - shared)
    return lens.astype(np.int32), table.astype(np.int32)


def make_inputs(sizes, rng, params, layout_rng=None):
    """With `layout_rng` (the judge's, the same for every round at a shape: kernels/inputs.py `make_inputs`) the
    contexts and the block table come from it, and only the values from `rng`; without it, all from `rng`."""
    xp = dtypes.xp_of(rng)
    n, heads, kv_heads, num_pages = sizes["num_seqs"], sizes["heads"], sizes["kv_heads"], sizes["num_pages"]
    lens, table = layout(sizes, rng if layout_rng is None else layout_rng)
    q = dtypes.uniform(rng, (n, heads, HEAD_DIM), "float32")
    q[LARGE_LOGIT_EVERY - 1 :: LARGE_LOGIT_EVERY] *= xp.float32(LARGE_LOGIT_SCALE)
    cache_shape = (num_pages, PAGE_SIZE, kv_heads, HEAD_DIM)
    # Drawn straight into BF16 (one GPU pass from the draw to the bits: issue 45, the caches are gigabytes); rounding
    # is per element, so scattering rounded garbage gives the bits that rounding after the scatter would.
    k = dtypes.uniform(rng, cache_shape, "bfloat16")
    v = dtypes.uniform(rng, cache_shape, "bfloat16")
    # Garbage past each context in its last page (no other sequence owns those slots: shared pages are full), all
    # sequences' stale slots in one draw and one scatter each for K and V.
    pages, slots = _stale_slots(lens, table)
    if pages.size:
        stale = (pages.size, kv_heads, HEAD_DIM)
        pages, slots = xp.asarray(pages), xp.asarray(slots)
        k[pages, slots] = dtypes.uniform(rng, stale, "bfloat16", -TAIL_GARBAGE, TAIL_GARBAGE)
        v[pages, slots] = dtypes.uniform(rng, stale, "bfloat16", -TAIL_GARBAGE, TAIL_GARBAGE)
    return {
        "q": dtypes.bf16_from_f32(q),
        "k_cache": k,
        "v_cache": v,
        "block_table": xp.asarray(table),
        "context_lens": xp.asarray(lens),
        "out": xp.empty((n, heads, HEAD_DIM), dtype=xp.uint16),
    }


def _stale_slots(lens, table):
    """(page, slot) of every slot past a context in its last page, as two NumPy int64 arrays."""
    tail = lens % PAGE_SIZE
    ends = np.nonzero(tail)[0]
    counts = PAGE_SIZE - tail[ends]
    seq = np.repeat(ends, counts)
    first = np.repeat(tail[ends], counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    pages = table[seq, lens[seq] // PAGE_SIZE].astype(np.int64)
    return pages, (first + within).astype(np.int64)


def reference(inputs, sizes, params):
    """In float64: each context's K and V rows gathered through the block table, the padding past it masked."""
    return _attend(inputs, sizes, params, "float64")[0]


def element_scale(inputs, sizes, params):
    """The same softmax weights applied to |V|: the size of the terms each output averages, and so of its
    rounding errors, where the output itself (an average of values of both signs) may be near zero."""
    return _attend(inputs, sizes, params, "float64")[1]


# The judge's checks (`reference_and_element_scale`) take both outputs from one fused kernel on the GPU: a block per
# (sequence, kv head) reads each context's BF16 K and V rows once, straight through the block table, and computes
# the logits, an online softmax and both weighted sums in float64 (products of BF16 values are exact in it), so it
# agrees with `reference` and `element_scale` to about 1e-15 of the terms' scale, with no gather, no padded batch
# and no second pass for large logits: the FP32 array path it replaced took about 53 ms a round at the benchmark
# shapes on the H100, most of a job's GPU time (issue 45). Its outputs are rounded to CHECK_DTYPE, whose half unit
# is far under the tolerance's 16 u(FP32) sqrt(16 max_pages) of the scale plus half a BF16 unit of each output;
# tests/kernels/test_gpu_paged_decode_reference.py holds it to float64 `_attend` on the GPU. NumPy inputs (the CPU
# tests) still take `_attend` in CHECK_DTYPE: FP32 products and sums, the sequences with large logits from float64.
CHECK_DTYPE = "float32"


def reference_and_element_scale(inputs, sizes, params):
    """Both at once in CHECK_DTYPE (the judge's checks take this): the fused kernel for CuPy inputs."""
    if dtypes.xp_of(inputs["q"]) is not np:
        return _attend_gpu(inputs, sizes, params)
    return _attend(inputs, sizes, params, CHECK_DTYPE)


# The fused check reference. One block of 8 warps per (kv head, sequence); each lane owns 4 of the 128 dims. The
# G query heads of the kv head are split into chunks of up to 4 (a warp keeps their q, running maximum, sum and two
# 4-wide accumulators in registers: more heads would spill), and the warps of one chunk take every
# (8 / chunks)-th token, so K and V are read once per chunk. Per token: its page from the block table (only
# tokens under the context's length: the entries past it are poison), the lanes' partial dot products summed by an
# xor butterfly (every lane gets the same bits, so the branch on a new maximum is uniform), and an online softmax
# that rescales only when the maximum grows. The warps' partials are then rescaled to the block's maximum and
# summed in shared memory one token stream at a time (a fixed order: the same bits every run). An empty context
# gives 0 / 0 = NaN, as `_attend` does.
PAGED_REFERENCE_WARPS = 8
PAGED_REFERENCE_MAX_GROUP = 8  # shared memory holds the sums of 8 query heads: G = heads / kv_heads up to 8
_PAGED_REFERENCE_SOURCE = r"""
#define HEAD_DIM 128
#define PAGE_SIZE 16
#define WARPS 8
#define HEADS_PER_WARP 4
#define MAX_GROUP 8

__device__ __forceinline__ uint2 load8(const unsigned short* p) { return *reinterpret_cast<const uint2*>(p); }

// 4 consecutive BF16 values as doubles: a BF16 value is the top half of its float, exactly.
__device__ __forceinline__ void unpack(uint2 bits, double d[4]) {
    d[0] = (double)__uint_as_float(bits.x << 16);
    d[1] = (double)__uint_as_float(bits.x & 0xffff0000u);
    d[2] = (double)__uint_as_float(bits.y << 16);
    d[3] = (double)__uint_as_float(bits.y & 0xffff0000u);
}

// Where token t's row of kv head g starts in a cache, in elements: token t % 16 of page table[t / 16] (only asked for
// tokens under the context's length: the table's entries past it are poison).
__device__ __forceinline__ long long cache_offset(const int* table, int t, int kv_heads, int g) {
    return (((long long)table[t / PAGE_SIZE] * PAGE_SIZE + t % PAGE_SIZE) * kv_heads + g) * HEAD_DIM;
}

extern "C" __global__ void __launch_bounds__(WARPS * 32) paged_decode_reference(
    const unsigned short* q, const unsigned short* k_cache, const unsigned short* v_cache, const int* block_table,
    const int* context_lens, void* out, void* scale_out, int heads, int kv_heads, int max_pages, double scale,
    int wide) {
    __shared__ double block_max[WARPS][HEADS_PER_WARP];
    __shared__ double total[MAX_GROUP];
    __shared__ double sums[MAX_GROUP][2 * HEAD_DIM];  // P V, then P |V|
    const double neg_inf = __longlong_as_double(0xfff0000000000000ll);  // NVRTC has no math.h
    const int g = blockIdx.x, s = blockIdx.y;
    const int group = heads / kv_heads;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int chunks = (group + HEADS_PER_WARP - 1) / HEADS_PER_WARP;
    const int streams = WARPS / chunks;
    const int chunk = warp % chunks, stream = warp / chunks;
    const int first = chunk * HEADS_PER_WARP;  // this warp's first head within the group
    const int mine = min(HEADS_PER_WARP, group - first);
    const bool active = stream < streams;  // every warp while chunks divides WARPS
    // A length past the block table's row would read past it; the judge's never is.
    const int len = min(context_lens[s], PAGE_SIZE * max_pages);
    const int* table = block_table + (long long)s * max_pages;

    double qd[HEADS_PER_WARP][4], m[HEADS_PER_WARP], l[HEADS_PER_WARP];
    double acc[HEADS_PER_WARP][4], mag[HEADS_PER_WARP][4];
#pragma unroll
    for (int i = 0; i < HEADS_PER_WARP; ++i) {
        m[i] = neg_inf;
        l[i] = 0.0;
#pragma unroll
        for (int j = 0; j < 4; ++j) qd[i][j] = acc[i][j] = mag[i][j] = 0.0;
        const long long at = ((long long)s * heads + (long long)g * group + first + i) * HEAD_DIM + 4 * lane;
        if (i < mine) unpack(load8(q + at), qd[i]);
    }

    if (active) {
        // Token t's K and V rows (this lane's 4 values); the next token's are loaded before this one's arithmetic.
        uint2 k_next = make_uint2(0u, 0u), v_next = make_uint2(0u, 0u);
        if (stream < len) {
            const long long at = cache_offset(table, stream, kv_heads, g) + 4 * lane;
            k_next = load8(k_cache + at);
            v_next = load8(v_cache + at);
        }
        for (int t = stream; t < len; t += streams) {
            double kd[4], vd[4];
            unpack(k_next, kd);
            unpack(v_next, vd);
            const int next = t + streams;
            if (next < len) {
                const long long at = cache_offset(table, next, kv_heads, g) + 4 * lane;
                k_next = load8(k_cache + at);
                v_next = load8(v_cache + at);
            }
#pragma unroll
            for (int i = 0; i < HEADS_PER_WARP; ++i) {
                if (i < mine) {
                    double dot = qd[i][0] * kd[0] + qd[i][1] * kd[1] + qd[i][2] * kd[2] + qd[i][3] * kd[3];
#pragma unroll
                    for (int mask = 16; mask > 0; mask >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, mask);
                    const double x = dot * scale;
                    double p = 1.0;
                    if (x > m[i]) {  // a new maximum: rescale what came before (exp(-inf) = 0 at the first token)
                        const double c = exp(m[i] - x);
                        l[i] *= c;
#pragma unroll
                        for (int j = 0; j < 4; ++j) {
                            acc[i][j] *= c;
                            mag[i][j] *= c;
                        }
                        m[i] = x;
                    } else {
                        p = exp(x - m[i]);
                    }
                    l[i] += p;
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        acc[i][j] += p * vd[j];
                        mag[i][j] += p * fabs(vd[j]);
                    }
                }
            }
        }
    }

    // Every warp's partials to the maximum over the warps of its chunk (a warp that saw no token weighs 0).
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < HEADS_PER_WARP; ++i) block_max[warp][i] = m[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < HEADS_PER_WARP; ++i) {
        if (i < mine) {
            double top = neg_inf;
            for (int r = 0; r < streams; ++r) top = fmax(top, block_max[r * chunks + chunk][i]);
            const double f = m[i] == neg_inf ? 0.0 : exp(m[i] - top);
            l[i] *= f;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                acc[i][j] *= f;
                mag[i][j] *= f;
            }
        }
    }
    for (int r = 0; r < streams; ++r) {
        if (active && stream == r) {
#pragma unroll
            for (int i = 0; i < HEADS_PER_WARP; ++i) {
                if (i < mine) {
                    double* row = sums[first + i];
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        const int c = 4 * lane + j;
                        row[c] = (r ? row[c] : 0.0) + acc[i][j];
                        row[HEAD_DIM + c] = (r ? row[HEAD_DIM + c] : 0.0) + mag[i][j];
                    }
                    if (lane == 0) total[first + i] = (r ? total[first + i] : 0.0) + l[i];
                }
            }
        }
        __syncthreads();
    }
    for (int e = threadIdx.x; e < group * HEAD_DIM; e += blockDim.x) {
        const int h = e / HEAD_DIM, c = e % HEAD_DIM;
        const long long at = ((long long)s * heads + (long long)g * group + h) * HEAD_DIM + c;
        const double o = sums[h][c] / total[h], o_scale = sums[h][HEAD_DIM + c] / total[h];
        if (wide) {  // the doubles themselves, for the test that holds them to float64 `_attend`
            static_cast<double*>(out)[at] = o;
            static_cast<double*>(scale_out)[at] = o_scale;
        } else {
            static_cast<float*>(out)[at] = (float)o;  // rounded to nearest
            static_cast<float*>(scale_out)[at] = (float)o_scale;
        }
    }
}
"""
_paged_reference_kernel = None


def _attend_gpu(inputs, sizes, params, dtype=CHECK_DTYPE):
    """`_attend`'s two outputs from the fused kernel: [num_seqs, heads, 128] each, its doubles rounded to `dtype`
    (float32) or as they are (float64)."""
    import cupy

    global _paged_reference_kernel
    n, heads, kv_heads = sizes["num_seqs"], sizes["heads"], sizes["kv_heads"]
    if heads % kv_heads or not 1 <= heads // kv_heads <= PAGED_REFERENCE_MAX_GROUP:
        raise ValueError(f"paged_decode: heads / kv_heads = {heads} / {kv_heads} is not a group of 1 to 8")
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise ValueError(f"paged_decode: the fused reference writes float32 or float64, not {dtype}")
    if _paged_reference_kernel is None:
        _paged_reference_kernel = cupy.RawKernel(_PAGED_REFERENCE_SOURCE, "paged_decode_reference")
    q, k, v, table, lens = (
        _aligned(inputs[name]) for name in ("q", "k_cache", "v_cache", "block_table", "context_lens")
    )
    out = cupy.empty((n, heads, HEAD_DIM), dtype=dtype)
    scale_out = cupy.empty_like(out)
    scale = float(np.float32(params["scale"]))  # the kernel is given the scale as an FP32 value
    sizes_args = (np.int32(heads), np.int32(kv_heads), np.int32(table.shape[1]), np.float64(scale))
    wide = np.int32(np.dtype(dtype) == np.float64)
    grid, block = (kv_heads, n), (32 * PAGED_REFERENCE_WARPS,)
    _paged_reference_kernel(grid, block, (q, k, v, table, lens, out, scale_out, *sizes_args, wide))
    return out, scale_out


def _aligned(array):
    """Contiguous at a multiple of 8 bytes (the kernel reads 4 BF16 values at once); the judge's arrays already
    are (16-byte alignment), so this copies nothing there."""
    import cupy

    array = cupy.ascontiguousarray(array)
    return array if array.data.ptr % 8 == 0 else array.copy()


# The reference attends to a batch of sequences at once, their contexts padded to the batch's longest and masked:
# each batch's K and V in float64 stay within this many bytes (sequences sorted by length, so that a batch pads
# little). One Python step per sequence, a dozen small array operations each, was most of a timed round.
REFERENCE_BATCH_BYTES = 1 << 30


def _attend(inputs, sizes, params, dtype):
    """Attention of every sequence through its block table in `dtype`, and the same weights applied to |V|."""
    xp = dtypes.xp_of(inputs["q"])
    heads, kv_heads = sizes["heads"], sizes["kv_heads"]
    group = heads // kv_heads
    scale = float(np.float32(params["scale"]))  # the kernel is given the scale as an FP32 value
    lens = _host(inputs["context_lens"]).astype(np.int64)
    table = _host(inputs["block_table"]).astype(np.int64)
    q = dtypes.f32_from_bf16(inputs["q"]).astype(dtype)
    out = xp.empty(q.shape, dtype=dtype)
    scale_out = xp.empty(q.shape, dtype=dtype)
    for batch in _batches(lens, kv_heads, np.dtype(dtype).itemsize):
        tokens = int(lens[batch].max())
        pages = (tokens + PAGE_SIZE - 1) // PAGE_SIZE
        # Entries past a sequence's pages are poison: any page will do, its tokens are masked.
        chosen = xp.asarray(np.where(table[batch, :pages] == POISON_PAGE, 0, table[batch, :pages]))
        k, v = (_gathered(inputs[name], chosen, tokens, kv_heads, dtype) for name in ("k_cache", "v_cache"))
        qs = q[xp.asarray(batch)].reshape(len(batch), kv_heads, group, HEAD_DIM)
        past = xp.asarray(np.arange(tokens)[None, :] >= lens[batch][:, None])[:, None, None, :]
        shifted = _shifted_logits(qs, k, past, scale)
        if dtype != "float64":
            # Sequences with large logits (the scaled-up queries): an FP32 dot product's error grows with the size
            # of its terms, and there it moves the weights by about 1e-4 of themselves, an eighth of the
            # tolerance. Their logits again in float64, shifted by their maximum before they are rounded to FP32.
            hot = xp.nonzero(xp.abs(shifted).max(axis=(1, 2, 3)) > HOT_LOGIT_SPAN)[0]
            if hot.size:
                exact = _shifted_logits(qs[hot].astype("float64"), k[hot].astype("float64"), past[hot], scale)
                shifted[hot] = exact.astype(dtype)
        weights = xp.exp(shifted)
        total = weights.sum(axis=3, keepdims=True)
        where = xp.asarray(batch)
        both = (weights @ xp.concatenate([v, xp.abs(v)], axis=3)) / total  # P V and P |V| in one product
        out[where] = both[..., :HEAD_DIM].reshape(len(batch), heads, HEAD_DIM)
        scale_out[where] = both[..., HEAD_DIM:].reshape(len(batch), heads, HEAD_DIM)
    return out, scale_out


# The span of a sequence's logits past which its FP32 check reference takes them from float64 (see `_attend`).
HOT_LOGIT_SPAN = 16.0


def _shifted_logits(qs, k, past, scale):
    """scale * q . k for every token, the masked ones -inf, less each row's maximum: [batch, kv_heads, group,
    tokens] in the operands' dtype."""
    xp = dtypes.xp_of(qs)
    logits = (qs @ k.transpose(0, 1, 3, 2)) * qs.dtype.type(scale)
    logits = xp.where(past, -xp.inf, logits)  # every context has a token: each row keeps a finite maximum
    return logits - logits.max(axis=3, keepdims=True)


def _batches(lens, kv_heads, itemsize):
    """Sequence indices in batches, shortest contexts first, each batch's padded K within the budget."""
    per_token = kv_heads * HEAD_DIM * itemsize
    batches, batch = [], []
    for s in np.argsort(lens, kind="stable"):
        if batch and (len(batch) + 1) * int(lens[s]) * per_token > REFERENCE_BATCH_BYTES:
            batches.append(np.asarray(batch))
            batch = []
        batch.append(int(s))
    if batch:
        batches.append(np.asarray(batch))
    return batches


def _gathered(cache, pages, tokens, kv_heads, dtype):
    """A batch's first `tokens` cache rows through its block-table rows, in `dtype`: [batch, kv_heads, tokens, 128]."""
    rows = dtypes.f32_from_bf16(cache[pages]).reshape(pages.shape[0], -1, kv_heads, HEAD_DIM)[:, :tokens]
    return rows.astype(dtype, copy=False).transpose(0, 2, 1, 3)


def baseline(inputs, out, sizes, params, ctx):
    """What a PyTorch serving loop without a paged kernel does: gather every sequence's max_pages pages (poison
    entries clamped into the pool and masked) into a contiguous K and V, then masked SDPA, the G query heads of
    each kv head taken as G query rows of one attention (GQA without repeating K and V). No host sync: the
    gather covers max_pages whatever the longest context is. Returns its own output array."""
    from kernels.problems import torch_bridge

    torch = torch_bridge.torch()
    n, heads, kv_heads, max_pages = sizes["num_seqs"], sizes["heads"], sizes["kv_heads"], sizes["max_pages"]
    length = max_pages * PAGE_SIZE
    with torch_bridge.on_current_stream():
        q = torch_bridge.as_tensor(inputs["q"], "bfloat16").view(n, kv_heads, heads // kv_heads, HEAD_DIM)
        k_cache = torch_bridge.as_tensor(inputs["k_cache"], "bfloat16")
        v_cache = torch_bridge.as_tensor(inputs["v_cache"], "bfloat16")
        table = torch_bridge.as_tensor(inputs["block_table"]).long().clamp_(0, sizes["num_pages"] - 1)
        lens = torch_bridge.as_tensor(inputs["context_lens"])
        # [n, max_pages, 16, kv_heads, 128] -> [n, kv_heads, max_pages * 16, 128]
        k = k_cache[table].view(n, length, kv_heads, HEAD_DIM).transpose(1, 2)
        v = v_cache[table].view(n, length, kv_heads, HEAD_DIM).transpose(1, 2)
        mask = (torch.arange(length, device=lens.device)[None, :] < lens[:, None])[:, None, None, :]
        # The memory-efficient backend (FP32 scores and statistics; flash takes no mask): the math fallback
        # would round the logits to BF16, hundreds wide on the scaled-up queries, and fail the check.
        from torch.nn.attention import SDPBackend, sdpa_kernel

        scale = float(np.float32(params["scale"]))
        try:
            with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
                o = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
        except RuntimeError:  # no efficient kernel for this build or layout (raised before any launch): the same
            # attention in FP32, slower but right, rather than no baseline at all
            o = torch.nn.functional.scaled_dot_product_attention(
                q.float(), k.float(), v.float(), attn_mask=mask, scale=scale
            ).to(torch.bfloat16)
    return torch_bridge.as_cupy(o.reshape(n, heads, HEAD_DIM).contiguous())

// Expected: runtime_error for paged_decode. The problem's naive kernel (a block per sequence and head) with its
// element offsets into the KV cache computed in 32-bit int (wrapping, as unchecked int arithmetic does), plus a
// prefetch of the same slot one page ahead whose value is multiplied by 0, with no check that that page is still
// in the context: on the last page it looks up the block-table entry past the sequence's pages. The old poison
// entry (2^30) times 16 tokens a page is 2^34, which wraps to 0 in 32 bits: the prefetch read page 0, inside the
// cache, 0 * a finite value changed nothing, and the kernel passed (paged_decode__page_past_context.cu, with
// 64-bit offsets, faulted already). The poison is now 0x55555555, whose 32-bit offsets land far outside the cache
// too: the load faults (an illegal address).
#include <cuda_bf16.h>

__device__ float block_reduce(float v, bool is_max, float* scratch) {
    for (int o = 16; o > 0; o /= 2) {
        const float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    __syncthreads();  // scratch may still be read from the previous reduction
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    v = scratch[0];
    for (int i = 1; i < blockDim.x / 32; ++i) v = is_max ? fmaxf(v, scratch[i]) : v + scratch[i];
    return v;
}

// The element offset of token j's row of kv head g in the cache, in 32-bit int: (page * 16 + slot) * row + g * 128.
// Unsigned arithmetic wraps mod 2^32 (defined behaviour), and the result is read back as an int: what int
// arithmetic does on the GPU in practice.
__device__ int offset32(int page, int slot, int page_size, int row, int col) {
    return (int)(((unsigned)page * (unsigned)page_size + (unsigned)slot) * (unsigned)row + (unsigned)col);
}

extern "C" __global__ void paged_decode_int32(int num_seqs, int heads, int kv_heads, int max_pages, int page_size,
                                              int head_dim, float scale, const __nv_bfloat16* q,
                                              const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                                              const int* block_table, const int* context_lens, __nv_bfloat16* out,
                                              float* workspace) {
    __shared__ float qs[128];
    __shared__ float scratch[32];
    const int h = blockIdx.x, s = blockIdx.y, g = h / (heads / kv_heads), ctx = context_lens[s];
    const int row = kv_heads * head_dim;  // elements from one token to the next in a page
    const int* pages = block_table + (size_t)s * max_pages;
    float* scores = workspace + (size_t)(s * heads + h) * ((max_pages + 3) / 4 * 130);  // >= 16 * max_pages
    for (int c = threadIdx.x; c < head_dim; c += blockDim.x)
        qs[c] = __bfloat162float(q[((size_t)s * heads + h) * head_dim + c]);
    __syncthreads();

    float m = __int_as_float(0xff800000);  // -infinity
    for (int j = threadIdx.x; j < ctx; j += blockDim.x) {
        const __nv_bfloat16* k = k_cache + offset32(pages[j / page_size], j % page_size, page_size, row, g * head_dim);
        // BUG: a prefetch of the same slot one page ahead, for a later step, with no check that that page is
        // still in the context; folding it in with weight 0 changes no score, only the lookup is wrong.
        const __nv_bfloat16* ahead =
            k_cache + offset32(pages[j / page_size + 1], j % page_size, page_size, row, g * head_dim);
        float dot = 0.0f * __bfloat162float(ahead[0]);
        for (int c = 0; c < head_dim; ++c) dot = fmaf(qs[c], __bfloat162float(k[c]), dot);
        scores[j] = dot * scale;
        m = fmaxf(m, dot * scale);
    }
    m = block_reduce(m, true, scratch);
    float l = 0.0f;
    for (int j = threadIdx.x; j < ctx; j += blockDim.x) {
        const float p = expf(scores[j] - m);
        scores[j] = p;
        l += p;
    }
    l = block_reduce(l, false, scratch);  // its __syncthreads also publish the p_j written above to the block

    for (int c = threadIdx.x; c < head_dim; c += blockDim.x) {
        float acc = 0.0f;
        for (int j = 0; j < ctx; ++j) {
            const __nv_bfloat16* v = v_cache + offset32(pages[j / page_size], j % page_size, page_size, row, g * head_dim);
            acc = fmaf(scores[j], __bfloat162float(v[c]), acc);
        }
        out[((size_t)s * heads + h) * head_dim + c] = __float2bfloat16_rn(acc / l);
    }
}

/* @plan
[[launch]]
kernel = "paged_decode_int32"
grid = ["heads", "num_seqs"]
block = [128]
*/

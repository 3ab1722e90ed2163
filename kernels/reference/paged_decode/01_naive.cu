// Step 01 - paged decode: a block per (sequence, query head), plain loops, scores kept in the workspace.
// What it does: 128 threads per (sequence, head). Pass 1: thread t scores tokens j = t, t + 128, ..., looking up
// each token's page in the block table (page = block_table[s][j / 16], slot j % 16) and reading the 128 elements
// of its K row one by one; the scores go to this (sequence, head)'s region of the workspace and the block takes
// their maximum. Pass 2: p_j = exp(x_j - max), summed by the block. Pass 3: thread c sums p_j V[j][c] over the
// whole context (the 128 threads read one V row together: coalesced) and writes out[s][h][c] / sum once, in BF16.
// Plan: one launch, grid (heads, num_seqs), 128 threads.
// Prediction: far from the roofline. In pass 1 each thread walks its own 256-byte K row element by element (32
// rows in flight per warp, 2-byte loads: every sector is fetched for one thread and reused from L1 only if it
// survives); every query head of a GQA group reads its kv head's K and V again (G = 4 times the bytes, mostly
// from L2); and only heads x num_seqs blocks of one long serial loop each: at 64 sequences x 32 heads, 2048
// blocks walking 8192 tokens each. Expect a few % to ~15% of the copy roofline.
// Measured on the H200 through the judge (2026-12-03): 13.34 ms, 12.04 ms and 5.37 ms at
// the three benchmark shapes (64, 128 and 256 sequences): 161, 179 and 201 GB/s, 3.8%, 4.2% and 4.8% of the copy
// roofline; 28-35% of the PyTorch gather-and-attend baseline.
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

extern "C" __global__ void paged_decode_naive(int num_seqs, int heads, int kv_heads, int max_pages, int page_size,
                                              int head_dim, float scale, const __nv_bfloat16* q,
                                              const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                                              const int* block_table, const int* context_lens, __nv_bfloat16* out,
                                              float* workspace) {
    __shared__ float qs[128];
    __shared__ float scratch[32];
    const int h = blockIdx.x, s = blockIdx.y, g = h / (heads / kv_heads), ctx = context_lens[s];
    const size_t row = (size_t)kv_heads * head_dim;  // elements from one token to the next in a page
    const int* pages = block_table + (size_t)s * max_pages;
    float* scores = workspace + (size_t)(s * heads + h) * ((max_pages + 3) / 4 * 130);  // >= 16 * max_pages
    for (int c = threadIdx.x; c < head_dim; c += blockDim.x)
        qs[c] = __bfloat162float(q[((size_t)s * heads + h) * head_dim + c]);
    __syncthreads();

    float m = __int_as_float(0xff800000);  // -infinity
    for (int j = threadIdx.x; j < ctx; j += blockDim.x) {
        const __nv_bfloat16* k = k_cache + ((size_t)pages[j / page_size] * page_size + j % page_size) * row + g * head_dim;
        float dot = 0.0f;
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
            const __nv_bfloat16* v = v_cache + ((size_t)pages[j / page_size] * page_size + j % page_size) * row + g * head_dim;
            acc = fmaf(scores[j], __bfloat162float(v[c]), acc);
        }
        out[((size_t)s * heads + h) * head_dim + c] = __float2bfloat16_rn(acc / l);
    }
}

/* @plan
[[launch]]
kernel = "paged_decode_naive"
grid = ["heads", "num_seqs"]
block = [128]
*/

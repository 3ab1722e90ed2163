// Step 03 - paged decode with a shared-memory page ring: each warp's next page is in flight while it computes one
// (capsule 55, "The KV cache & PagedAttention").
//     python -m kernels bench kernels/reference/paged_decode/03_page_ring.cu --problem paged_decode
// Change versus 02: the work split (splits of 32 pages, the G query heads of a kv head in one block, one warp per
// page, lanes owning 8 dimensions, the online softmax per page and the combine launch) is 02's. What changes is
// how a warp's pages arrive. In 02 a warp issues a page's 16 loads of 16 bytes per lane only after it has finished
// the previous page, so between pages nothing of that warp is in flight and the memory pipe sees gaps. Here each
// warp has a ring of 2 page stages in shared memory (8 KB each: K then V, 16-byte chunks stored lane by lane so
// that a lane reads back exactly the chunks it copied, without bank conflicts and without waiting for other lanes),
// filled with cp.async: page i + 1 is copied while page i is computed, and a lane waits only for its own copy group
// (cp.async.wait_group 1). The arithmetic reads K and V from the stage, so the 16 registers of page data 02 held
// are free. With 64 KB of ring per block, 3 blocks fit an SM (launch bounds 128 x 3): 12 warps, each with a page
// always in flight. The copies carry an L2 evict-first policy past the first 4 pages (a group's shared prefix,
// which other sequences read again, stays evict-normal).
// Plan: as 02 (launch 1 grid (cdiv(max_pages, 32), kv_heads * cdiv(G, 4), num_seqs), 128 threads, now with 64 KB of
// dynamic shared memory; launch 2 combines the splits).
// Prediction: the gaps between a warp's pages closed: from 77-82% to about 90% of the copy roofline.
// Measured on the H200 through the judge (2026-12-03), % of the copy roofline (02 beside):
//   64 sequences, 524288 tokens in all: 0.529 ms, 4058 GB/s, 97.4% (02: 82.0%); 128 sequences, 524288 tokens:
//   0.526 ms, 98.2% (81.6%); 256 sequences, 262144 tokens: 0.277 ms, 3898 GB/s, 93.6% (77.1%).
//   Not kept: 02 with only the evict-first hint (81.4 / 80.8 / 75.4%: the hint alone is not the gain); rings of
//   3 pages with 2 blocks per SM (95.0 / 95.5 / 89.2% with 32-page splits, 84.4 / 85.0 / 80.7% with 16): fewer
//   warps in flight lose more than the deeper ring wins.
#include <cuda_bf16.h>

constexpr int D = 128;           // head_dim
constexpr int PS = 16;           // page_size
constexpr int WARPS = 4;
constexpr int SPLIT_PAGES = 32;  // pages per block: 8 per warp
constexpr int MAXG = 4;          // query heads per block
constexpr int PART = D + 2;      // one partial in the workspace: max (log2 domain), sum, 128 accumulators

__device__ __forceinline__ float bf16_lo(unsigned v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(unsigned v) { return __uint_as_float(v & 0xffff0000u); }
__device__ __forceinline__ void unpack8(uint4 v, float (&f)[8]) {
    const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        f[2 * i] = bf16_lo(u[i]);
        f[2 * i + 1] = bf16_hi(u[i]);
    }
}
// K and V are read once: no L1 allocation (the non-coherent path is fine, nothing writes them during the kernel).
__device__ __forceinline__ uint4 load_once(const void* p, unsigned long long policy) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
    return v;
}
__device__ __forceinline__ unsigned long long policy_evict_first() {
    unsigned long long p;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}
__device__ __forceinline__ unsigned long long policy_evict_normal() {
    unsigned long long p;
    asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p));
    return p;
}
constexpr int SHARED_PREFIX_PAGES = 4;  // the statement: a group's common prefix is at most 4 pages
constexpr int STAGES = 2;  // pages per warp in the shared-memory ring (STAGES - 1 ahead)
// One stage of one warp: [K | V][token pair t][lane] 16-byte chunks, lane-contiguous (conflict-free).
constexpr int STAGE_CHUNKS = 2 * (PS / 2) * 32;
__device__ __forceinline__ void cp_async16(uint4* dst, const void* src, unsigned long long policy) {
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;"
                 ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src), "l"(policy) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
// 2^x in one MUFU instruction (exp2f adds a denormal-range fix-up around it); 2^-inf = +0.
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
__device__ __forceinline__ int partials_per_head(int max_pages) { return (max_pages + 3) / 4; }  // workspace room

template <int G>
__device__ __forceinline__ void split_block(int heads, int kv_heads, int max_pages, float scale,
                                            const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                                            const __nv_bfloat16* __restrict__ v_cache, const int* __restrict__ pages,
                                            float* __restrict__ workspace, int s, int kvh, int h0, int split, int ctx,
                                            float (*sm_acc)[MAXG][D], float (*sm_m)[MAXG], float (*sm_l)[MAXG],
                                            uint4* __restrict__ ring) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, half = lane / 16, chunk = lane % 16;
    const int npages = (ctx + PS - 1) / PS;
    const int p_begin = split * SPLIT_PAGES, p_end = min(npages, p_begin + SPLIT_PAGES);
    const size_t row = (size_t)kv_heads * D;  // elements from one token to the next in a page
    const float qscale = scale * 1.4426950408889634f;  // logits in log2 units: exp(x) = 2^(x log2 e)

    float qf[G][8], acc[G][8], m[G], l[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        float f[8];
        unpack8(*reinterpret_cast<const uint4*>(q + ((size_t)s * heads + h0 + g) * D + chunk * 8), f);
#pragma unroll
        for (int c = 0; c < 8; ++c) qf[g][c] = f[c] * qscale, acc[g][c] = 0.0f;
        m[g] = __int_as_float(0xff800000);  // -infinity
        l[g] = 0.0f;
    }
    // This warp's pages are p_begin + warp + 4 i, i < 8: lane i looks its page up now, shuffled out below.
    const int my_page = p_begin + warp + WARPS * lane;
    const int page_of_lane = (lane < SPLIT_PAGES / WARPS && my_page < p_end) ? pages[my_page] : 0;

    uint4* my_ring = ring + (size_t)warp * STAGES * STAGE_CHUNKS + lane;
    const int my_pages = p_end > p_begin + warp ? (p_end - p_begin - warp + WARPS - 1) / WARPS : 0;
    // Page i of this warp (p_begin + warp + 4 i) into stage i % STAGES: each lane copies the 16 chunks it reads back
    // itself, so no other lane's copies need to be waited for.
    auto fetch = [&](int i) {
        const int p = p_begin + warp + WARPS * i;
        const int page = __shfl_sync(0xffffffffu, page_of_lane, i);
        const size_t base = (size_t)page * PS * row + (size_t)kvh * D + chunk * 8;
        const unsigned long long pol = p < SHARED_PREFIX_PAGES ? policy_evict_normal() : policy_evict_first();
        uint4* st = my_ring + (i % STAGES) * STAGE_CHUNKS;
#pragma unroll
        for (int t = 0; t < PS / 2; ++t) cp_async16(st + t * 32, k_cache + base + (2 * t + half) * row, pol);
#pragma unroll
        for (int t = 0; t < PS / 2; ++t) cp_async16(st + (PS / 2 + t) * 32, v_cache + base + (2 * t + half) * row, pol);
    };
#pragma unroll
    for (int i = 0; i < STAGES - 1; ++i) {
        if (i < my_pages) fetch(i);
        cp_async_commit();  // empty groups too: group i is page i's
    }
    for (int i = 0, p = p_begin + warp; p < p_end; ++i, p += WARPS) {
        if (i + STAGES - 1 < my_pages) fetch(i + STAGES - 1);  // overwrites the stage of page i - 1, read already
        cp_async_commit();
        cp_async_wait<STAGES - 1>();  // page i's group is complete
        const uint4* st = my_ring + (i % STAGES) * STAGE_CHUNKS;
        // K and V are read from the stage where they are used (no 16 registers of page data held).

        const int valid = ctx - p * PS;  // tokens of this page inside the context (>= 1; < 16 on a last page only)
        float x[G][PS / 2];  // logits of tokens 2 t + half, then their weights
#pragma unroll
        for (int t = 0; t < PS / 2; ++t) {
            float kf[8];
            unpack8(st[t * 32], kf);
#pragma unroll
            for (int g = 0; g < G; ++g) {
                float d = 0.0f;
#pragma unroll
                for (int c = 0; c < 8; ++c) d = fmaf(qf[g][c], kf[c], d);
                x[g][t] = d;
            }
        }
#pragma unroll
        for (int g = 0; g < G; ++g) {
            float page_max = __int_as_float(0xff800000);
#pragma unroll
            for (int t = 0; t < PS / 2; ++t) {
#pragma unroll
                for (int o = 8; o > 0; o /= 2) x[g][t] += __shfl_xor_sync(0xffffffffu, x[g][t], o);  // within the half
                if (valid < PS && 2 * t + half >= valid) x[g][t] = __int_as_float(0xff800000);
                page_max = fmaxf(page_max, x[g][t]);
            }
            page_max = fmaxf(page_max, __shfl_xor_sync(0xffffffffu, page_max, 16));  // both halves
            const float m_new = fmaxf(m[g], page_max);  // finite: token 0 of the page is in the context
            const float alpha = fast_exp2(m[g] - m_new);  // 0 on the first page (m = -inf)
            m[g] = m_new;
            l[g] *= alpha;
#pragma unroll
            for (int c = 0; c < 8; ++c) acc[g][c] *= alpha;
#pragma unroll
            for (int t = 0; t < PS / 2; ++t) {
                x[g][t] = fast_exp2(x[g][t] - m_new);  // 0 for masked tokens
                l[g] += x[g][t];
            }
        }
        // The last page: the slots past the context hold garbage; their weights are 0 and their V is zeroed too
        // (0 * NaN would be NaN).
#pragma unroll
        for (int t = 0; t < PS / 2; ++t) {
            float vf[8];
            const uint4 vv = valid < PS && 2 * t + half >= valid ? make_uint4(0u, 0u, 0u, 0u) : st[(PS / 2 + t) * 32];
            unpack8(vv, vf);
#pragma unroll
            for (int g = 0; g < G; ++g)
#pragma unroll
                for (int c = 0; c < 8; ++c) acc[g][c] = fmaf(x[g][t], vf[c], acc[g][c]);
        }
    }
    // The two halves share m: add their sums and accumulators; lanes 0..15 then hold the warp's 128 dimensions.
#pragma unroll
    for (int g = 0; g < G; ++g) {
        l[g] += __shfl_xor_sync(0xffffffffu, l[g], 16);
#pragma unroll
        for (int c = 0; c < 8; ++c) acc[g][c] += __shfl_xor_sync(0xffffffffu, acc[g][c], 16);
        if (lane < 16) {
#pragma unroll
            for (int c = 0; c < 8; ++c) sm_acc[warp][g][chunk * 8 + c] = acc[g][c];
        }
        if (lane == 0) sm_m[warp][g] = m[g], sm_l[warp][g] = l[g];
    }
    __syncthreads();
    // Thread d combines the warps' partials for dimension d (a warp without pages has m = -inf, l = 0, acc = 0).
    const int d = threadIdx.x;
#pragma unroll
    for (int g = 0; g < G; ++g) {
        float mx = sm_m[0][g];
#pragma unroll
        for (int w = 1; w < WARPS; ++w) mx = fmaxf(mx, sm_m[w][g]);
        float sum = 0.0f, a = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            const float e = exp2f(sm_m[w][g] - mx);
            sum = fmaf(e, sm_l[w][g], sum);
            a = fmaf(e, sm_acc[w][g][d], a);
        }
        float* part = workspace + (((size_t)s * heads + h0 + g) * partials_per_head(max_pages) + split) * PART;
        part[2 + d] = a;
        if (d == 0) part[0] = mx, part[1] = sum;
    }
}

extern "C" __global__ void __launch_bounds__(128, 3)
    paged_decode_split(int num_seqs, int heads, int kv_heads, int max_pages, int page_size, int head_dim, float scale,
                       const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                       const int* block_table, const int* context_lens, __nv_bfloat16* out, float* workspace) {
    __shared__ float sm_acc[WARPS][MAXG][D];
    __shared__ float sm_m[WARPS][MAXG], sm_l[WARPS][MAXG];
    extern __shared__ uint4 kv_ring[];  // WARPS x STAGES x STAGE_CHUNKS (the plan's shared_bytes)
    const int s = blockIdx.z, split = blockIdx.x, ctx = context_lens[s];
    if (split * SPLIT_PAGES * PS >= ctx) return;  // the whole block: past this sequence's context
    const int group = heads / kv_heads, chunks = (group + MAXG - 1) / MAXG;
    const int kvh = blockIdx.y / chunks, first = (blockIdx.y % chunks) * MAXG;
    const int h0 = kvh * group + first;
    const int* pages = block_table + (size_t)s * max_pages;
    switch (min(MAXG, group - first)) {
        case 1:
            split_block<1>(heads, kv_heads, max_pages, scale, q, k_cache, v_cache, pages, workspace, s, kvh, h0, split,
                           ctx, sm_acc, sm_m, sm_l, kv_ring);
            break;
        case 2:
            split_block<2>(heads, kv_heads, max_pages, scale, q, k_cache, v_cache, pages, workspace, s, kvh, h0, split,
                           ctx, sm_acc, sm_m, sm_l, kv_ring);
            break;
        case 3:
            split_block<3>(heads, kv_heads, max_pages, scale, q, k_cache, v_cache, pages, workspace, s, kvh, h0, split,
                           ctx, sm_acc, sm_m, sm_l, kv_ring);
            break;
        default:
            split_block<4>(heads, kv_heads, max_pages, scale, q, k_cache, v_cache, pages, workspace, s, kvh, h0, split,
                           ctx, sm_acc, sm_m, sm_l, kv_ring);
            break;
    }
}

// Thread d of block (h, s): out[s][h][d] from the splits of head h (2^(m_i - M) weights, M their maximum).
extern "C" __global__ void __launch_bounds__(128)
    paged_decode_combine(int num_seqs, int heads, int kv_heads, int max_pages, int page_size, int head_dim,
                         float scale, const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                         const __nv_bfloat16* v_cache, const int* block_table, const int* context_lens,
                         __nv_bfloat16* out, float* workspace) {
    const int h = blockIdx.x, s = blockIdx.y, d = threadIdx.x;
    const int splits = ((context_lens[s] + PS - 1) / PS + SPLIT_PAGES - 1) / SPLIT_PAGES;
    const float* part = workspace + ((size_t)s * heads + h) * partials_per_head(max_pages) * PART;
    float mx = part[0];
    for (int i = 1; i < splits; ++i) mx = fmaxf(mx, part[i * PART]);
    float sum = 0.0f, a = 0.0f;
    for (int i = 0; i < splits; ++i) {
        const float e = exp2f(part[i * PART] - mx);
        sum = fmaf(e, part[i * PART + 1], sum);
        a = fmaf(e, part[i * PART + 2 + d], a);
    }
    out[((size_t)s * heads + h) * D + d] = __float2bfloat16_rn(a / sum);
}

/* @plan
[[launch]]
kernel = "paged_decode_split"
grid = ["cdiv(max_pages, 32)", "kv_heads * cdiv(heads // kv_heads, 4)", "num_seqs"]
block = [128]
shared_bytes = "65536"

[[launch]]
kernel = "paged_decode_combine"
grid = ["heads", "num_seqs"]
block = [128]
*/

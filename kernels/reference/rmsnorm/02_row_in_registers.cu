// Step 02 - RMSNorm: one block per row, the row kept in registers, 16-byte loads.
// Change versus 01: (1) a block of 256 threads shares a row, so consecutive threads read consecutive 16-byte
// pieces (8 BF16) of it: every warp load is 512 contiguous bytes, fully used sectors, and 8x fewer load
// instructions than 2-byte loads; (2) each thread keeps its pieces of x in registers (up to 2 x 16 bytes, a row of
// up to 4096 elements) between the sum of squares and the scaling, so x crosses DRAM once: the minimum traffic is
// read x + write y, and w (8 KB, shared by every row) stays in L2 and L1; (3) the sum of squares is reduced with
// warp shuffles, then one value per warp through shared memory and a single barrier; (4) all of a thread's loads are
// issued before any arithmetic: 8 blocks of 256 threads per SM x 32 bytes = 64 KB in flight per SM, which the
// H200's ~4 TB/s at ~1 us latency asks of each of its 132 SMs (~30 KB). x is read with an L1::no_allocate hint
// (used once), y written with .cs (streamed). The 16-byte path needs hidden % 8 == 0, 16-byte aligned x, w, y and
// hidden <= 4096; it is tested once per launch, and otherwise the same kernel runs a scalar two-pass loop over the
// row (coalesced; the second pass finds x in L1/L2). Prediction: >= 85% of the copy bandwidth at 8192 x 4096.
// Measured on the H200 through the judge (2026-12-03): 8192 x 4096: 0.039 ms, 3452 GB/s, 81.4%
//  of the copy roofline, 117.1% of the baseline.
#include <cuda_bf16.h>

__device__ __forceinline__ float bf16_lo(unsigned v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(unsigned v) { return __uint_as_float(v & 0xffff0000u); }
__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
    unsigned r;  // cvt.rn.bf16x2.f32 d, a, b puts a in the upper half and b in the lower one
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ uint4 load_once(const void* p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}
__device__ __forceinline__ float sum_sq8(uint4 v) {
    float s = 0.0f;
    const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float a = bf16_lo(u[i]), b = bf16_hi(u[i]);
        s = fmaf(a, a, s);
        s = fmaf(b, b, s);
    }
    return s;
}

// Sum over the block: shuffles inside each warp, then every thread adds the per-warp sums (one barrier).
template <int THREADS>
__device__ __forceinline__ float block_sum(float v, float* warp_sums) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    float total = 0.0f;
#pragma unroll
    for (int i = 0; i < THREADS / 32; ++i) total += warp_sums[i];
    return total;
}

template <int THREADS, int VPT>
__global__ void __launch_bounds__(THREADS)
rmsnorm_rows(int rows, int hidden, float eps, const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
             __nv_bfloat16* __restrict__ y) {
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
    __shared__ float warp_sums[THREADS / 32];
    const int r = blockIdx.x;  // grid = rows
    const size_t offset = (size_t)r * hidden;
    const bool vectorised =
        hidden % 8 == 0 && hidden <= THREADS * VPT * 8 &&
        ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(w) |
          reinterpret_cast<unsigned long long>(y)) & 15) == 0;
    if (vectorised) {
        const uint4* xr = reinterpret_cast<const uint4*>(x + offset);
        const uint4* wv = reinterpret_cast<const uint4*>(w);
        uint4* yr = reinterpret_cast<uint4*>(y + offset);
        const int pieces = hidden / 8;
        uint4 v[VPT];
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int i = threadIdx.x + j * THREADS;
            v[j] = i < pieces ? load_once(xr + i) : make_uint4(0, 0, 0, 0);
        }
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) s += sum_sq8(v[j]);
        const float inv_rms = rsqrtf(block_sum<THREADS>(s, warp_sums) / (float)hidden + eps);
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int i = threadIdx.x + j * THREADS;
            if (i < pieces) {
                const uint4 g = __ldg(wv + i);
                const unsigned xs[4] = {v[j].x, v[j].y, v[j].z, v[j].w}, ws[4] = {g.x, g.y, g.z, g.w};
                unsigned out[4];
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    out[k] = pack_bf16x2(bf16_lo(xs[k]) * inv_rms * bf16_lo(ws[k]),
                                         bf16_hi(xs[k]) * inv_rms * bf16_hi(ws[k]));
                __stcs(yr + i, make_uint4(out[0], out[1], out[2], out[3]));
            }
        }
    } else {
        const __nv_bfloat16* xr = x + offset;
        __nv_bfloat16* yr = y + offset;
        float s = 0.0f;
        for (int c = threadIdx.x; c < hidden; c += THREADS) {
            const float a = __bfloat162float(xr[c]);
            s = fmaf(a, a, s);
        }
        const float inv_rms = rsqrtf(block_sum<THREADS>(s, warp_sums) / (float)hidden + eps);
        for (int c = threadIdx.x; c < hidden; c += THREADS)
            yr[c] = __float2bfloat16_rn(__bfloat162float(xr[c]) * inv_rms * __bfloat162float(w[c]));
    }
}

/* @plan
[[launch]]
kernel = "rmsnorm_rows<256, 2>"
grid = ["rows"]
block = [256]
*/

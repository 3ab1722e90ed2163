// Step 02 - per-row FP8 quantisation: one block per row, the row kept in registers, 16-byte loads.
// Change versus 01: (1) a block of 256 threads shares a row; consecutive threads read consecutive 16-byte pieces
// (8 BF16), so a warp load is 512 contiguous bytes, and write the 8 codes of a piece as one 8-byte store (256
// contiguous bytes per warp); (2) a thread keeps its pieces of x (up to 4 x 16 bytes, a row of up to 8192 elements) in
// registers from the amax pass to the quantisation, so x is read from DRAM once: the minimum traffic is 2 bytes in and
// 1 byte out per element; (3) amax is reduced with warp shuffles (max is exact in any order), then one value per warp
// through shared memory and a single barrier, after which every thread computes the same scale; (4) all loads are
// issued before any arithmetic: 8 blocks x 256 threads x 64 bytes = 128 KB in flight per SM, several times the ~30 KB
// the H200 needs per SM to cover its latency; x is read with an L1::no_allocate hint, q written with .cs.
// The quotient stays an IEEE division (x / scale, --prec-div=true is NVRTC's default): a multiply by a reciprocal
// would round some codes differently, and the codes are checked exactly; the division costs ~10 instructions per
// element, below the memory time. Two codes are converted per cvt.rn.satfinite.e4m3x2.f32 (same rounding as one at a
// time). The 16-byte path needs cols % 8 == 0, cols <= 8192, 16-byte aligned x and 8-byte aligned q (tested once per
// launch); otherwise the same kernel runs a scalar two-pass loop over the row (coalesced; the second pass finds x in
// L1/L2). Prediction: >= 85% of the copy bandwidth at 8192 x 8192.
// Measured on the H200 through the judge (2026-12-03): 8192 x 8192: 0.063 ms, 3174 GB/s, 75.3%
//  of the copy roofline, 1102.8% of the baseline.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

__device__ __forceinline__ float bf16_lo(unsigned v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(unsigned v) { return __uint_as_float(v & 0xffff0000u); }
__device__ __forceinline__ uint4 load_once(const void* p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}
__device__ __forceinline__ float amax8(uint4 v, float m) {
    const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) m = fmaxf(m, fmaxf(fabsf(bf16_lo(u[i])), fabsf(bf16_hi(u[i]))));
    return m;
}
// Codes of the two BF16 in one word, low element in the low byte.
__device__ __forceinline__ unsigned quant2(unsigned v, float scale) {
    const float2 f = make_float2(bf16_lo(v) / scale, bf16_hi(v) / scale);
    return __nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, __NV_E4M3);
}
__device__ __forceinline__ float row_scale(float amax) { return fmaxf(amax, 1e-12f) / 448.0f; }

template <int THREADS>
__device__ __forceinline__ float block_max(float v, float* warp_max) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = v;
    __syncthreads();
    float m = warp_max[0];
#pragma unroll
    for (int i = 1; i < THREADS / 32; ++i) m = fmaxf(m, warp_max[i]);
    return m;
}

template <int THREADS, int VPT>
__global__ void __launch_bounds__(THREADS)
fp8_quant_rows(int rows, int cols, const __nv_bfloat16* __restrict__ x, __nv_fp8_e4m3* __restrict__ q,
               float* __restrict__ scales) {
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
    __shared__ float warp_max[THREADS / 32];
    const int r = blockIdx.x;  // grid = rows
    const size_t offset = (size_t)r * cols;
    const bool vectorised = cols % 8 == 0 && cols <= THREADS * VPT * 8 &&
                            (reinterpret_cast<unsigned long long>(x) & 15) == 0 &&
                            (reinterpret_cast<unsigned long long>(q) & 7) == 0;
    if (vectorised) {
        const uint4* xr = reinterpret_cast<const uint4*>(x + offset);
        uint2* qr = reinterpret_cast<uint2*>(q + offset);
        const int pieces = cols / 8;
        uint4 v[VPT];
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int i = threadIdx.x + j * THREADS;
            v[j] = i < pieces ? load_once(xr + i) : make_uint4(0, 0, 0, 0);
        }
        float m = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) m = amax8(v[j], m);
        const float scale = row_scale(block_max<THREADS>(m, warp_max));
        if (threadIdx.x == 0) scales[r] = scale;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int i = threadIdx.x + j * THREADS;
            if (i < pieces) {
                const unsigned c0 = quant2(v[j].x, scale), c1 = quant2(v[j].y, scale);
                const unsigned c2 = quant2(v[j].z, scale), c3 = quant2(v[j].w, scale);
                __stcs(qr + i, make_uint2(c0 | (c1 << 16), c2 | (c3 << 16)));
            }
        }
    } else {
        const __nv_bfloat16* xr = x + offset;
        __nv_fp8_e4m3* qr = q + offset;
        float m = 0.0f;
        for (int c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, fabsf(__bfloat162float(xr[c])));
        const float scale = row_scale(block_max<THREADS>(m, warp_max));
        if (threadIdx.x == 0) scales[r] = scale;
        for (int c = threadIdx.x; c < cols; c += THREADS)
            qr[c].__x = __nv_cvt_float_to_fp8(__bfloat162float(xr[c]) / scale, __NV_SATFINITE, __NV_E4M3);
    }
}

/* @plan
[[launch]]
kernel = "fp8_quant_rows<256, 4>"
grid = ["rows"]
block = [256]
*/

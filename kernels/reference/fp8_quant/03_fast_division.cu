// Step 03 - per-row FP8 quantisation as step 02, with the IEEE division done as a reciprocal and two corrections.
// Change versus 02: the quotient x / scale. Step 02 compiles `/` to div.rn.f32, about ten instructions per element
// with a range test (FCHK) and a branch to a slow path; at 8192 x 8192 that is an estimated 30 us of issue slots
// against ~47 us of memory time, and step 02 reached only 75% of the copy bandwidth. Here every thread computes
// rs = __frcp_rn(scale), the correctly rounded reciprocal, once per row, and every element takes five FP32
// instructions and no branch:
//   q0 = x * rs;  q1 = q0 - (q0 * scale - x) * rs;  q2 = q1 - (q1 * scale - x) * rs   (the last four as FMAs).
// Why q2 is still the correctly rounded IEEE quotient, the same FP32 value as `/` and so the same code:
// - rs is within half an ulp of 1 / scale, so q0 = RN(x * rs) is within about 1.5 ulp of x / scale;
// - when q is that close to x / scale, the residual q * scale - x is a multiple of ulp(q) * ulp(scale) and at most
//   about 2^23 of them, so it fits in FP32's 24 bits and the FMA computes it exactly; one correction by
//   -residual * rs leaves q1 within half an ulp (its rounding) plus a term of order 2^-23 ulp (the product of q0's
//   and rs's errors): within one ulp;
// - Markstein's theorem: if y = RN(1 / b) and q is within one ulp of a / b, then RN(q + (a - b q) y), with the
//   residual exact, is RN(a / b). The second correction is that step, so q2 = RN(x / scale).
// The conditions, that nothing overflows or underflows: x finite (the inputs are BF16 of finite values), rs normal
// (scale lies between 1e-12 / 448 ~ 2^-48.7 and 2^128 / 448), |x / scale| <= 448 (plus a rounding), and the
// residuals exact. Wherever the code is not zero, |x / scale| > 2^-10 (half E4M3's smallest step), so |x| > 2^-59
// and ulp(q) * ulp(scale) ~ 2^-46 |x| is far above FP32's smallest subnormal 2^-149: the residuals are exact and q2
// is bit-equal to `/`'s quotient. Only for |x| below about 2^-100 can a residual round (underflow) and q2 miss by an
// ulp, but such quotients are below 2^-100 / 2^-48.7, far under 2^-10: both give code 0x00 or 0x80 with x's sign.
// The residual is q * scale - x, subtracted, not x - q * scale added: for x = -0 that gives q2 = -0 (code 0x80) as
// -0 / scale does, where the other sign would give +0. Checked exhaustively on the CPU (NumPy, the FMAs emulated
// exactly): every finite BF16 x (and -0) with |x| <= amax against all 128 BF16 amax mantissas at 8 exponents (2^k,
// k in {-40, -20, -3, 0, 5, 20, 60, 100}) plus 3000 random FP32 scales, 37M quotients: every FP8 code identical to
// `/`'s. (Re-checked for this file, 61M quotients: codes identical; the FP32 quotients differ only where the code is
// zero, at |x / scale| < 1e-20.)
// Everything else is step 02's: a block of 256 threads per row, the row (up to 8192 elements) in registers from the
// amax pass to the quantisation, 16-byte loads with L1::no_allocate, 8-byte .cs stores, amax by shuffles and one
// barrier; the scalar two-pass fallback for other cols or alignments uses the same division. The codes of a
// thread's four pieces are all computed before the four stores.
// Registers: uncapped, the unrolled corrections take 77 registers (3 blocks of 256 per SM); __launch_bounds__(256, 5)
// caps them at 48 without spills, so 5 blocks (40 warps, 80 KB of x in flight) per SM, as step 02.
// Measured on the H200 through the judge (2026-12-04, a sweep of variants) as the sweep's
//  `fastdiv` variant, the same per-element arithmetic inside the sweep template (which also keeps a row loop and
//  a few index computations this file drops): 8192 x 8192: 0.0565 ms, 84.9% of the copy roofline (one second of
//  timed rounds; relative standard error 3.7%); step 02 in the same run 0.0634 ms, 75.6%. This file judged as a
//  file (one second of timed rounds, 2026-12-04, evening): 0.056 ms, 84.7% of the copy
//  bandwidth (relative standard error 8.4% after 3 rounds: flagged noisy).
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
__device__ __forceinline__ void store_streaming(void* p, uint2 v) {
    asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(v.x), "r"(v.y) : "memory");
}
__device__ __forceinline__ float amax8(uint4 v, float m) {
    const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) m = fmaxf(m, fmaxf(fabsf(bf16_lo(u[i])), fabsf(bf16_hi(u[i]))));
    return m;
}
// RN(x / scale), the value IEEE division gives, from rs = __frcp_rn(scale) (argument in the header).
__device__ __forceinline__ float divide(float x, float scale, float rs) {
    float q = __fmul_rn(x, rs);
    float e = __fmaf_rn(q, scale, -x);  // q * scale - x, exact
    q = __fmaf_rn(-e, rs, q);           // within one ulp of x / scale
    e = __fmaf_rn(q, scale, -x);
    return __fmaf_rn(-e, rs, q);        // Markstein: the correctly rounded quotient
}
// Codes of the two BF16 in one word, low element in the low byte.
__device__ __forceinline__ unsigned quant2(unsigned v, float scale, float rs) {
    const float2 f = make_float2(divide(bf16_lo(v), scale, rs), divide(bf16_hi(v), scale, rs));
    return __nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, __NV_E4M3);
}
// Codes of the eight BF16 of one 16-byte piece.
__device__ __forceinline__ uint2 quant8(uint4 v, float scale, float rs) {
    const unsigned c0 = quant2(v.x, scale, rs), c1 = quant2(v.y, scale, rs);
    const unsigned c2 = quant2(v.z, scale, rs), c3 = quant2(v.w, scale, rs);
    return make_uint2(c0 | (c1 << 16), c2 | (c3 << 16));
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

template <int THREADS, int VPT, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
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
        char* qr = reinterpret_cast<char*>(q + offset);
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
        const float scale = row_scale(block_max<THREADS>(m, warp_max)), rs = __frcp_rn(scale);
        if (threadIdx.x == 0) scales[r] = scale;
        uint2 c[VPT];
#pragma unroll
        for (int j = 0; j < VPT; ++j) c[j] = quant8(v[j], scale, rs);
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int i = threadIdx.x + j * THREADS;
            if (i < pieces) store_streaming(qr + (size_t)i * 8, c[j]);
        }
    } else {
        const __nv_bfloat16* xr = x + offset;
        __nv_fp8_e4m3* qr = q + offset;
        float m = 0.0f;
        for (int c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, fabsf(__bfloat162float(xr[c])));
        const float scale = row_scale(block_max<THREADS>(m, warp_max)), rs = __frcp_rn(scale);
        if (threadIdx.x == 0) scales[r] = scale;
        for (int c = threadIdx.x; c < cols; c += THREADS)
            qr[c].__x = __nv_cvt_float_to_fp8(divide(__bfloat162float(xr[c]), scale, rs), __NV_SATFINITE, __NV_E4M3);
    }
}

/* @plan
[[launch]]
kernel = "fp8_quant_rows<256, 4, 5>"
grid = ["rows"]
block = [256]
*/

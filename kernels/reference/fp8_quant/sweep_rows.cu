// Sweep template for fp8_quant (kernels/tools/sweep.py; variants in sweep.toml beside it). Derived from step 02
// (02_row_in_registers.cu): the defaults are step 02's configuration and take its code path.
// What the placeholders vary, and why each might move the last 25% of the copy bandwidth:
// - TPR threads per row (whole warps) and ROWS rows per block: fewer threads per row give each thread more 16-byte
//   loads in flight (VPT pieces) before the reduction; TPR = 32 needs no barrier at all (shuffles only).
// - VPT pieces of 16 bytes per thread: the row kept in registers holds cols <= TPR * VPT * 8.
// - MINB: __launch_bounds__' blocks per SM, i.e. a register cap. Step 02 takes 48 registers, so 5 blocks of 256
//   threads fit an SM (not the 8 its header assumed): 80 KB of x in flight per SM, not 128 KB.
// - LD1 / LD2: the PTX qualifiers of the 16-byte loads of x (L1::no_allocate, L2::256B prefetch, plain .nc).
// - ST: the qualifier of the stores of q (.cs streaming, or none); ST16: 16 codes per 16-byte store. A thread's
//   16-byte piece of x gives 8 codes (8 bytes), so lanes 2i and 2i+1 trade one 8-byte half through a shuffle: the
//   even lane stores pieces (2i, 2i+1) of its first pair of loads, the odd lane those of its second; a warp store
//   is then 512 contiguous bytes in 16-byte words. Needs cols % 16 == 0 and q 16-byte aligned (tested per launch;
//   else the 8-byte stores).
// - TWICE: read the row twice (amax pass, then the quantising pass; the second read from L1 or L2) instead of
//   keeping it in registers: short register lives, any cols on the fast path.
// - LOOP: blocks loop over rows, stride gridDim.x * ROWS (a persistent GRID such as SMS * 6); else one row per
//   thread group and GRID = cdiv(rows, ROWS) (step 02: rows).
// - PREFETCH (implies LOOP): a persistent grid (GRID) whose blocks loop over rows and issue the next row's loads before the
//   current row's reduction and quantisation, so the barrier and the divisions overlap the next row's loads.
// - FASTDIV: the quotient x / scale by a reciprocal and two residual corrections instead of IEEE division
//   (div.rn.f32: ~10 instructions, an FCHK range test and a branch per element; at 8192^2 that is ~30 us of
//   issue slots against ~47 us of memory time, so it may not hide). rs = __frcp_rn(scale) is the correctly rounded
//   reciprocal (once per row). q0 = x * rs is within 1.5 ulp of x / scale; e = q0 * scale - x is exact (FMA, no
//   underflow: |x / scale| >= 2^-11 wherever the code is not zero, and scale >= 2.2e-15), so q1 = q0 - e * rs is
//   within 1/2 ulp + 2^-23 ulp, i.e. within 1 ulp; then Markstein's theorem (y = RN(1 / b) and q within 1 ulp of
//   a / b give RN(q + (a - b q) y) = RN(a / b)) makes q2 the correctly rounded quotient, the same FP32 value as
//   `/`, hence the same code. The residual is taken as q * scale - x and subtracted, so that x = -0 gives -0
//   (code 0x80) as x / scale does: x - q * scale would give +0. Five FP32 instructions, no branch. Where x / scale
//   underflows (|x| / scale < 2^-126) the corrections are inexact, but the code is 0x00 / 0x80 with x's sign.
//   Checked on the CPU (NumPy, FMA emulated exactly): every finite BF16 x (and -0) with |x| <= amax, for all 128 BF16
//   amax mantissas times 2^k, k in {-40, -20, -3, 0, 5, 20, 60, 100}, and 3000 random FP32 scales: 37M quotients,
//   every one with a normal quotient bit-equal to the correctly rounded x / scale, every code equal.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

constexpr int TPR = ${TPR};            // threads per row, a multiple of 32
constexpr int ROWS = ${ROWS};          // rows per block
constexpr int VPT = ${VPT};            // 16-byte pieces of x per thread per pass
constexpr int MINB = ${MINB};          // __launch_bounds__ min blocks per SM
constexpr bool TWICE = ${TWICE};       // two reads of the row instead of registers
constexpr bool PREFETCH = ${PREFETCH}; // next row's loads before this row's reduction (persistent grid)
constexpr bool LOOP = ${LOOP} || PREFETCH; // blocks loop over rows (a persistent GRID); else GRID = cdiv(rows, ROWS)
constexpr bool ST16 = ${ST16};         // 16-byte stores of q (pairs of lanes trade halves)
constexpr bool FASTDIV = ${FASTDIV};   // reciprocal + two residual corrections instead of div.rn.f32
constexpr int THREADS = TPR * ROWS;
constexpr int WARPS_PER_ROW = TPR / 32;
static_assert(TPR % 32 == 0 && THREADS <= 1024, "whole warps per row");
static_assert(!(TWICE && PREFETCH), "prefetch keeps the row in registers");
static_assert(!ST16 || VPT % 2 == 0, "16-byte stores pair the pieces of two loads");

__device__ __forceinline__ float bf16_lo(unsigned v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(unsigned v) { return __uint_as_float(v & 0xffff0000u); }
__device__ __forceinline__ uint4 load1(const void* p) {
    uint4 v;
    asm("ld.global${LD1}.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ uint4 load2(const void* p) {
    uint4 v;
    asm("ld.global${LD2}.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ void store8(void* p, uint2 v) {
    asm volatile("st.global${ST}.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(v.x), "r"(v.y) : "memory");
}
__device__ __forceinline__ void store16(void* p, uint4 v) {
    asm volatile("st.global${ST}.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}
__device__ __forceinline__ float amax8(uint4 v, float m) {
    const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) m = fmaxf(m, fmaxf(fabsf(bf16_lo(u[i])), fabsf(bf16_hi(u[i]))));
    return m;
}
// x / scale rounded to FP32 as IEEE division rounds it; rs = __frcp_rn(scale) (used by FASTDIV only).
__device__ __forceinline__ float divide(float v, float scale, float rs) {
    if constexpr (FASTDIV) {
        float q = __fmul_rn(v, rs);
        float e = __fmaf_rn(q, scale, -v);  // q * scale - x, exact
        q = __fmaf_rn(-e, rs, q);           // within 1 ulp of x / scale
        e = __fmaf_rn(q, scale, -v);
        return __fmaf_rn(-e, rs, q);        // Markstein: the correctly rounded quotient
    } else {
        return v / scale;
    }
}
// Codes of the two BF16 in one word, low element in the low byte.
__device__ __forceinline__ unsigned quant2(unsigned v, float scale, float rs) {
    const float2 f = make_float2(divide(bf16_lo(v), scale, rs), divide(bf16_hi(v), scale, rs));
    return __nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, __NV_E4M3);
}
__device__ __forceinline__ uint2 quant8(uint4 v, float scale, float rs) {
    const unsigned c0 = quant2(v.x, scale, rs), c1 = quant2(v.y, scale, rs);
    const unsigned c2 = quant2(v.z, scale, rs), c3 = quant2(v.w, scale, rs);
    return make_uint2(c0 | (c1 << 16), c2 | (c3 << 16));
}
__device__ __forceinline__ float row_scale(float amax) { return fmaxf(amax, 1e-12f) / 448.0f; }
__device__ __forceinline__ float row_rcp(float scale) { return FASTDIV ? __frcp_rn(scale) : 0.0f; }

// The maximum over the TPR threads of one row. warp_max is double-buffered by `parity` (the iteration's
// parity) so that a persistent block needs one barrier per row: a buffer is rewritten two barriers after it
// was read. Every thread of the block must call it (the barrier), also those whose row is past the end.
__device__ __forceinline__ float row_max(float v, float (*warp_max)[THREADS / 32], int parity) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if constexpr (WARPS_PER_ROW == 1) {
        return v;
    } else {
        const int warp = threadIdx.x >> 5, first = warp / WARPS_PER_ROW * WARPS_PER_ROW;
        if ((threadIdx.x & 31) == 0) warp_max[parity][warp] = v;
        __syncthreads();
        float m = warp_max[parity][first];
#pragma unroll
        for (int i = 1; i < WARPS_PER_ROW; ++i) m = fmaxf(m, warp_max[parity][first + i]);
        return m;
    }
}

// VPT pieces of row xr, piece lt + j * TPR, zeros past the row (or for a row past the end).
__device__ __forceinline__ void load_row(uint4 (&v)[VPT], const uint4* xr, int lt, int pieces, bool ok) {
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int i = lt + j * TPR;
        v[j] = ok && i < pieces ? load1(xr + i) : make_uint4(0, 0, 0, 0);
    }
}

// Quantise and store the VPT pieces of v, the first at piece `base + lt`. All lanes of the warp call it (the
// 16-byte stores trade halves by shuffles); `ok` is false for a row past the end.
__device__ __forceinline__ void quant_store(const uint4 (&v)[VPT], char* qr, int base, int lt, int pieces, bool ok,
                                            bool wide, float scale, float rs) {
    if (ST16 && wide) {
        const bool odd = lt & 1;
        const int first = base + (odd ? lt - 1 + TPR : lt);  // the pair this lane stores, of load 0 or load 1
#pragma unroll
        for (int j = 0; j < VPT; j += 2) {
            // Even lane: its piece i of load j and its neighbour's i + 1; odd lane: i - 1 and i of load j + 1.
            const uint2 c0 = quant8(v[j], scale, rs), c1 = quant8(v[j + 1], scale, rs);
            const uint2 send = odd ? c0 : c1;
            const uint2 got = make_uint2(__shfl_xor_sync(0xffffffffu, send.x, 1), __shfl_xor_sync(0xffffffffu, send.y, 1));
            const int i = first + j * TPR;  // even, and then i + 1 < pieces too (pieces is even)
            const uint4 out = odd ? make_uint4(got.x, got.y, c1.x, c1.y) : make_uint4(c0.x, c0.y, got.x, got.y);
            if (ok && i < pieces) store16(qr + (size_t)i * 8, out);
        }
    } else {
        uint2 c[VPT];
#pragma unroll
        for (int j = 0; j < VPT; ++j) c[j] = quant8(v[j], scale, rs);
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int i = base + lt + j * TPR;
            if (ok && i < pieces) store8(qr + (size_t)i * 8, c[j]);
        }
    }
}

// The row held in v: amax, the scale (written by the row's first thread), the codes.
__device__ __forceinline__ void quant_row(const uint4 (&v)[VPT], int r, bool ok, int parity, int lt, int pieces,
                                          bool wide, __nv_fp8_e4m3* q, int cols, float* scales,
                                          float (*warp_max)[THREADS / 32]) {
    float m = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) m = amax8(v[j], m);
    const float scale = row_scale(row_max(m, warp_max, parity)), rs = row_rcp(scale);
    if (lt == 0 && ok) scales[r] = scale;
    quant_store(v, reinterpret_cast<char*>(q + (size_t)(ok ? r : 0) * cols), 0, lt, pieces, ok, wide, scale, rs);
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
fp8_quant_sweep(int rows, int cols, const __nv_bfloat16* __restrict__ x, __nv_fp8_e4m3* __restrict__ q,
                float* __restrict__ scales) {
    __shared__ float warp_max[2][THREADS / 32];
    const int group = threadIdx.x / TPR, lt = threadIdx.x % TPR;
    const int stride = gridDim.x * ROWS;  // rows per sweep of the grid; one sweep unless the grid is persistent
    const bool vectorised = cols % 8 == 0 && (TWICE || cols <= TPR * VPT * 8) &&
                            (reinterpret_cast<unsigned long long>(x) & 15) == 0 &&
                            (reinterpret_cast<unsigned long long>(q) & 7) == 0;
    const bool wide = ST16 && cols % 16 == 0 && (reinterpret_cast<unsigned long long>(q) & 15) == 0;
    const int pieces = cols / 8;
    int parity = 0;
    if (vectorised && !TWICE) {
        uint4 v[VPT];
        if constexpr (!LOOP) {  // step 02's path: one row per thread group, the grid covers the rows
            const int r = blockIdx.x * ROWS + group;
            const bool ok = ROWS == 1 || r < rows;  // grid = cdiv(rows, ROWS)
            load_row(v, reinterpret_cast<const uint4*>(x + (size_t)(ok ? r : 0) * cols), lt, pieces, ok);
            quant_row(v, r, ok, 0, lt, pieces, wide, q, cols, scales, warp_max);
        } else {
            int r = blockIdx.x * ROWS + group;
            load_row(v, reinterpret_cast<const uint4*>(x + (size_t)(r < rows ? r : 0) * cols), lt, pieces, r < rows);
            for (int r0 = blockIdx.x * ROWS; r0 < rows; r0 += stride, r += stride, parity ^= 1) {  // block-uniform
                const int rn = r + stride;
                const uint4* xn = reinterpret_cast<const uint4*>(x + (size_t)(rn < rows ? rn : 0) * cols);
                uint4 next[VPT];
                if constexpr (PREFETCH) load_row(next, xn, lt, pieces, rn < rows);  // in flight during this row
                quant_row(v, r, r < rows, parity, lt, pieces, wide, q, cols, scales, warp_max);
                if constexpr (PREFETCH) {
#pragma unroll
                    for (int j = 0; j < VPT; ++j) v[j] = next[j];
                } else {
                    load_row(v, xn, lt, pieces, rn < rows);
                }
            }
        }
    } else if (vectorised) {  // TWICE: an amax pass, then a quantising pass that reads the row again
        for (int r0 = blockIdx.x * ROWS; r0 < rows; r0 += stride, parity ^= 1) {
            const int r = r0 + group;
            const bool ok = r < rows;
            const uint4* xr = reinterpret_cast<const uint4*>(x + (size_t)(ok ? r : 0) * cols);
            float m = 0.0f;
            for (int base = 0; base < pieces; base += TPR * VPT) {
                uint4 v[VPT];
                load_row(v, xr + base, lt, pieces - base, ok);
#pragma unroll
                for (int j = 0; j < VPT; ++j) m = amax8(v[j], m);
            }
            const float scale = row_scale(row_max(m, warp_max, parity)), rs = row_rcp(scale);
            if (lt == 0 && ok) scales[r] = scale;
            char* qr = reinterpret_cast<char*>(q + (size_t)(ok ? r : 0) * cols);
            for (int base = 0; base < pieces; base += TPR * VPT) {
                uint4 v[VPT];
#pragma unroll
                for (int j = 0; j < VPT; ++j) {
                    const int i = base + lt + j * TPR;
                    v[j] = ok && i < pieces ? load2(xr + i) : make_uint4(0, 0, 0, 0);
                }
                quant_store(v, qr, base, lt, pieces, ok, wide, scale, rs);
            }
        }
    } else {  // any cols, any alignment: a scalar two-pass loop per row (coalesced; the second pass hits L1/L2)
        for (int r0 = blockIdx.x * ROWS; r0 < rows; r0 += stride, parity ^= 1) {
            const int r = r0 + group;
            const bool ok = r < rows;
            const __nv_bfloat16* xr = x + (size_t)(ok ? r : 0) * cols;
            __nv_fp8_e4m3* qr = q + (size_t)(ok ? r : 0) * cols;
            float m = 0.0f;
            if (ok)
                for (int c = lt; c < cols; c += TPR) m = fmaxf(m, fabsf(__bfloat162float(xr[c])));
            const float scale = row_scale(row_max(m, warp_max, parity)), rs = row_rcp(scale);
            if (lt == 0 && ok) scales[r] = scale;
            if (ok)
                for (int c = lt; c < cols; c += TPR)
                    qr[c].__x = __nv_cvt_float_to_fp8(divide(__bfloat162float(xr[c]), scale, rs), __NV_SATFINITE,
                                                      __NV_E4M3);
        }
    }
}

/* @plan
[[launch]]
kernel = "fp8_quant_sweep"
grid = ["${GRID}"]
block = ["${TPR} * ${ROWS}"]
*/

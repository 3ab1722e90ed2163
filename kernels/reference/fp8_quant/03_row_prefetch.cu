// Step 03 - per-row FP8 quantisation: persistent blocks that load the next row while they quantise this one.
// Change versus 02: (1) the grid is no longer one block per row (8192 blocks of 256 threads, 48 registers: 5 per
// SM, 13 waves, the last 41% full) but a persistent grid of cdiv(rows, cdiv(rows, 4 * SMS)) blocks, each taking
// every gridDim.x-th row (512 blocks x 16 rows at 8192 rows: all resident in one wave, the same number of rows each,
// no tail). (2) In step 02 a block's loads are all in flight only at its start: while its 8 warps find the amax, meet
// at the barrier and run 32 IEEE divisions each (about 10 instructions per element: the quantisation is a third of
// the memory time on its own), that block has nothing in flight, and its SM leans on the other 4 blocks. Here a
// thread issues its 4 x 16-byte loads of row r + gridDim.x before it touches row r, so each block always has a
// whole row (16 KB) in flight while it computes: 64 KB per SM at all times, and the divisions run under the loads
// instead of between them. The two rows cost 2 x 16 data registers; __launch_bounds__(256, 4) holds the kernel to
// 64 registers, so 4 blocks (1024 threads) stay resident. (3) The per-warp maxima go through two alternating shared
// arrays, so one barrier per row suffices (a warp cannot overwrite the array of row i before every warp has passed
// the barrier of row i + 1, after which row i's maxima are no longer read).
// Unchanged: x read with ld.global.nc.L1::no_allocate, q written as 8-byte .cs stores, amax by warp shuffles, the
// division x / scale in IEEE FP32 (the codes are checked bit for bit), two codes per cvt.rn.satfinite.e4m3x2.f32.
// The 16-byte path needs cols % 8 == 0, cols <= 8192, 16-byte aligned x and 8-byte aligned q (tested once per
// launch); otherwise the same persistent loop runs a scalar two-pass loop over each row.
// Prediction: 80-85% of the copy bandwidth at 8192 x 8192 (0.056-0.059 ms).
// Measured: not yet.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

__device__ __forceinline__ float bf16_lo(unsigned v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(unsigned v) { return __uint_as_float(v & 0xffff0000u); }
// volatile: the next row's loads must be issued where they are written, before this row's barrier and divisions.
__device__ __forceinline__ uint4 load_once(const void* p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
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

// The block's maximum of v, in every thread. warp_max: this row's array of the two (see the header, (3)).
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

// This thread's VPT pieces (8 BF16 each) of row xr, zeros past the row's end.
template <int THREADS, int VPT>
__device__ __forceinline__ void load_row(uint4 (&v)[VPT], const uint4* xr, int pieces) {
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int i = threadIdx.x + j * THREADS;
        v[j] = i < pieces ? load_once(xr + i) : make_uint4(0, 0, 0, 0);
    }
}

template <int THREADS, int VPT, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
fp8_quant_persistent(int rows, int cols, const __nv_bfloat16* __restrict__ x, __nv_fp8_e4m3* __restrict__ q,
                     float* __restrict__ scales) {
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
    __shared__ float warp_max[2][THREADS / 32];
    const bool vectorised = cols % 8 == 0 && cols <= THREADS * VPT * 8 &&
                            (reinterpret_cast<unsigned long long>(x) & 15) == 0 &&
                            (reinterpret_cast<unsigned long long>(q) & 7) == 0;
    const int stride = gridDim.x;
    if (vectorised) {
        const int pieces = cols / 8;
        int r = blockIdx.x;
        uint4 v[VPT];
        if (r < rows) load_row<THREADS, VPT>(v, reinterpret_cast<const uint4*>(x + (size_t)r * cols), pieces);
        for (int it = 0; r < rows; ++it, r += stride) {
            // Row r + stride's loads go out first; row r's data is already (or about to be) in v.
            uint4 next[VPT];
            if (r + stride < rows)
                load_row<THREADS, VPT>(next, reinterpret_cast<const uint4*>(x + (size_t)(r + stride) * cols), pieces);
            else
#pragma unroll
                for (int j = 0; j < VPT; ++j) next[j] = make_uint4(0, 0, 0, 0);  // last row: nothing to load
            float m = 0.0f;
#pragma unroll
            for (int j = 0; j < VPT; ++j) m = amax8(v[j], m);
            const float scale = row_scale(block_max<THREADS>(m, warp_max[it & 1]));
            if (threadIdx.x == 0) scales[r] = scale;
            uint2* qr = reinterpret_cast<uint2*>(q + (size_t)r * cols);
#pragma unroll
            for (int j = 0; j < VPT; ++j) {
                const int i = threadIdx.x + j * THREADS;
                if (i < pieces) {
                    const unsigned c0 = quant2(v[j].x, scale), c1 = quant2(v[j].y, scale);
                    const unsigned c2 = quant2(v[j].z, scale), c3 = quant2(v[j].w, scale);
                    __stcs(qr + i, make_uint2(c0 | (c1 << 16), c2 | (c3 << 16)));
                }
            }
#pragma unroll
            for (int j = 0; j < VPT; ++j) v[j] = next[j];
        }
    } else {
        for (int it = 0, r = blockIdx.x; r < rows; ++it, r += stride) {
            const __nv_bfloat16* xr = x + (size_t)r * cols;
            __nv_fp8_e4m3* qr = q + (size_t)r * cols;
            float m = 0.0f;
            for (int c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, fabsf(__bfloat162float(xr[c])));
            const float scale = row_scale(block_max<THREADS>(m, warp_max[it & 1]));
            if (threadIdx.x == 0) scales[r] = scale;
            for (int c = threadIdx.x; c < cols; c += THREADS)
                qr[c].__x = __nv_cvt_float_to_fp8(__bfloat162float(xr[c]) / scale, __NV_SATFINITE, __NV_E4M3);
        }
    }
}

/* @plan
[[launch]]
kernel = "fp8_quant_persistent<256, 4, 4>"
grid = ["cdiv(rows, cdiv(rows, 4 * SMS))"]
block = [256]
*/

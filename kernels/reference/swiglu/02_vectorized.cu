// Step 02 - SwiGLU: 16-byte loads and stores.
// Change versus 01: (1) each thread moves 16 bytes (8 BF16) per load and store instead of 2: 8x fewer memory
// instructions, each warp request 512 contiguous bytes of gate, of up and of out; (2) both loads of a thread are
// issued before any arithmetic: 2048 threads x 32 bytes = 64 KB in flight per SM, twice the ~30 KB that the H200's
// bandwidth-latency product asks of each SM (2, 4 and 8 pieces per thread, UNROLL, were measured 1.5-3% slower:
// fewer, longer-lived blocks, nothing more to hide); (3) gate and up are read with an L1::no_allocate hint and out
// written with .cs: each byte is touched once; (4) silu uses the fast exponential (__expf, ex2.approx: a few ulp, far
// below BF16's 2^-8) and a fast division (__fdividef: when 1 + exp(-g) overflows past 2^126 it returns 0, which is
// silu's limit there too), so the arithmetic stays well under the memory time. One pass, no reuse: 6 bytes per
// element is the minimum traffic. The 16-byte path needs 16-byte aligned gate, up and out (tested once per launch;
// the flat tail of fewer than 8 elements is done by the last block); otherwise each block covers the same elements
// with 2-byte accesses. Prediction: >= 90% of the copy bandwidth; PyTorch's silu(g) * up makes two passes (5 array
// transfers, not 3).
// Measured on the H200 through the judge (2026-12-03): 8192 x 14336: 0.178 ms, 3965 GB/s,
//  93.5% of the copy roofline, 161.3% of the baseline.
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
__device__ __forceinline__ float swiglu1(float g, float u) { return __fdividef(g, 1.0f + __expf(-g)) * u; }
__device__ __forceinline__ unsigned swiglu2(unsigned g, unsigned u) {
    return pack_bf16x2(swiglu1(bf16_lo(g), bf16_lo(u)), swiglu1(bf16_hi(g), bf16_hi(u)));
}

template <int THREADS, int UNROLL>
__global__ void __launch_bounds__(THREADS)
swiglu_vec(int tokens, int inter, const __nv_bfloat16* __restrict__ gate, const __nv_bfloat16* __restrict__ up,
           __nv_bfloat16* __restrict__ out) {
    constexpr int PER_BLOCK = THREADS * UNROLL * 8;  // elements
    const size_t n = (size_t)tokens * inter;
    const size_t start = (size_t)blockIdx.x * PER_BLOCK;
    const bool vectorised = ((reinterpret_cast<unsigned long long>(gate) | reinterpret_cast<unsigned long long>(up) |
                              reinterpret_cast<unsigned long long>(out)) & 15) == 0;
    if (vectorised) {
        const size_t pieces = n / 8;
        const size_t first = start / 8 + threadIdx.x;
        const uint4* g4 = reinterpret_cast<const uint4*>(gate);
        const uint4* u4 = reinterpret_cast<const uint4*>(up);
        uint4* o4 = reinterpret_cast<uint4*>(out);
        uint4 g[UNROLL], u[UNROLL];
#pragma unroll
        for (int j = 0; j < UNROLL; ++j) {
            const size_t i = first + (size_t)j * THREADS;
            if (i < pieces) {
                g[j] = load_once(g4 + i);
                u[j] = load_once(u4 + i);
            }
        }
#pragma unroll
        for (int j = 0; j < UNROLL; ++j) {
            const size_t i = first + (size_t)j * THREADS;
            if (i < pieces)
                __stcs(o4 + i, make_uint4(swiglu2(g[j].x, u[j].x), swiglu2(g[j].y, u[j].y), swiglu2(g[j].z, u[j].z),
                                          swiglu2(g[j].w, u[j].w)));
        }
        if (blockIdx.x == gridDim.x - 1)
            for (size_t i = pieces * 8 + threadIdx.x; i < n; i += THREADS)
                out[i] = __float2bfloat16_rn(swiglu1(__bfloat162float(gate[i]), __bfloat162float(up[i])));
    } else {
#pragma unroll 4
        for (int j = 0; j < UNROLL * 8; ++j) {
            const size_t i = start + (size_t)j * THREADS + threadIdx.x;
            if (i < n) out[i] = __float2bfloat16_rn(swiglu1(__bfloat162float(gate[i]), __bfloat162float(up[i])));
        }
    }
}

/* @plan
[[launch]]
kernel = "swiglu_vec<256, 1>"
grid = ["cdiv(tokens * inter, 2048)"]
block = [256]
*/

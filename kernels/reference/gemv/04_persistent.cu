// Step 04 - persistent blocks: two blocks of 8 warps per SM loop over the 16-row tiles, 4 chunks in flight per warp
// Change versus 03: (1) the grid is min(tiles, 2 x SMs) blocks (264 on the H200) instead of one block per 16-row
// tile (512 at N = 8192), and each block walks the tiles tile = blockIdx.x, + gridDim.x, ... (block-uniform, so the
// barriers stay legal; at N = 8192 a block does one or two tiles). (2) Each warp has 4 chunks of 32 k in flight
// before its mma's instead of 2: 4 x 2 x 16 bytes of W per lane, 128 KB of W in flight per SM at 2 blocks of 256
// threads, as much as step 03's 4 blocks x 2 chunks; __launch_bounds__(256, 2) lets it take the registers (77, no
// spills). Everything else is step 03's: the fragments straight from global memory, the warps of a block splitting
// K and adding their partial sums through shared memory, the L2::256B hint on W, the gather path (still 2 chunks in
// flight, so that its scalar loads do not set the register count) for unaligned W / x or K % 8 != 0.
// Why it can pay: step 03's 512 blocks are all resident at once (4 per SM on 132 SMs), but they start and end
// together: every block's first loads wait on DRAM at the same time, and an SM's last block ends alone. A persistent
// block issues its next tile's loads as soon as its previous tile's sums are stored, so an SM's load queue stays
// full across tile boundaries; the deeper per-warp pipeline makes up for the fewer warps. The sweep of this family
// also tried 32 and 64 rows per block, 4 and 16 warps, whole rows per warp, 4 or 8 chunks without
// the persistent grid and no prefetch hint; none was faster.
// Measured on the H200 through the judge as the sweep's variant persist_w8_u4 (2026-12-05), not yet as this
// file: 8192 x 8192 x 1 / x 8: 0.0395 / 0.0400 ms, 80.9% / 80.0% of the copy roofline
//  (1 s of timed rounds), and 0.0393 / 0.0399 ms, 81.3% / 80.3% (6 s); step 03 in the same runs 80.0 / 78.9% and
//  79.8 / 79.2%. The judge flags every one of these medians noisy (relative standard error of the median
//  3.5-8.7%): the gain over step 03 is about 1 point and the margin over the 80% mark 0-1.3 points. This file is
//  not the variant's machine code: the same 60 global loads, 12 mma's, 4 barriers and 18 shared accesses in
//  another register allocation and order (624 against 632 instructions).
#include <cuda_bf16.h>

__device__ __forceinline__ uint4 load_once(const void* p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}
__device__ __forceinline__ unsigned short bf16_bits(const __nv_bfloat16* p) {
    return __bfloat16_as_ushort(*p);
}
// The 8 elements row[k .. k+7], zeros for k past K or a row that does not exist. VEC: k % 8 == 0, row 16-byte aligned.
template <bool VEC, bool STREAM>
__device__ __forceinline__ uint4 piece(const __nv_bfloat16* row, int k, int K, bool row_ok) {
    if constexpr (VEC) {
        if (!row_ok || k >= K) return make_uint4(0, 0, 0, 0);
        return STREAM ? load_once(row + k) : __ldg(reinterpret_cast<const uint4*>(row + k));
    } else {
        unsigned u[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const unsigned lo = row_ok && k + 2 * i < K ? bf16_bits(row + k + 2 * i) : 0u;
            const unsigned hi = row_ok && k + 2 * i + 1 < K ? bf16_bits(row + k + 2 * i + 1) : 0u;
            u[i] = lo | (hi << 16);
        }
        return make_uint4(u[0], u[1], u[2], u[3]);
    }
}
// D += A (16 x 16, row-major) * B (16 x 8, column-major), BF16 in, FP32 accumulate.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                               unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Rows tile * 16 .. tile * 16 + 15 of y.
template <int WARPS, int U, bool VEC>
__device__ __forceinline__ void gemv_tile(int tile, int N, int K, int B, const __nv_bfloat16* __restrict__ W,
                                           const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y,
                                           float (*sums)[32][4]) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int n_lo = tile * 16 + g, n_hi = n_lo + 8;
    const bool lo_ok = n_lo < N, hi_ok = n_hi < N;
    const __nv_bfloat16* w_lo = W + (size_t)(lo_ok ? n_lo : 0) * K;
    const __nv_bfloat16* w_hi = W + (size_t)(hi_ok ? n_hi : 0) * K;
    const int chunks = (K + 31) / 32;
    for (int b0 = 0; b0 < B; b0 += 8) {
        const bool x_ok = b0 + g < B;
        const __nv_bfloat16* xg = x + (size_t)(x_ok ? b0 + g : 0) * K;
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int c0 = warp; c0 < chunks; c0 += WARPS * U) {
            uint4 a_lo[U], a_hi[U], bx[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int k = (c0 + u * WARPS) * 32 + 8 * t;
                a_lo[u] = piece<VEC, true>(w_lo, k, K, lo_ok);
                a_hi[u] = piece<VEC, true>(w_hi, k, K, hi_ok);
                bx[u] = piece<VEC, false>(xg, k, K, x_ok);
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                mma_bf16_16816(d, a_lo[u].x, a_hi[u].x, a_lo[u].y, a_hi[u].y, bx[u].x, bx[u].y);
                mma_bf16_16816(d, a_lo[u].z, a_hi[u].z, a_lo[u].w, a_hi[u].w, bx[u].z, bx[u].w);
            }
        }
        // d[0], d[1]: row g, vectors 2t, 2t+1; d[2], d[3]: row g + 8. Add the warps' partial sums.
#pragma unroll
        for (int j = 0; j < 4; ++j) sums[warp][lane][j] = d[j];
        __syncthreads();
        if (threadIdx.x < 128) {
            const int l = threadIdx.x >> 2, j = threadIdx.x & 3;
            float s = 0.0f;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) s += sums[w][l][j];
            const int n = tile * 16 + (l >> 2) + (j >= 2 ? 8 : 0);
            const int b = b0 + 2 * (l & 3) + (j & 1);
            if (n < N && b < B) y[(size_t)b * N + n] = __float2bfloat16_rn(s);
        }
        __syncthreads();  // sums is reused by the next 8 vectors (or the next tile)
    }
}

template <int WARPS, int U>
__global__ void __launch_bounds__(WARPS * 32, 2)
gemv_persistent(int N, int K, int B, const __nv_bfloat16* __restrict__ W, const __nv_bfloat16* __restrict__ x,
                __nv_bfloat16* __restrict__ y) {
    static_assert(WARPS >= 4, "the final sum uses 128 threads");
    __shared__ float sums[WARPS][32][4];
    const bool vectorised =
        K % 8 == 0 && ((reinterpret_cast<unsigned long long>(W) | reinterpret_cast<unsigned long long>(x)) & 15) == 0;
    const int tiles = (N + 15) / 16;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {  // block-uniform
        if (vectorised)
            gemv_tile<WARPS, U, true>(tile, N, K, B, W, x, y, sums);
        else
            gemv_tile<WARPS, (U < 2 ? U : 2), false>(tile, N, K, B, W, x, y, sums);
    }
}

/* @plan
[[launch]]
kernel = "gemv_persistent<8, 4>"
grid = ["min(cdiv(N, 16), SMS * 2)"]
block = [256]
*/

// Step 04 - GEMV on the tensor cores, twice the bytes of W in flight, optionally 32 rows per block.
// Change versus 03: (1) each warp takes U = 4 chunks of 32 k per round (step 03: 2), so a lane has 4 x 2 x 16 = 128
// bytes of W in flight before its first mma, 128 KB per SM at 4 blocks of 256 threads: the load depth at which
// reduce_sum's float4 stream ran at the full copy bandwidth (step 03 had 64 KB per SM and held 78-80%). (2) To pay
// for those registers under the 64-register cap (4 blocks per SM, all 512 blocks resident in one wave), the x
// fragment of a chunk is no longer loaded with W but just before its two mma: x is 16 KB (B = 1) or 128 KB
// (B = 8) that every block reads, an L1/L2 hit after the first blocks, so it needs no long lead. (3) A template
// parameter G sets how many groups of 16 rows a block owns: with G = 2 (32 rows, 16 warps) every x fragment feeds
// 4 mma instead of 2, which halves the x traffic from L2/L1 into the SMs (at B = 8 it is half of W's bytes with
// G = 1), for 256 blocks of 512 threads, 2 per SM. The plan below uses G = 1; scratch variants try G = 2.
// Unchanged from 03: lane (g, t) loads k 8t .. 8t+7 of a chunk from rows g and g + 8 and of vector g, the first and
// last 4 elements feeding two m16n8k16 (both operands depend on t alone, so the k match), W loaded with
// ld.global.nc.L1::no_allocate.L2::256B, the warps' 16 x 8 sums added through shared memory, and the element-by-
// element path when K % 8 != 0 or W or x is not 16-byte aligned (with U = 1 there: it serves the ragged test
// shapes, and 4 chunks of gathered fragments would spill).
// Prediction: B = 1 and B = 8 both at 82-86% of the copy bandwidth (0.037-0.039 ms).
// Measured: not yet.
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

template <int WARPS, int U, int G, bool VEC>
__device__ __forceinline__ void gemv_block(int N, int K, int B, const __nv_bfloat16* __restrict__ W,
                                           const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y,
                                           float (*sums)[32][4 * G]) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int base = blockIdx.x * 16 * G;
    bool lo_ok[G], hi_ok[G];
    const __nv_bfloat16* w_lo[G];
    const __nv_bfloat16* w_hi[G];
#pragma unroll
    for (int h = 0; h < G; ++h) {
        const int n_lo = base + 16 * h + g, n_hi = n_lo + 8;
        lo_ok[h] = n_lo < N;
        hi_ok[h] = n_hi < N;
        w_lo[h] = W + (size_t)(lo_ok[h] ? n_lo : 0) * K;
        w_hi[h] = W + (size_t)(hi_ok[h] ? n_hi : 0) * K;
    }
    const int chunks = (K + 31) / 32;
    for (int b0 = 0; b0 < B; b0 += 8) {
        const bool x_ok = b0 + g < B;
        const __nv_bfloat16* xg = x + (size_t)(x_ok ? b0 + g : 0) * K;
        float d[G][4];
#pragma unroll
        for (int h = 0; h < G; ++h) d[h][0] = d[h][1] = d[h][2] = d[h][3] = 0.0f;
        for (int c0 = warp; c0 < chunks; c0 += WARPS * U) {
            uint4 a_lo[G][U], a_hi[G][U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int k = (c0 + u * WARPS) * 32 + 8 * t;
#pragma unroll
                for (int h = 0; h < G; ++h) {
                    a_lo[h][u] = piece<VEC, true>(w_lo[h], k, K, lo_ok[h]);
                    a_hi[h][u] = piece<VEC, true>(w_hi[h], k, K, hi_ok[h]);
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int k = (c0 + u * WARPS) * 32 + 8 * t;
                const uint4 bx = piece<VEC, false>(xg, k, K, x_ok);
#pragma unroll
                for (int h = 0; h < G; ++h) {
                    mma_bf16_16816(d[h], a_lo[h][u].x, a_hi[h][u].x, a_lo[h][u].y, a_hi[h][u].y, bx.x, bx.y);
                    mma_bf16_16816(d[h], a_lo[h][u].z, a_hi[h][u].z, a_lo[h][u].w, a_hi[h][u].w, bx.z, bx.w);
                }
            }
        }
        // d[h][0], d[h][1]: row 16h + g, vectors 2t, 2t+1; d[h][2], d[h][3]: row 16h + g + 8. Add the warps' sums.
#pragma unroll
        for (int h = 0; h < G; ++h)
#pragma unroll
            for (int j = 0; j < 4; ++j) sums[warp][lane][4 * h + j] = d[h][j];
        __syncthreads();
        if (threadIdx.x < 128 * G) {
            const int h = threadIdx.x >> 7, l = (threadIdx.x >> 2) & 31, j = threadIdx.x & 3;
            float s = 0.0f;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) s += sums[w][l][4 * h + j];
            const int n = base + 16 * h + (l >> 2) + (j >= 2 ? 8 : 0);
            const int b = b0 + 2 * (l & 3) + (j & 1);
            if (n < N && b < B) y[(size_t)b * N + n] = __float2bfloat16_rn(s);
        }
        __syncthreads();  // sums is reused by the next 8 vectors
    }
}

// Blocks per SM that the launch bounds ask for: 1024 threads per SM, so at most 64 registers a thread.
template <int WARPS>
constexpr int blocks_per_sm = 1024 / (WARPS * 32);

template <int WARPS, int U, int G>
__global__ void __launch_bounds__(WARPS * 32, blocks_per_sm<WARPS>)
gemv_mma_deep(int N, int K, int B, const __nv_bfloat16* __restrict__ W, const __nv_bfloat16* __restrict__ x,
              __nv_bfloat16* __restrict__ y) {
    static_assert(WARPS * 32 >= 128 * G, "the final sum uses 128 threads per group of 16 rows");
    __shared__ float sums[WARPS][32][4 * G];
    const bool vectorised =
        K % 8 == 0 && ((reinterpret_cast<unsigned long long>(W) | reinterpret_cast<unsigned long long>(x)) & 15) == 0;
    if (vectorised)
        gemv_block<WARPS, U, G, true>(N, K, B, W, x, y, sums);
    else
        gemv_block<WARPS, 1, G, false>(N, K, B, W, x, y, sums);  // ragged shapes only: no depth needed
}

/* @plan
[[launch]]
kernel = "gemv_mma_deep<8, 4, 1>"
grid = ["cdiv(N, 16)"]
block = [256]
*/

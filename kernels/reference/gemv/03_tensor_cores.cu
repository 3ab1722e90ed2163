// Step 03 - GEMV on the tensor cores: mma.sync m16n8k16 takes 16 rows of W against the (up to 8) vectors.
// Change versus 02: (1) the multiply-adds move to the tensor cores. With B = 8 the problem is an 8192 x 8 x 8192
// GEMM, and m16n8k16's n = 8 is exactly B: one warp instruction does 16 rows x 16 k x 8 vectors (2048 multiply-adds,
// FP32 accumulation) where step 02 needed 64 FMA per lane plus the BF16 conversions. The fragments come straight
// from global memory, no shared memory and no ldmatrix: a dot product does not care in which order k is summed, so
// lane (g, t) (g = lane / 4, t = lane % 4) loads 16 bytes = k 8t .. 8t+7 of a chunk of 32 k from rows g and g + 8
// of W and from vector g of x, and uses the first 4 elements of each as its fragment for one mma and the last 4 for
// a second one. The k that the instruction calls 2t, 2t+1, 2t+8, 2t+9 are then the same 4 physical k in A (W) and B
// (x), since both sides depend on t alone: the sums are right, each 16-byte load covers 8 rows x 64 contiguous bytes,
// and 32 lanes x 3 loads bring in 16 rows x 32 k of W and 8 vectors x 32 k of x. Vectors past B load zeros (B = 1
// runs the same code, the tensor core doing 7 wasted columns for free). (2) A block of 8 warps owns 16 rows and
// splits K between its warps (chunk c goes to warp c % 8, so the block streams 512 contiguous bytes per row), 2 chunks
// per warp in flight (2 x 32 bytes of W per lane before the mma); the 8 warps' 16 x 8 results are added through 4 KB
// of shared memory. 512 blocks of 256 threads at N = 8192, capped at 64 registers so that all of them are resident at
// once (4 per SM, no second wave): 64 KB of W in flight per SM. (3) A load takes 64 bytes of each of 8 rows, so W is
// loaded with an L2::256B prefetch hint: L2 asks DRAM for whole 256-byte blocks (the next chunks of the same rows)
// in fewer, larger requests; measured here, that alone moved B = 8 from 77% to 83% of the copy bandwidth. x (16 KB
// per vector) is re-read by every block from L2/L1 (ld.global.nc), half of W's bytes at B = 8, but never from DRAM.
// The 16-byte path needs K % 8 == 0 and 16-byte aligned W and x (tested once per launch); otherwise the same
// fragments are gathered element by element. Prediction: B = 1 and B = 8 both above 80% of the copy bandwidth.
// Measured on the H200 through the judge (2026-12-03): 8192 x 8192 x 1: 0.040 ms, 3381 GB/s,
//  79.8% of the copy roofline, 113.0% of the baseline; 8192 x 8192 x 8: 0.040 ms, 3323 GB/s, 78.4% of the copy
//  roofline, 110.6% of the baseline.
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

template <int WARPS, int U, bool VEC>
__device__ __forceinline__ void gemv_block(int N, int K, int B, const __nv_bfloat16* __restrict__ W,
                                           const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y,
                                           float (*sums)[32][4]) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int n_lo = blockIdx.x * 16 + g, n_hi = n_lo + 8;
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
            const int n = blockIdx.x * 16 + (l >> 2) + (j >= 2 ? 8 : 0);
            const int b = b0 + 2 * (l & 3) + (j & 1);
            if (n < N && b < B) y[(size_t)b * N + n] = __float2bfloat16_rn(s);
        }
        __syncthreads();  // sums is reused by the next 8 vectors
    }
}

template <int WARPS, int U>
__global__ void __launch_bounds__(WARPS * 32, 4)
gemv_mma(int N, int K, int B, const __nv_bfloat16* __restrict__ W, const __nv_bfloat16* __restrict__ x,
         __nv_bfloat16* __restrict__ y) {
    static_assert(WARPS >= 4, "the final sum uses 128 threads");
    __shared__ float sums[WARPS][32][4];
    const bool vectorised =
        K % 8 == 0 && ((reinterpret_cast<unsigned long long>(W) | reinterpret_cast<unsigned long long>(x)) & 15) == 0;
    if (vectorised)
        gemv_block<WARPS, U, true>(N, K, B, W, x, y, sums);
    else
        gemv_block<WARPS, U, false>(N, K, B, W, x, y, sums);
}

/* @plan
[[launch]]
kernel = "gemv_mma<8, 2>"
grid = ["cdiv(N, 16)"]
block = [256]
*/

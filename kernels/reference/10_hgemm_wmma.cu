// Step 10 - HGEMM on the tensor cores with WMMA (FP16 inputs, FP32 accumulation and output).
// Change versus the SGEMM ladder: the multiply-adds move from the FP32 pipes (FFMA, ~67 TFLOP/s) to the tensor
// cores, through the portable nvcuda::wmma API: each warp owns a 64 x 32 piece of a 128 x 128 block tile, held as
// 4 x 2 accumulator fragments of 16 x 16, and per 16-wide k slice loads 4 A and 2 B fragments from shared memory
// and issues 8 fragment products. Shared rows are padded by 8 halves (16 bytes) so the fragment loads spread over
// the banks. Loads are plain synchronous 16-byte loads, one buffer. Prediction: far above any FP32 kernel, but only
// ~30-45% of cuBLAS: nothing overlaps the global loads with the math, and WMMA's generic fragment loads are not
// the best instruction sequence (step 11 fixes both).
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

template <int BM, int BN, int BK, int WM, int WN, bool ALIGNED>
__device__ __forceinline__ void hgemm_wmma_body(int M, int N, int K, float alpha, const __half* __restrict__ A,
                                                const __half* __restrict__ B, float beta, float* __restrict__ C,
                                                __half* As, __half* Bs, float* Cs) {
    constexpr int WARPS_N = BN / WN;
    constexpr int NT = (BM / WM) * WARPS_N * 32;
    constexpr int AS = BK + 8, BS = BN + 8;  // padded rows (in halves)
    constexpr int FM = WM / 16, FN = WN / 16;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < K; k0 += BK) {
        // Global -> shared in 8-half (16-byte) chunks; out-of-range halves become 0.
#pragma unroll
        for (int idx = tid; idx < BM * BK / 8; idx += NT) {
            const int r = idx / (BK / 8), c = (idx % (BK / 8)) * 8;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (ALIGNED) {
                if (m0 + r < M && k0 + c < K) v = *reinterpret_cast<const uint4*>(A + (size_t)(m0 + r) * K + k0 + c);
            } else {
                __half h[8];
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    h[q] = (m0 + r < M && k0 + c + q < K) ? A[(size_t)(m0 + r) * K + k0 + c + q] : __float2half(0.0f);
                v = *reinterpret_cast<uint4*>(h);
            }
            *reinterpret_cast<uint4*>(&As[r * AS + c]) = v;
        }
#pragma unroll
        for (int idx = tid; idx < BK * BN / 8; idx += NT) {
            const int r = idx / (BN / 8), c = (idx % (BN / 8)) * 8;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (ALIGNED) {
                if (k0 + r < K && n0 + c < N) v = *reinterpret_cast<const uint4*>(B + (size_t)(k0 + r) * N + n0 + c);
            } else {
                __half h[8];
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    h[q] = (k0 + r < K && n0 + c + q < N) ? B[(size_t)(k0 + r) * N + n0 + c + q] : __float2half(0.0f);
                v = *reinterpret_cast<uint4*>(h);
            }
            *reinterpret_cast<uint4*>(&Bs[r * BS + c]) = v;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[FN];
#pragma unroll
            for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(fa[i], &As[(wm0 + i * 16) * AS + kk], AS);
#pragma unroll
            for (int j = 0; j < FN; ++j) wmma::load_matrix_sync(fb[j], &Bs[kk * BS + wn0 + j * 16], BS);
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        __syncthreads();
    }

    // Epilogue: the fragment's element layout is opaque, so each 16x16 result goes through a per-warp staging
    // tile in shared memory, then every lane applies alpha/beta to 8 elements with bounds checks.
    float* cw = Cs + warp * 256;
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) {
            wmma::store_matrix_sync(cw, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const int idx = lane + 32 * e, r = idx / 16, c = idx % 16;
                const int row = m0 + wm0 + i * 16 + r, col = n0 + wn0 + j * 16 + c;
                if (row < M && col < N) {
                    const size_t o = (size_t)row * N + col;
                    C[o] = alpha * cw[idx] + beta * C[o];
                }
            }
            __syncwarp();
        }
}

template <int BM, int BN, int BK, int WM, int WN>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
hgemm_wmma(int M, int N, int K, float alpha, const __half* __restrict__ A, const __half* __restrict__ B, float beta,
           float* __restrict__ C) {
    __shared__ __align__(32) __half As[BM * (BK + 8)];
    __shared__ __align__(32) __half Bs[BK * (BN + 8)];
    __shared__ __align__(32) float Cs[(BM / WM) * (BN / WN) * 256];
    const bool aligned = (K % 8 == 0) && (N % 8 == 0) &&
                         (((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B)) & 15) == 0);
    if (aligned)
        hgemm_wmma_body<BM, BN, BK, WM, WN, true>(M, N, K, alpha, A, B, beta, C, As, Bs, Cs);
    else
        hgemm_wmma_body<BM, BN, BK, WM, WN, false>(M, N, K, alpha, A, B, beta, C, As, Bs, Cs);
}

/* @plan
[[launch]]
kernel = "hgemm_wmma<128, 128, 32, 64, 32>"
grid = ["cdiv(N, 128)", "cdiv(M, 128)"]
block = [256]
*/

// Tensor cores through WMMA: each warp owns a 32 x 32 piece of a 64 x 64 block tile (2 x 2 fragments of
// 16 x 16), K in steps of 16 staged through shared memory with zero fill past the edges; FP32 accumulators.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void hgemm_wmma(int M, int N, int K, float alpha, const __half* A, const __half* B,
                                      float beta, float* C) {
    __shared__ __half As[64][16 + 8];   // +8 halves of padding against bank conflicts
    __shared__ __half Bs[16][64 + 8];
    __shared__ float Cs[4][32][32 + 4];
    const int warp = threadIdx.x / 32, wr = warp / 2, wc = warp % 2;
    const int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int i = threadIdx.x; i < 64 * 16; i += 128) {
            int r = i / 16, k = i % 16;
            As[r][k] = (row0 + r < M && k0 + k < K) ? A[(size_t)(row0 + r) * K + k0 + k] : __float2half(0.f);
            int kb = i / 64, c = i % 64;
            Bs[kb][c] = (k0 + kb < K && col0 + c < N) ? B[(size_t)(k0 + kb) * N + col0 + c] : __float2half(0.f);
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
        for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &As[wr * 32 + i * 16][0], 16 + 8);
        for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &Bs[0][wc * 32 + j * 16], 64 + 8);
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        __syncthreads();
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(&Cs[warp][i * 16][j * 16], acc[i][j], 32 + 4, wmma::mem_row_major);
    __syncwarp();
    for (int e = threadIdx.x % 32; e < 32 * 32; e += 32) {
        int r = row0 + wr * 32 + e / 32, c = col0 + wc * 32 + e % 32;
        if (r < M && c < N) C[(size_t)r * N + c] = alpha * Cs[warp][e / 32][e % 32] + beta * C[(size_t)r * N + c];
    }
}

/* @plan
[[launch]]
kernel = "hgemm_wmma"
grid = ["cdiv(N, 64)", "cdiv(M, 64)"]
block = [128]
*/

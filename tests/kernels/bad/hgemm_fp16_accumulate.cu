// Expected: wrong_answer for hgemm. WMMA with an FP16 accumulator: every partial sum is rounded to 11 bits.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void hgemm_fp16acc(int M, int N, int K, float alpha, const __half* A, const __half* B,
                                         float beta, float* C) {
    __shared__ __half As[16][16], Bs[16][16], Cs[16][16];
    const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 16, lane = threadIdx.x;
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> acc;
    wmma::fill_fragment(acc, __float2half(0.f));
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int i = lane; i < 256; i += 32) {
            int r = i / 16, k = i % 16;
            As[r][k] = (row0 + r < M && k0 + k < K) ? A[(row0 + r) * K + k0 + k] : __float2half(0.f);
            Bs[r][k] = (k0 + r < K && col0 + k < N) ? B[(k0 + r) * N + col0 + k] : __float2half(0.f);
        }
        __syncwarp();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, &As[0][0], 16);
        wmma::load_matrix_sync(fb, &Bs[0][0], 16);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncwarp();
    }
    wmma::store_matrix_sync(&Cs[0][0], acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
        int r = row0 + e / 16, c = col0 + e % 16;
        if (r < M && c < N) C[r * N + c] = alpha * __half2float(Cs[e / 16][e % 16]) + beta * C[r * N + c];
    }
}

/* @plan
[[launch]]
kernel = "hgemm_fp16acc"
grid = ["cdiv(N, 16)", "cdiv(M, 16)"]
block = [32]
*/

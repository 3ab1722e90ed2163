// Expected: wrong_answer for sgemm. Tensor cores in TF32 (10-bit mantissa operands): fast, but the error
// (~1e-4 relative) is far above FP32's, and the problem asks for FP32.
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void sgemm_tf32(int M, int N, int K, float alpha, const float* A, const float* B,
                                      float beta, float* C) {
    __shared__ float As[16][8], Bs[8][16], Cs[16][16];
    const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 16, lane = threadIdx.x;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.f);
    for (int k0 = 0; k0 < K; k0 += 8) {
        for (int i = lane; i < 128; i += 32) {
            int r = i / 8, k = i % 8;
            As[r][k] = (row0 + r < M && k0 + k < K) ? A[(row0 + r) * K + k0 + k] : 0.f;
            int kb = i / 16, c = i % 16;
            Bs[kb][c] = (k0 + kb < K && col0 + c < N) ? B[(k0 + kb) * N + col0 + c] : 0.f;
        }
        __syncwarp();
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, &As[0][0], 8);
        wmma::load_matrix_sync(fb, &Bs[0][0], 16);
        for (int t = 0; t < fa.num_elements; ++t) fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
        for (int t = 0; t < fb.num_elements; ++t) fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncwarp();
    }
    wmma::store_matrix_sync(&Cs[0][0], acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
        int r = row0 + e / 16, c = col0 + e % 16;
        if (r < M && c < N) C[r * N + c] = alpha * Cs[e / 16][e % 16] + beta * C[r * N + c];
    }
}

/* @plan
[[launch]]
kernel = "sgemm_tf32"
grid = ["cdiv(N, 16)", "cdiv(M, 16)"]
block = [32]
*/

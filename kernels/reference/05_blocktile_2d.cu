// Step 05 - 2D block tiling: each thread computes an 8x8 tile of C.
// Change versus 04: 128x128 block tile, BK = 8, 256 threads, each holding 64 accumulators. Per k a thread loads
// 8 A values and 8 B values into registers and does 64 FMAs with them (an outer product): 16 shared loads per
// 64 FFMA instead of ~9 per 8. Prediction: ~2x over 04 (~65% of cuBLAS); the scalar shared loads and the
// scalar global loads are the remaining overhead.

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_blocktile_2d(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    constexpr int NT = (BM / TM) * (BN / TN);
    static_assert((BM * BK) % NT == 0 && (BK * BN) % NT == 0, "tiles must split evenly over the threads");
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int trow = (tid / (BN / TN)) * TM, tcol = (tid % (BN / TN)) * TN;

    float acc[TM][TN] = {{0.0f}};
    float ra[TM], rb[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = tid; i < BM * BK; i += NT) {
            const int r = i / BK, c = i % BK;
            As[r][c] = (m0 + r < M && k0 + c < K) ? A[(size_t)(m0 + r) * K + k0 + c] : 0.0f;
        }
#pragma unroll
        for (int i = tid; i < BK * BN; i += NT) {
            const int r = i / BN, c = i % BN;
            Bs[r][c] = (k0 + r < K && n0 + c < N) ? B[(size_t)(k0 + r) * N + n0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) ra[i] = As[trow + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) rb[j] = Bs[k][tcol + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + trow + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = n0 + tcol + j;
            if (row < M && col < N) {
                const size_t c = (size_t)row * N + col;
                C[c] = alpha * acc[i][j] + beta * C[c];
            }
        }
    }
}

/* @plan
[[launch]]
kernel = "sgemm_blocktile_2d<128, 128, 8, 8, 8>"
grid = ["cdiv(N, 128)", "cdiv(M, 128)"]
block = [256]
*/

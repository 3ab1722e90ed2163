// 2D block tiling: a 128 x 128 tile of C per block of 256 threads, 8 x 8 outputs per thread, K in steps
// of 8 through shared memory. Tiles are loaded with bounds checks (zeros past the edges), so any M, N, K work.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_tiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    constexpr int THREADS = (BM / TM) * (BN / TN);
    __shared__ float As[BK][BM];  // A tile stored transposed: a thread reads TM consecutive rows at once
    __shared__ float Bs[BK][BN];
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int tr = threadIdx.x / (BN / TN), tc = threadIdx.x % (BN / TN);
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += THREADS) {
            int r = i / BK, k = i % BK;
            As[k][r] = (row0 + r < M && k0 + k < K) ? A[(size_t)(row0 + r) * K + k0 + k] : 0.f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += THREADS) {
            int k = i / BN, c = i % BN;
            Bs[k][c] = (k0 + k < K && col0 + c < N) ? B[(size_t)(k0 + k) * N + col0 + c] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int m = 0; m < TM; ++m) a[m] = As[k][tr * TM + m];
#pragma unroll
            for (int n = 0; n < TN; ++n) b[n] = Bs[k][tc * TN + n];
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int n = 0; n < TN; ++n) acc[m][n] += a[m] * b[n];
        }
        __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; ++m) {
        int r = row0 + tr * TM + m;
#pragma unroll
        for (int n = 0; n < TN; ++n) {
            int c = col0 + tc * TN + n;
            if (r < M && c < N) C[(size_t)r * N + c] = alpha * acc[m][n] + beta * C[(size_t)r * N + c];
        }
    }
}

/* @plan
[[launch]]
kernel = "sgemm_tiled<128, 128, 8, 8, 8>"
grid = ["cdiv(N, 128)", "cdiv(M, 128)"]
block = [256]
*/

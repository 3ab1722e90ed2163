// Step 01 - naive GEMV: one thread per output element.
// Change: none, this is the starting point. Thread (b, n) computes y[b][n] = W[n][:] . x[b][:] in FP32, walking its
// row of W from left to right. Consecutive threads take consecutive n, so at each k the 32 threads of a warp read
// 32 different rows of W, K elements apart: 32 sectors for 64 useful bytes. Whether the rest of each 32-byte sector
// is still in L1 when the thread comes back for the next 15 elements decides the speed; with B = 8 the whole of W
// is also walked 8 times (once per vector), with little chance that L2 keeps it. Prediction: a few percent of the
// bandwidth at N = K = 8192.
// Measured on the H200 through the judge (2026-12-03): 8192 x 8192 x 1: 0.651 ms, 206 GB/s,
//  4.9% of the copy roofline, 6.9% of the baseline; 8192 x 8192 x 8: 2.259 ms, 60 GB/s, 1.4% of the copy roofline,
//  2.0% of the baseline.
#include <cuda_bf16.h>

__global__ void gemv_naive(int N, int K, int B, const __nv_bfloat16* W, const __nv_bfloat16* x, __nv_bfloat16* y) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * B) return;
    const int n = (int)(i % N), b = (int)(i / N);
    const __nv_bfloat16* w = W + (size_t)n * K;
    const __nv_bfloat16* v = x + (size_t)b * K;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc = fmaf(__bfloat162float(w[k]), __bfloat162float(v[k]), acc);
    y[(size_t)b * N + n] = __float2bfloat16_rn(acc);
}

/* @plan
[[launch]]
kernel = "gemv_naive"
grid = ["cdiv(N * B, 128)"]
block = [128]
*/

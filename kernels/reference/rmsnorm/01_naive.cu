// Step 01 - naive RMSNorm: one thread per row.
// Change: none, this is the starting point. Each thread owns one row: it walks the row once to sum the squares in
// FP32, then again to scale, multiply by the weight and write. It is correct at every shape, but the 32 threads of
// a warp read 32 different rows, `hidden` elements apart, so each load instruction touches 32 different 32-byte
// sectors and uses 2 bytes of each; and there are only `rows` threads: 8192 rows make 8192 threads, a quarter of
// what the H200 holds at once, with one 2-byte load in flight each. Prediction: a few percent of the memory
// bandwidth, latency-bound.
// Measured on the H200 through the judge (2026-12-03): 8192 x 4096: 1.324 ms, 101 GB/s, 2.4%
//  of the copy roofline, 3.5% of the baseline.
#include <cuda_bf16.h>

__global__ void rmsnorm_naive(int rows, int hidden, float eps, const __nv_bfloat16* x, const __nv_bfloat16* w,
                              __nv_bfloat16* y) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const __nv_bfloat16* xr = x + (size_t)r * hidden;
    __nv_bfloat16* yr = y + (size_t)r * hidden;
    float sum_sq = 0.0f;
    for (int c = 0; c < hidden; ++c) {
        const float v = __bfloat162float(xr[c]);
        sum_sq += v * v;
    }
    const float inv_rms = rsqrtf(sum_sq / (float)hidden + eps);
    for (int c = 0; c < hidden; ++c)
        yr[c] = __float2bfloat16_rn(__bfloat162float(xr[c]) * inv_rms * __bfloat162float(w[c]));
}

/* @plan
[[launch]]
kernel = "rmsnorm_naive"
grid = ["cdiv(rows, 128)"]
block = [128]
*/

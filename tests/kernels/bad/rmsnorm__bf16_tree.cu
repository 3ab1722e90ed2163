// Expected: wrong_answer for rmsnorm. One block of 256 threads per row: each thread sums the squares of its
// columns in FP32 (right), but the block's tree reduction rounds every partial sum to BF16 at each of its 8
// levels (__float2bfloat16_rn, then back to FP32), so mean(x^2) carries several BF16 roundings and the whole row
// is scaled by up to a few tenths of a percent too much or too little. The old judge measured the norm of the
// error over the whole output against 2^-8 (0.39%) and it passed; now every element must lie within half a BF16
// unit of the exact value (plus a small FP32 allowance), and a scale off by 0.1% moves many elements to the
// wrong neighbour.
#include <cuda_bf16.h>

__device__ float to_bf16_and_back(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
rmsnorm_bf16_tree(int rows, int hidden, float eps, const __nv_bfloat16* x, const __nv_bfloat16* w,
                  __nv_bfloat16* y) {
    __shared__ float partial[THREADS];
    const __nv_bfloat16* xr = x + (size_t)blockIdx.x * hidden;
    __nv_bfloat16* yr = y + (size_t)blockIdx.x * hidden;
    float sum_sq = 0.0f;
    for (int c = threadIdx.x; c < hidden; c += THREADS) {
        const float v = __bfloat162float(xr[c]);
        sum_sq += v * v;
    }
    partial[threadIdx.x] = sum_sq;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        // BUG: each level's partial sums are stored as BF16 (8 significant bits)
        if (threadIdx.x < half) partial[threadIdx.x] = to_bf16_and_back(partial[threadIdx.x] + partial[threadIdx.x + half]);
        __syncthreads();
    }
    const float inv_rms = rsqrtf(partial[0] / (float)hidden + eps);
    for (int c = threadIdx.x; c < hidden; c += THREADS)
        yr[c] = __float2bfloat16_rn(__bfloat162float(xr[c]) * inv_rms * __bfloat162float(w[c]));
}

/* @plan
[[launch]]
kernel = "rmsnorm_bf16_tree<256>"
grid = ["rows"]
block = [256]
*/

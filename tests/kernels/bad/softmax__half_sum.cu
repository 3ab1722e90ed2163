// Expected: wrong_answer for softmax. The maximum is right, but the sum of exp(x - max) is accumulated in FP16
// (11 significant bits) by each thread and across the block: the denominator is off by about 1e-3 relative,
// far over the tolerance of 16 * 2^-24 * sqrt(cols), so every output of the row is.
#include <cuda_fp16.h>

__device__ float block_max(float v) {
    __shared__ float warp_vals[32];
    __shared__ float result;
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (threadIdx.x % 32 == 0) warp_vals[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float m = warp_vals[0];
        for (int w = 1; w < blockDim.x / 32; ++w) m = fmaxf(m, warp_vals[w]);
        result = m;
    }
    __syncthreads();
    return result;
}

__device__ float block_sum_half(__half v) {
    __shared__ __half warp_vals[32];
    __shared__ float result;
    for (int offset = 16; offset > 0; offset /= 2) v = __hadd(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (threadIdx.x % 32 == 0) warp_vals[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        __half s = warp_vals[0];
        for (int w = 1; w < blockDim.x / 32; ++w) s = __hadd(s, warp_vals[w]);
        result = __half2float(s);
    }
    __syncthreads();
    return result;
}

extern "C" __global__ void softmax_half_sum(int rows, int cols, const float* x, float* y) {
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float m = __int_as_float(0xff800000);  // -inf
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in[c]);
    m = block_max(m);
    __half s = __float2half(0.0f);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s = __hadd(s, __float2half(expf(in[c] - m)));
    const float total = block_sum_half(s);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c] - m) / total;
}

/* @plan
[[launch]]
kernel = "softmax_half_sum"
grid = ["rows"]
block = [256]
*/

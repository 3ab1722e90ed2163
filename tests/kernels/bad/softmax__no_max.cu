// Expected: wrong_answer for softmax. exp(x) / sum exp(x) without subtracting the row's maximum: right for small
// logits, but rows near +1e4 overflow (exp(9995) = inf, inf / inf = NaN) and rows near -1e4 underflow (0 / 0 = NaN).
__device__ float block_sum(float v) {
    __shared__ float warp_sums[32];
    __shared__ float total;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int w = 0; w < blockDim.x / 32; ++w) s += warp_sums[w];
        total = s;
    }
    __syncthreads();
    return total;
}

extern "C" __global__ void softmax_unshifted(int rows, int cols, const float* x, float* y) {
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(in[c]);
    s = block_sum(s);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c]) / s;
}

/* @plan
[[launch]]
kernel = "softmax_unshifted"
grid = ["rows"]
block = [256]
*/

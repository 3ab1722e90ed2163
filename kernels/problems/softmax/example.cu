// One block of 256 threads per row, three passes: the row's maximum, the sum of exp(x - max), then the
// outputs. Each reduction is warp shuffles, then the 8 warps' results through shared memory. Consecutive
// threads read consecutive elements (coalesced); the second and third passes mostly hit L2.
template <bool MAX>
__device__ float block_reduce(float v) {
    __shared__ float warp_vals[32];
    __shared__ float result;
    for (int offset = 16; offset > 0; offset /= 2) {
        const float other = __shfl_xor_sync(0xffffffffu, v, offset);
        v = MAX ? fmaxf(v, other) : v + other;
    }
    if (threadIdx.x % 32 == 0) warp_vals[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = warp_vals[0];
        for (int w = 1; w < blockDim.x / 32; ++w) r = MAX ? fmaxf(r, warp_vals[w]) : r + warp_vals[w];
        result = r;
    }
    __syncthreads();
    return result;
}

extern "C" __global__ void softmax_rows(int rows, int cols, const float* x, float* y) {
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float m = __int_as_float(0xff800000);  // -inf
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in[c]);
    m = block_reduce<true>(m);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(in[c] - m);
    s = block_reduce<false>(s);
    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c] - m) * inv;
}

/* @plan
[[launch]]
kernel = "softmax_rows"
grid = ["rows"]
block = [256]
*/

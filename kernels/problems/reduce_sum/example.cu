// Two launches. First: each thread sums a grid-strided slice of x (a warp reads 32 consecutive floats), the
// block's 256 sums are added with warp shuffles and then across the 8 warps, and the block writes its partial
// sum to workspace[block]. Second: one block adds the partial sums the same way and writes out[0]. No atomics,
// so the order of additions is fixed and the result is deterministic.
__device__ float block_sum(float v) {
    __shared__ float warp_sums[32];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
    if (warp == 0)
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;  // the block's sum, in thread 0
}

// FINAL = false: x -> workspace[0..gridDim.x), the grid being min(cdiv(N, 256), 1024) blocks (see the plan).
// FINAL = true, one block: those partial sums -> out[0].
template <bool FINAL>
__global__ void reduce_sum(int N, const float* x, float* out, float* workspace) {
    const long long count = FINAL ? min((N + 255) / 256, 1024) : N;
    const float* src = FINAL ? workspace : x;
    float v = 0.0f;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x)
        v += src[i];
    v = block_sum(v);
    if (threadIdx.x == 0) {
        if (FINAL) out[0] = v;
        else workspace[blockIdx.x] = v;
    }
}

/* @plan
[[launch]]
kernel = "reduce_sum<false>"
grid = ["min(cdiv(N, 256), 1024)"]
block = [256]

[[launch]]
kernel = "reduce_sum<true>"
grid = [1]
block = [256]
*/

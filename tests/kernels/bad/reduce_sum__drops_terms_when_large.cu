// Expected: wrong_answer for reduce_sum, in the timed rounds only (bench = true). The naive hierarchical sum (a
// block tree into the workspace, then one block over the partial sums), correct, except that above 2^24 elements
// it leaves out the last 4096 (a "tail" it means to add elsewhere and never does). The test sizes are at most
// 1048579, so every test passes. At the benchmark's N = 2^28 the 4096 lost terms of uniform [-1, 1) values add up
// to about 37 (their standard deviation): within the old bound (about 128), far outside the new one (about 1.2).
// The judge checks every timed round's output, so the timed rounds fail it.

template <int THREADS>
__device__ void block_sum_to(float value, float* dst) {
    __shared__ float partial[THREADS];
    partial[threadIdx.x] = value;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) *dst = partial[0];
}

template <int THREADS, int MAX_BLOCKS, bool SECOND>
__global__ void __launch_bounds__(THREADS)
reduce_drops_large_tail(int N, const float* __restrict__ x, float* __restrict__ out, float* __restrict__ workspace) {
    const int body = N > (1 << 24) ? N - 4096 : N;  // BUG: the last 4096 elements of a large x are never added
    const int count = SECOND ? min((N + THREADS - 1) / THREADS, MAX_BLOCKS) : body;
    const float* src = SECOND ? workspace : x;
    float sum = 0.0f;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < count; i += (long long)gridDim.x * THREADS)
        sum += src[i];
    block_sum_to<THREADS>(sum, SECOND ? out : workspace + blockIdx.x);
}

/* @plan
[[launch]]
kernel = "reduce_drops_large_tail<256, 65536, false>"
grid = ["min(cdiv(N, 256), 65536)"]
block = [256]

[[launch]]
kernel = "reduce_drops_large_tail<256, 65536, true>"
grid = [1]
block = [256]
*/

// Step 01 - naive reduction: a shared-memory tree per block, then one block over the partial sums
// Change: none, this is the starting point. Launch 1: each thread sums the elements tid, tid + T, tid + 2T, ...
// (T = all threads of the grid, so a warp reads 32 consecutive floats: coalesced), the 256 sums of a block are
// halved in shared memory (256 -> 128 -> ... -> 1, a barrier between steps) and thread 0 writes the block's sum to
// workspace[block]. Launch 2: one block does the same over the partial sums and writes out[0]. Both launches run
// the same kernel; `second` picks the input. The order of additions is fixed, so the result is deterministic.
// Prediction: 50-70% of the read bandwidth. Loads are 4 bytes wide and few are in flight per thread (the adds
// into one accumulator form a chain the compiler must keep in order, FP addition not being associative), and
// the 8-step tree costs 8 barriers, most threads idle, per block; 65536 blocks do it.
// Measured on the H200 through the judge (2026-12-03): 268435456: 0.289 ms, 3717 GB/s, 88.1%
//  of the copy roofline, 86.7% of the baseline.

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

// Launch 1 (SECOND = false): x[0..N) -> workspace[0..gridDim.x). Launch 2 (SECOND = true, one block):
// workspace[0..BLOCKS) -> out[0], BLOCKS being launch 1's grid, min(cdiv(N, THREADS), MAX_BLOCKS).
template <int THREADS, int MAX_BLOCKS, bool SECOND>
__global__ void __launch_bounds__(THREADS)
reduce_naive(int N, const float* __restrict__ x, float* __restrict__ out, float* __restrict__ workspace) {
    const int count = SECOND ? min((N + THREADS - 1) / THREADS, MAX_BLOCKS) : N;
    const float* src = SECOND ? workspace : x;
    float sum = 0.0f;
    for (long long i = (long long)blockIdx.x * THREADS + threadIdx.x; i < count; i += (long long)gridDim.x * THREADS)
        sum += src[i];
    block_sum_to<THREADS>(sum, SECOND ? out : workspace + blockIdx.x);
}

/* @plan
[[launch]]
kernel = "reduce_naive<256, 65536, false>"
grid = ["min(cdiv(N, 256), 65536)"]
block = [256]

[[launch]]
kernel = "reduce_naive<256, 65536, true>"
grid = [1]
block = [256]
*/

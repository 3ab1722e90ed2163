// Expected: wrong_answer for reduce_sum. A hierarchical sum (a block tree into the workspace, then one block over
// the partial sums) that walks x in groups of 4 consecutive floats, as a float4 path would, but with 4 scalar loads
// (so any 4-byte base address is fine) and no tail: the last group is read whole, up to 3 elements past x[N - 1],
// and added in. The old guard bands (0xA5 bytes, -2.9e-16 as a float) changed the sum by under 1e-15 and the
// kernel passed; now the elements past the end read +FLT_MAX, NaN, -FLT_MAX: the sum is huge or NaN at every N
// that is not a multiple of 4 (1, 4097, 1048579).

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

// Launch 1: groups g = 0 .. cdiv(N, 4) - 1 of x -> workspace[0 .. gridDim.x). Launch 2 (one block): the
// partial sums -> out[0].
template <int THREADS, int MAX_BLOCKS, bool SECOND>
__global__ void __launch_bounds__(THREADS)
reduce_groups_of_4(int N, const float* __restrict__ x, float* __restrict__ out, float* __restrict__ workspace) {
    const long long groups = ((long long)N + 3) / 4;
    float sum = 0.0f;
    if (SECOND) {
        const int count = (int)min((groups + THREADS - 1) / THREADS, (long long)MAX_BLOCKS);
        for (int i = threadIdx.x; i < count; i += THREADS) sum += workspace[i];
    } else {
        for (long long g = (long long)blockIdx.x * THREADS + threadIdx.x; g < groups; g += (long long)gridDim.x * THREADS) {
            const float* p = x + 4 * g;
            sum += (p[0] + p[1]) + (p[2] + p[3]);  // BUG: the last group runs past x[N - 1]
        }
    }
    block_sum_to<THREADS>(sum, SECOND ? out : workspace + blockIdx.x);
}

/* @plan
[[launch]]
kernel = "reduce_groups_of_4<256, 65536, false>"
grid = ["min(cdiv(cdiv(N, 4), 256), 65536)"]
block = [256]

[[launch]]
kernel = "reduce_groups_of_4<256, 65536, true>"
grid = [1]
block = [256]
*/

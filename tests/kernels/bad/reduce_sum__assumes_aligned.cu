// Expected: runtime_error for reduce_sum (CUDA's "misaligned address"). A hierarchical sum that reads x as float4
// (16 bytes a load) without checking that x is 16-byte aligned; the N % 4 tail is added correctly with scalar
// loads. The contract promises 4 bytes only. The old judge's arrays were always at least 16-byte aligned and the
// kernel passed; now every test size also runs with x at an address that is a multiple of 4 and not of 8, and
// the first float4 load faults.

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
reduce_float4(int N, const float* __restrict__ x, float* __restrict__ out, float* __restrict__ workspace) {
    const long long groups = (long long)N / 4;
    float sum = 0.0f;
    if (SECOND) {
        const int count = (int)min(((N + 3) / 4 + THREADS - 1) / THREADS, MAX_BLOCKS);
        for (int i = threadIdx.x; i < count; i += THREADS) sum += workspace[i];
    } else {
        const float4* x4 = reinterpret_cast<const float4*>(x);  // BUG: x is promised 4-byte alignment only
        const long long first = (long long)blockIdx.x * THREADS + threadIdx.x, stride = (long long)gridDim.x * THREADS;
        for (long long g = first; g < groups; g += stride) {
            const float4 v = x4[g];
            sum += (v.x + v.y) + (v.z + v.w);
        }
        if (first < N % 4) sum += x[4 * groups + first];  // the tail, right
    }
    block_sum_to<THREADS>(sum, SECOND ? out : workspace + blockIdx.x);
}

/* @plan
[[launch]]
kernel = "reduce_float4<256, 65536, false>"
grid = ["min(cdiv(cdiv(N, 4), 256), 65536)"]
block = [256]

[[launch]]
kernel = "reduce_float4<256, 65536, true>"
grid = [1]
block = [256]
*/

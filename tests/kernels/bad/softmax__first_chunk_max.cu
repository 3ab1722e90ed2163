// Expected: wrong_answer for softmax. One block per row; the row's maximum is taken over its first 256 elements
// only (one element per thread, no loop), then exp(x - m) is summed and written over the whole row. Any m works
// as long as no x - m exceeds about 88 (where expf overflows FP32): the old inputs spread each row over +-4 or
// +-20 around its offset, so the kernel passed. Now rows spread over up to +-2000 and some hold one element 100
// to 1000 above the rest anywhere in the row: past the first 256 elements, exp(x - m) is +inf and the row is
// inf / inf = NaN.

template <int THREADS>
__device__ float block_reduce(float* buf, float value, bool is_max) {
    buf[threadIdx.x] = value;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            const float other = buf[threadIdx.x + half];
            buf[threadIdx.x] = is_max ? fmaxf(buf[threadIdx.x], other) : buf[threadIdx.x] + other;
        }
        __syncthreads();
    }
    const float result = buf[0];
    __syncthreads();  // buf is reused by the next reduction
    return result;
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
softmax_first_chunk_max(int rows, int cols, const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float buf[THREADS];
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;

    // BUG: the maximum of the first THREADS elements stands in for the row's
    float m = threadIdx.x < cols ? in[threadIdx.x] : __int_as_float(0xff800000);
    m = block_reduce<THREADS>(buf, m, true);

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) s += expf(in[c] - m);
    s = block_reduce<THREADS>(buf, s, false);

    for (int c = threadIdx.x; c < cols; c += THREADS) out[c] = expf(in[c] - m) / s;
}

/* @plan
[[launch]]
kernel = "softmax_first_chunk_max<256>"
grid = ["rows"]
block = [256]
*/

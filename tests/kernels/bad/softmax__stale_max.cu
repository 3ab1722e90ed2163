// Expected: wrong_answer for softmax. One block per row, but each row's maximum is remembered in a __device__
// array that outlives the launch, and a row seen before reuses the remembered maximum instead of looking for its
// own ("the maximum hardly changes between calls"). Softmax is unchanged by the shift as long as no x - m passes
// about 88: the old inputs gave row r the same offset at every launch (0 or +-BIG by r % 4) and a spread of +-4 or
// +-20, so a stale maximum was off by at most 40 and the kernel passed. Now every launch shifts every row by its own
// offset in [-1e4, 1e4): a stale maximum is off by thousands, exp(x - m) overflows to inf (inf / inf = NaN) or
// underflows to 0 (0 / 0 = NaN) on the rows seen at an earlier test shape.

#define REMEMBERED_ROWS 65536

__device__ float remembered_max[REMEMBERED_ROWS];
__device__ int remembered[REMEMBERED_ROWS];  // zero when the module is loaded

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
softmax_stale_max(int rows, int cols, const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float buf[THREADS];
    const int r = blockIdx.x;
    const float* in = x + (size_t)r * cols;
    float* out = y + (size_t)r * cols;
    const bool known = r < REMEMBERED_ROWS && remembered[r];  // the same for every thread of the block

    float m;
    if (known) {
        m = remembered_max[r];  // BUG: a maximum from an earlier launch, over other values
    } else {
        m = __int_as_float(0xff800000);  // -inf
        for (int c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, in[c]);
        m = block_reduce<THREADS>(buf, m, true);
        if (threadIdx.x == 0 && r < REMEMBERED_ROWS) {
            remembered_max[r] = m;
            remembered[r] = 1;
        }
    }

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) s += expf(in[c] - m);
    s = block_reduce<THREADS>(buf, s, false);

    for (int c = threadIdx.x; c < cols; c += THREADS) out[c] = expf(in[c] - m) / s;
}

/* @plan
[[launch]]
kernel = "softmax_stale_max<256>"
grid = ["rows"]
block = [256]
*/

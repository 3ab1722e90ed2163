// Step 01 - naive softmax: one block per row, three passes over global memory
// Change: none, this is the starting point. A block of 256 threads owns one row. Pass 1: each thread takes the
// maximum of the elements c = tid, tid + 256, ... (a warp reads 32 consecutive floats: coalesced), and the 256
// maxima are halved in shared memory down to one (8 steps, a barrier each). Pass 2 does the same for the sum of
// exp(x - max). Pass 3 writes exp(x - max) / sum. Subtracting the row's maximum first keeps every exponent <= 0:
// exp(1e4) overflows FP32 (its largest value is about 3.4e38 = e^88.7), exp of anything <= 0 does not, and the
// common factor e^-max cancels between numerator and denominator.
// Prediction: 30-50% of the copy bandwidth at 4096 x 4096: the row is read three times (12 bytes of reads and
// 4 of writes per element where 4 + 4 are needed; the second and third reads mostly hit L2, a 16 KB row fitting
// easily), each thread has one 4-byte load in flight, the two tree reductions cost 16 barriers per row; at
// 32 x 131072 only 32 SMs of 132 have a row to work on.
// Measured on the H200 through the judge (2026-12-03): 4096 x 4096: 0.047 ms, 2866 GB/s, 67.5%
//  of the copy roofline, 122.1% of the baseline; 32 x 131072: 0.166 ms, 202 GB/s, 4.7% of the copy roofline, 27.9% of
//  the baseline.

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
softmax_naive(int rows, int cols, const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float buf[THREADS];
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;

    float m = __int_as_float(0xff800000);  // -inf
    for (int c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, in[c]);
    m = block_reduce<THREADS>(buf, m, true);

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) s += expf(in[c] - m);
    s = block_reduce<THREADS>(buf, s, false);

    for (int c = threadIdx.x; c < cols; c += THREADS) out[c] = expf(in[c] - m) / s;
}

/* @plan
[[launch]]
kernel = "softmax_naive<256>"
grid = ["rows"]
block = [256]
*/

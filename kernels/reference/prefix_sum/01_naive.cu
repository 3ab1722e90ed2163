// Step 01 - naive scan: scan each block in shared memory, scan the block totals, add them back
// Change: none, this is the starting point. Launch 1: a block of 1024 threads loads 1024 elements (one each) into
// shared memory and scans them in place with the Hillis-Steele doubling scheme: in step d every thread adds the
// value d places to its left (d = 1, 2, 4, ..., 512: ten steps, two barriers each); it writes its 1024 block-local
// prefixes to y and its total to workspace[block]. Launch 2: one block scans the block totals in place, 1024 at a
// time, carrying the running total from one chunk to the next. Launch 3: every element of block b > 0 gets the
// total of blocks 0..b-1 added (y is read and written again).
// Prediction: 25-35% of the copy bandwidth: y crosses DRAM three times and x once (4 x 4 bytes per element where
// 8 are needed), Hillis-Steele does log2(1024) = 10 additions per element where 1 suffices, each step waits at two
// barriers, and the middle launch is one block (out of 132 SMs) walking over N / 1024 totals.
// Measured on the H200 through the judge (2026-12-03): 268435456: 3.313 ms, 648 GB/s, 15.3% of
//  the copy roofline, 25.3% of the baseline.

// Inclusive scan of buf[0..THREADS) in place; every thread holds one element. Returns this thread's prefix.
template <int THREADS>
__device__ int block_scan_hillis_steele(int* buf, int value) {
    const int t = threadIdx.x;
    buf[t] = value;
    __syncthreads();
    for (int d = 1; d < THREADS; d <<= 1) {
        const int left = t >= d ? buf[t - d] : 0;
        __syncthreads();  // everyone has read the old values before anyone overwrites them
        buf[t] += left;
        __syncthreads();
    }
    return buf[t];
}

// Launch 1: y = block-local inclusive scan of x; workspace[b] = block b's total.
template <int THREADS>
__global__ void __launch_bounds__(THREADS)
scan_blocks_naive(int N, const int* __restrict__ x, int* __restrict__ y, int* __restrict__ workspace) {
    __shared__ int buf[THREADS];
    const long long i = (long long)blockIdx.x * THREADS + threadIdx.x;
    const int prefix = block_scan_hillis_steele<THREADS>(buf, i < N ? x[i] : 0);
    if (i < N) y[i] = prefix;
    if (threadIdx.x == THREADS - 1) workspace[blockIdx.x] = prefix;  // zeros past N add nothing: the total
}

// Launch 2, one block: workspace[0..blocks) becomes its own inclusive scan.
template <int THREADS>
__global__ void __launch_bounds__(THREADS)
scan_totals_naive(int N, const int* __restrict__ x, int* __restrict__ y, int* __restrict__ workspace) {
    __shared__ int buf[THREADS];
    const int blocks = (int)(((long long)N + THREADS - 1) / THREADS);
    int carry = 0;
    for (int base = 0; base < blocks; base += THREADS) {
        const int i = base + threadIdx.x;
        const int prefix = block_scan_hillis_steele<THREADS>(buf, i < blocks ? workspace[i] : 0);
        if (i < blocks) workspace[i] = prefix + carry;
        carry += buf[THREADS - 1];
        __syncthreads();  // buf is refilled by the next chunk only after every thread has read its total
    }
}

// Launch 3: block b adds the inclusive total of blocks 0..b-1.
template <int THREADS>
__global__ void __launch_bounds__(THREADS)
scan_add_naive(int N, const int* __restrict__ x, int* __restrict__ y, int* __restrict__ workspace) {
    const long long i = (long long)blockIdx.x * THREADS + threadIdx.x;
    if (blockIdx.x > 0 && i < N) y[i] += workspace[blockIdx.x - 1];
}

/* @plan
[[launch]]
kernel = "scan_blocks_naive<1024>"
grid = ["cdiv(N, 1024)"]
block = [1024]

[[launch]]
kernel = "scan_totals_naive<1024>"
grid = [1]
block = [1024]

[[launch]]
kernel = "scan_add_naive<1024>"
grid = ["cdiv(N, 1024)"]
block = [1024]
*/

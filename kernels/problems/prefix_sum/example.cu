// Three launches. 1: each block of 1024 threads scans 1024 elements (a warp scans its 32 with shuffles, then the
// 32 warp totals are scanned by the first warp and added back), writes the block-local prefixes to y and its
// total to workspace[block]. 2: one block scans the block totals in place, 1024 at a time, carrying the running
// total. 3: every element of block b > 0 gets the total of blocks 0..b-1 added.
__device__ int block_inclusive_scan(int v) {
    __shared__ int warp_totals[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int d = 1; d < 32; d *= 2) {
        const int left = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += left;
    }
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int t = warp_totals[lane];
        for (int d = 1; d < 32; d *= 2) {
            const int left = __shfl_up_sync(0xffffffffu, t, d);
            if (lane >= d) t += left;
        }
        warp_totals[lane] = t;
    }
    __syncthreads();
    if (warp > 0) v += warp_totals[warp - 1];
    __syncthreads();  // warp_totals is reused by the next call
    return v;
}

__global__ void scan_blocks(int N, const int* x, int* y, int* workspace) {
    const long long i = (long long)blockIdx.x * 1024 + threadIdx.x;
    const int v = block_inclusive_scan(i < N ? x[i] : 0);
    if (i < N) y[i] = v;
    if (threadIdx.x == 1023) workspace[blockIdx.x] = v;  // zeros past N add nothing
}

__global__ void scan_totals(int N, const int* x, int* y, int* workspace) {
    __shared__ int carry_out;
    const int blocks = (int)(((long long)N + 1023) / 1024);
    int carry = 0;
    for (int base = 0; base < blocks; base += 1024) {
        const int i = base + threadIdx.x;
        const int v = block_inclusive_scan(i < blocks ? workspace[i] : 0) + carry;
        if (i < blocks) workspace[i] = v;
        if (threadIdx.x == 1023) carry_out = v;
        __syncthreads();
        carry = carry_out;
        __syncthreads();
    }
}

__global__ void scan_add(int N, const int* x, int* y, int* workspace) {
    const long long i = (long long)blockIdx.x * 1024 + threadIdx.x;
    if (blockIdx.x > 0 && i < N) y[i] += workspace[blockIdx.x - 1];
}

/* @plan
[[launch]]
kernel = "scan_blocks"
grid = ["cdiv(N, 1024)"]
block = [1024]

[[launch]]
kernel = "scan_totals"
grid = [1]
block = [1024]

[[launch]]
kernel = "scan_add"
grid = ["cdiv(N, 1024)"]
block = [1024]
*/

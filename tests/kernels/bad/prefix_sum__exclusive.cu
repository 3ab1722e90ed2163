// Expected: wrong_answer for prefix_sum. An exclusive scan (y[i] = x[0] + ... + x[i-1], y[0] = 0) where the
// contract asks for the inclusive one: every element is off by its own x[i]. Otherwise a correct three-launch
// scan (block scans, a scan of the block totals, the totals added back).
__device__ int block_exclusive_scan(int* buf, int v, int* total) {
    const int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int d = 1; d < 1024; d <<= 1) {
        const int left = t >= d ? buf[t - d] : 0;
        __syncthreads();
        buf[t] += left;
        __syncthreads();
    }
    const int inclusive = buf[t];
    *total = buf[1023];
    __syncthreads();
    return inclusive - v;  // the off-by-one: the sum of the elements before t only
}

__global__ void scan_blocks(int N, const int* x, int* y, int* workspace) {
    __shared__ int buf[1024];
    const long long i = (long long)blockIdx.x * 1024 + threadIdx.x;
    int total;
    const int v = block_exclusive_scan(buf, i < N ? x[i] : 0, &total);
    if (i < N) y[i] = v;
    if (threadIdx.x == 0) workspace[blockIdx.x] = total;
}

__global__ void scan_totals(int N, const int* x, int* y, int* workspace) {
    __shared__ int buf[1024];
    const int blocks = (int)(((long long)N + 1023) / 1024);
    int carry = 0;
    for (int base = 0; base < blocks; base += 1024) {
        const int i = base + threadIdx.x;
        int total;
        const int v = block_exclusive_scan(buf, i < blocks ? workspace[i] : 0, &total);
        if (i < blocks) workspace[i] = v + carry;  // exclusive: the total of the blocks before i
        carry += total;
    }
}

__global__ void scan_add(int N, const int* x, int* y, int* workspace) {
    const long long i = (long long)blockIdx.x * 1024 + threadIdx.x;
    if (i < N) y[i] += workspace[blockIdx.x];
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

// Expected: wrong_answer for prefix_sum. Each block of 1024 threads scans its own 1024 elements correctly but
// never adds the totals of the blocks before it: right up to N = 1024, wrong past the first block (N = 4097 and
// 1048579).
__global__ void scan_each_block(int N, const int* x, int* y, int* workspace) {
    __shared__ int buf[1024];
    const int t = threadIdx.x;
    const long long i = (long long)blockIdx.x * 1024 + t;
    buf[t] = i < N ? x[i] : 0;
    __syncthreads();
    for (int d = 1; d < 1024; d <<= 1) {
        const int left = t >= d ? buf[t - d] : 0;
        __syncthreads();
        buf[t] += left;
        __syncthreads();
    }
    if (i < N) y[i] = buf[t];
}

/* @plan
[[launch]]
kernel = "scan_each_block"
grid = ["cdiv(N, 1024)"]
block = [1024]
*/

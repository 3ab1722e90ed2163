// Expected: wrong_answer for reduce_sum. Each thread takes groups of 4 consecutive elements (as a float4 path
// would) and the N % 4 elements past the last whole group are never added: wrong at N = 1 (sums nothing) and at
// N = 4097 and 1048579.
__global__ void sum_groups_of_4(int N, const float* x, float* out, float* workspace) {
    __shared__ float partial[256];
    float s = 0.0f;
    for (long long g = threadIdx.x; 4 * g + 3 < N; g += 256)
        s += x[4 * g] + x[4 * g + 1] + x[4 * g + 2] + x[4 * g + 3];
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int half = 128; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = partial[0];
}

/* @plan
[[launch]]
kernel = "sum_groups_of_4"
grid = [1]
block = [256]
*/

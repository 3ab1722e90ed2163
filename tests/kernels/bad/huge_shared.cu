// Expected: plan_error (1 MiB of dynamic shared memory; an H200 block gets at most 227 KB).
extern "C" __global__ void vector_add(const float* A, const float* B, float* C, int N) {
    extern __shared__ float scratch[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) { scratch[threadIdx.x] = A[i]; C[i] = scratch[threadIdx.x] + B[i]; }
}

/* @plan
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 256)"]
block = [256]
shared_bytes = "1024 * 1024"
*/

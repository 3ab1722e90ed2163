// Expected: plan_error (grid.y over 65535 blocks).
extern "C" __global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N && blockIdx.y == 0) C[i] = A[i] + B[i];
}

/* @plan
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 256)", 1000000]
block = [256]
*/

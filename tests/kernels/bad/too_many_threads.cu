// Expected: plan_error on the GPU (__launch_bounds__(256) caps the block, the plan asks for 1024 threads).
extern "C" __global__ void __launch_bounds__(256) vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
}

/* @plan
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 1024)"]
block = [1024]
*/

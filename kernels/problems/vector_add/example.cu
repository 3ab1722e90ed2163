// One element per thread; consecutive threads touch consecutive floats, so every warp access coalesces.
extern "C" __global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
}

/* @plan
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 256)"]
block = [256]
*/

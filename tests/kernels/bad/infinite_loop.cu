// Expected: timed_out (the loop can never end, and reading the clock keeps the compiler from removing it).
extern "C" __global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (clock64() >= 0) {
    }
    if (i < N) C[i] = A[i] + B[i];
}

/* @plan
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 256)"]
block = [256]
*/

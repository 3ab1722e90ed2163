// Expected: wrong_answer (no bounds check: the last block writes past the end of C, into the guard band).
extern "C" __global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    C[i] = (i < N) ? A[i] + B[i] : 0.f;
}

/* @plan
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 256)"]
block = [256]
*/

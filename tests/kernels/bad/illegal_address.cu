// Expected: runtime_error (a store to an address no allocation owns).
extern "C" __global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i + (1ll << 36)] = A[i] + B[i];
}

/* @plan
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 256)"]
block = [256]
*/

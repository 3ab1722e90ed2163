// Expected: output_limit_exceeded (every thread prints).
extern "C" __global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        printf("thread %d adds %f and %f\n", i, A[i], B[i]);
        C[i] = A[i] + B[i];
    }
}

/* @plan
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 256)"]
block = [256]
*/

// One thread per output element; threadIdx.x walks a row of C so that B and C accesses coalesce.
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B,
                                       float beta, float* C) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

/* @plan
[[launch]]
kernel = "sgemm_naive"
grid = ["cdiv(N, 128)", "M"]
block = [128]
*/

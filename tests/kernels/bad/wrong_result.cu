// Expected: wrong_answer (alpha and beta ignored: C = A B).
extern "C" __global__ void sgemm_wrong(int M, int N, int K, float alpha, const float* A, const float* B,
                                       float beta, float* C) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}

/* @plan
[[launch]]
kernel = "sgemm_wrong"
grid = ["cdiv(N, 128)", "M"]
block = [128]
*/

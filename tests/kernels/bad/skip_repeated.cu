// Expected: wrong_answer in the timed rounds. Skips the work when it is handed the same buffers and sizes
// as last time, assuming the inputs (and the output left in C) are the same. The judge refills C and draws
// fresh inputs before every timed launch, so a skipped launch leaves a wrong C.
__device__ const float* last_a;
__device__ const float* last_b;
__device__ int last_m, last_n, last_k;

extern "C" __global__ void sgemm_skip(int M, int N, int K, float alpha, const float* A, const float* B,
                                      float beta, float* C) {
    if (last_a == A && last_b == B && last_m == M && last_n == N && last_k == K) return;
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

extern "C" __global__ void remember_inputs(int M, int N, int K, float alpha, const float* A, const float* B,
                                           float beta, float* C) {
    last_a = A; last_b = B; last_m = M; last_n = N; last_k = K;
}

/* @plan
[[launch]]
kernel = "sgemm_skip"
grid = ["cdiv(N, 128)", "M"]
block = [128]

[[launch]]
kernel = "remember_inputs"
grid = [1]
block = [1]
*/

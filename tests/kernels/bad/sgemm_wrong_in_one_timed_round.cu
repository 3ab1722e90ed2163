// Expected: wrong_answer in the timed rounds, whichever round it picks. Right at every test shape and in every
// launch at the benchmark shape (M = 4096) but one: the launch of timed round WRONG_IN_TIMED_ROUND adds 1 to every
// element (the first launch there is timed round 1's: the warm-up launches only the baseline).
// tests/kernels/test_gpu.py sets the round; every timed round is checked, so the judge must catch it in the first,
// the third and the last.
#define WRONG_IN_TIMED_ROUND 1
#define BENCH_M 4096

__device__ unsigned int bench_launches;  // launches at the benchmark shape so far (a second kernel counts them)

extern "C" __global__ void sgemm_late(int M, int N, int K, float alpha, const float* A, const float* B,
                                      float beta, float* C) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    bool wrong = M == BENCH_M && bench_launches == WRONG_IN_TIMED_ROUND - 1;
    C[row * N + col] = alpha * acc + beta * C[row * N + col] + (wrong ? 1.f : 0.f);
}

extern "C" __global__ void count_launch(int M, int N, int K, float alpha, const float* A, const float* B,
                                        float beta, float* C) {
    if (M == BENCH_M) bench_launches += 1;
}

/* @plan
[[launch]]
kernel = "sgemm_late"
grid = ["cdiv(N, 128)", "M"]
block = [128]

[[launch]]
kernel = "count_launch"
grid = [1]
block = [1]
*/

// Expected: wrong_answer. Correct the first time it sees a shape; after that it replays the answer it cached in a
// static device buffer. Every test shape is run twice (the second time with fresh inputs and the arrays at their
// promised 4-byte alignment), so the second run of the first shape catches it; the timed rounds, which draw fresh
// inputs for the benchmark shape each time, would too.
#define CACHE_ELEMENTS (4096 * 4096)
__device__ float cache[CACHE_ELEMENTS];
__device__ int cached_m, cached_n, cached_k;

extern "C" __global__ void sgemm_replay(int M, int N, int K, float alpha, const float* A, const float* B,
                                        float beta, float* C) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
    if (row >= M || col >= N) return;
    bool seen = cached_m == M && cached_n == N && cached_k == K;
    if (seen) {
        C[row * N + col] = cache[row * N + col];
        return;
    }
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    float out = alpha * acc + beta * C[row * N + col];
    C[row * N + col] = out;
    if ((long long)M * N <= CACHE_ELEMENTS) cache[row * N + col] = out;
}

// A second launch records the shape once every block of the first is done.
extern "C" __global__ void remember_shape(int M, int N, int K, float alpha, const float* A, const float* B,
                                          float beta, float* C) {
    if ((long long)M * N <= CACHE_ELEMENTS) { cached_m = M; cached_n = N; cached_k = K; }
}

/* @plan
[[launch]]
kernel = "sgemm_replay"
grid = ["cdiv(N, 128)", "M"]
block = [128]

[[launch]]
kernel = "remember_shape"
grid = [1]
block = [1]
*/

// Expected: wrong_answer (no barrier between filling the shared tiles and reading them).
#define T 32
extern "C" __global__ void sgemm_race(int M, int N, int K, float alpha, const float* A, const float* B,
                                      float beta, float* C) {
    __shared__ float As[T][T], Bs[T][T];
    int tx = threadIdx.x % T, ty = threadIdx.x / T;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += T) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.f;
        // missing __syncthreads(): other warps' rows of the tiles may not be there yet
        for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

/* @plan
[[launch]]
kernel = "sgemm_race"
grid = ["cdiv(N, 32)", "cdiv(M, 32)"]
block = [1024]
*/

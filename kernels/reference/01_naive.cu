// Step 01 - naive SGEMM: one thread per output element, everything from global memory.
// Change: none, this is the starting point. Thread x walks down a column of C (row = blockIdx.x*32 + threadIdx.x),
// so the 32 threads of a warp touch 32 different rows of A (stride K) and write 32 different rows of C: every
// load and store is split into many memory transactions. Prediction: about 1% of cuBLAS, far below both the
// arithmetic and the memory ceilings, because almost every FFMA waits on an uncoalesced load.

__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                            float* C) {
    // Deliberately the "wrong" mapping: consecutive threads take consecutive rows.
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        const size_t c = (size_t)row * N + col;
        C[c] = alpha * acc + beta * C[c];
    }
}

/* @plan
[[launch]]
kernel = "sgemm_naive"
grid = ["cdiv(M, 32)", "cdiv(N, 32)"]
block = [32, 32]
*/

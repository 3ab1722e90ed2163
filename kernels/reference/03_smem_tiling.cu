// Step 03 - shared-memory tiling.
// Change versus 02: a 32x32 block first copies a 32x32 tile of A and of B into shared memory (coalesced, each
// element read from global memory once per block instead of once per thread), synchronises, and then every thread
// reads its 32 multiply-adds' operands from shared memory. Global traffic drops 32x. Prediction: a modest gain
// (~12-15% of cuBLAS): now each FFMA needs two shared-memory loads, and shared-memory bandwidth is the next wall.

#define TILE 32

__global__ void sgemm_smem_tiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                  float* C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Out-of-range elements are loaded as zero, so ragged edges need no special case in the inner loop.
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];  // As[ty][k]: broadcast in a warp; Bs[k][tx]: 32 banks, no conflict
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        const size_t c = (size_t)row * N + col;
        C[c] = alpha * acc + beta * C[c];
    }
}

/* @plan
[[launch]]
kernel = "sgemm_smem_tiling"
grid = ["cdiv(N, 32)", "cdiv(M, 32)"]
block = [32, 32]
*/

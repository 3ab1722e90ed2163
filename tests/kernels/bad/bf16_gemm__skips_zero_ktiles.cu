// Expected: wrong_answer for bf16_gemm. A simple SIMT GEMM (one thread per element of C, FP32 accumulation) with a
// "sparsity shortcut": a 16-wide k-tile is skipped when the first element of A's row in that tile is exactly 0.0,
// on the guess that the whole tile is zero. The old inputs (uniform in [-1, 1)) held no exact zeros, so nothing
// was ever skipped and the kernel passed; now about 1 in 8 elements of A is 0.0 on its own (the other 15 of its
// tile are not) and 1 in 8 tiles is, so many k-tiles with nonzero terms are dropped.
#include <cuda_bf16.h>

__global__ void bf16_gemm_skip_zero_ktiles(int M, int N, int K, float alpha, const __nv_bfloat16* A,
                                           const __nv_bfloat16* B, float beta, __nv_bfloat16* C) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    const __nv_bfloat16* a = A + (size_t)row * K;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        if (__bfloat162float(a[k0]) == 0.0f) continue;  // BUG: one zero taken for a whole zero tile
        const int k1 = min(K, k0 + 16);
        for (int k = k0; k < k1; ++k)
            acc = fmaf(__bfloat162float(a[k]), __bfloat162float(B[(size_t)k * N + col]), acc);
    }
    const size_t c = (size_t)row * N + col;
    C[c] = __float2bfloat16_rn(alpha * acc + beta * __bfloat162float(C[c]));
}

/* @plan
[[launch]]
kernel = "bf16_gemm_skip_zero_ktiles"
grid = ["cdiv(N, 32)", "cdiv(M, 8)"]
block = [32, 8]
*/

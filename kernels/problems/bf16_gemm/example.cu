// The naive BF16 GEMM: one thread per element of C, the K-long dot product accumulated in FP32 from BF16
// operands read straight from global memory, the result rounded to BF16 once. Right at every shape (bounds
// checked), slow: every operand is read from memory again by every thread that needs it.
#include <cuda_bf16.h>

extern "C" __global__ void bf16_gemm_naive(int M, int N, int K, float alpha, const __nv_bfloat16* A,
                                           const __nv_bfloat16* B, float beta, __nv_bfloat16* C) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;  // threadIdx.x runs along a row of C: coalesced
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = fmaf(__bfloat162float(A[(size_t)row * K + k]), __bfloat162float(B[(size_t)k * N + col]), acc);
    const size_t at = (size_t)row * N + col;
    C[at] = __float2bfloat16_rn(alpha * acc + beta * __bfloat162float(C[at]));
}

/* @plan
[[launch]]
kernel = "bf16_gemm_naive"
grid = ["cdiv(N, 32)", "cdiv(M, 8)"]
block = [32, 8]
*/

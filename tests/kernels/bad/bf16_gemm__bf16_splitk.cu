// Expected: wrong_answer for bf16_gemm. A simple SIMT GEMM (one thread per element of C, FP32 accumulation) split
// over K in two launches that meet in C itself: the first writes C = bf16(alpha * A[:, :K/2] B[:K/2, :] + beta * C),
// the second reads that BF16 C back and writes C = bf16(C + alpha * A[:, K/2:] B[K/2:, :]). The half-way result is
// rounded to BF16 once more than the contract allows. The old judge measured the norm of the error against
// 2^-8 + 16 * 2^-24 * sqrt(K) and it passed (about 0.2%); now every element must lie within half a BF16 unit of the
// exact value plus the FP32 accumulation allowance, and the extra rounding moves many elements past it.
#include <cuda_bf16.h>

template <bool SECOND>
__global__ void bf16_gemm_half_k(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B,
                                 float beta, __nv_bfloat16* C) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    const int k0 = SECOND ? K / 2 : 0, k1 = SECOND ? K : K / 2;
    float acc = 0.0f;
    for (int k = k0; k < k1; ++k)
        acc = fmaf(__bfloat162float(A[(size_t)row * K + k]), __bfloat162float(B[(size_t)k * N + col]), acc);
    const size_t c = (size_t)row * N + col;
    const float before = __bfloat162float(C[c]);
    // BUG: the first half's result is stored in BF16 and read back by the second launch
    C[c] = __float2bfloat16_rn(SECOND ? before + alpha * acc : alpha * acc + beta * before);
}

/* @plan
[[launch]]
kernel = "bf16_gemm_half_k<false>"
grid = ["cdiv(N, 32)", "cdiv(M, 8)"]
block = [32, 8]

[[launch]]
kernel = "bf16_gemm_half_k<true>"
grid = ["cdiv(N, 32)", "cdiv(M, 8)"]
block = [32, 8]
*/

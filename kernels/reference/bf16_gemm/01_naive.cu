// Step 01 - naive BF16 GEMM: one thread per output element, FP32 accumulation, everything from global memory.
//     python -m kernels bench kernels/reference/bf16_gemm/01_naive.cu --problem bf16_gemm --arch sm_90a
// Change: none, this is the starting point of the Frontier ladder (capsules 59-61). C = alpha * A * B + beta * C
// with row-major BF16 A (M x K), B (K x N) and C (M x N). Thread (x, y) of the 2D grid owns C[row][col] with
// col = blockIdx.x * 32 + threadIdx.x: the 32 threads of a warp read one element of A (a broadcast) and 32
// consecutive elements of B per k (64 coalesced bytes), and write 32 consecutive outputs. Each product is widened
// to FP32 before the multiply-add, so the sum is as precise as the tensor cores' FP32 accumulation; only the final
// value is rounded to BF16 (round to nearest even). No shared memory, no reuse, no tensor cores: every multiply-add
// waits on loads that the caches mostly serve. Prediction: well under 1% of cuBLAS, whose BF16 tensor-core GEMM is
// hundreds of times faster than FP32 FMAs fed from L1/L2.
// Measured on the H200 through the judge (2026-12-03):
//   4096^3 27.0 ms, 5.1 TFLOP/s, 0.7% of cuBLAS; 8192^3 240 ms, 4.6 TFLOP/s, 0.6%.
#include <cuda_bf16.h>

__global__ void bf16_gemm_naive(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B,
                                float beta, __nv_bfloat16* C) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = fmaf(__bfloat162float(A[(size_t)row * K + k]), __bfloat162float(B[(size_t)k * N + col]), acc);
    const size_t c = (size_t)row * N + col;
    C[c] = __float2bfloat16_rn(alpha * acc + beta * __bfloat162float(C[c]));
}

/* @plan
[[launch]]
kernel = "bf16_gemm_naive"
grid = ["cdiv(N, 32)", "cdiv(M, 8)"]
block = [32, 8]
*/

// Known bad: a tensor map whose box is wider than its swizzle. 128 BF16 columns are 256 bytes a row, but the
// 128-byte swizzle spans 128: cuTensorMapEncodeTiled would refuse the descriptor, so the judge refuses the
// plan on the CPU, before anything runs (plan_error). (A box past the array's edges is no error: TMA fills
// what lies outside with zeros; see tests/kernels/good/bf16_gemm_tma.cu.)
#include <cuda_bf16.h>

struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; };
typedef CUtensorMap_st CUtensorMap;

__global__ void bf16_gemm_wide_box(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B,
                                   float beta, __nv_bfloat16* C, const __grid_constant__ CUtensorMap tmA) {
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = fmaf(__bfloat162float(A[(size_t)row * K + k]), __bfloat162float(B[(size_t)k * N + col]), acc);
    const size_t at = (size_t)row * N + col;
    C[at] = __float2bfloat16_rn(alpha * acc + beta * __bfloat162float(C[at]));
}

/* @plan
[[tensor_map]]
name = "tmA"
array = "A"
box = [128, 64]
swizzle = "128B"

[[launch]]
kernel = "bf16_gemm_wide_box"
grid = ["cdiv(N, 16)", "cdiv(M, 16)"]
block = [16, 16]
tensor_maps = ["tmA"]
*/

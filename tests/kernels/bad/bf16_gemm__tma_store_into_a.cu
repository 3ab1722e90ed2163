// Known bad: a tensor map over the input A used to write into it. The product itself is right (naive, FP32
// accumulation), but block (0, 0) also stores a 16-byte box of zeros into A's first row through TMA. The
// descriptor cannot say "read only"; the judge's host-held fingerprint of A can: "the kernel modified its
// input A" (wrong_answer).
#include <cuda_bf16.h>

struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; };
typedef CUtensorMap_st CUtensorMap;

__global__ void bf16_gemm_tamper(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B,
                                 float beta, __nv_bfloat16* C, const __grid_constant__ CUtensorMap tmA) {
    __shared__ alignas(128) __nv_bfloat16 zeros[8];
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    float acc = 0.0f;
    if (row < M && col < N)
        for (int k = 0; k < K; ++k)
            acc = fmaf(__bfloat162float(A[(size_t)row * K + k]), __bfloat162float(B[(size_t)k * N + col]), acc);
    __syncthreads();  // this block has read A; the store below lands after
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
        for (int i = 0; i < 8; ++i) zeros[i] = __float2bfloat16_rn(0.0f);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the generic writes, seen by TMA
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
                     :: "l"(reinterpret_cast<unsigned long long>(&tmA)),
                        "r"((unsigned)__cvta_generic_to_shared(zeros)), "r"(0), "r"(0)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    if (row >= M || col >= N) return;
    const size_t at = (size_t)row * N + col;
    C[at] = __float2bfloat16_rn(alpha * acc + beta * __bfloat162float(C[at]));
}

/* @plan
[[tensor_map]]
name = "tmA"
array = "A"
box = [8, 1]

[[launch]]
kernel = "bf16_gemm_tamper"
grid = ["cdiv(N, 16)", "cdiv(M, 16)"]
block = [16, 16]
tensor_maps = ["tmA"]
*/

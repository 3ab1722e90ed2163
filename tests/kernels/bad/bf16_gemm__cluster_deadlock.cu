// Known bad: a cluster that deadlocks. Block 1 of each pair of blocks spins until block 0 has set a flag in its
// shared memory, but block 0 sets it only after the cluster barrier, where it waits for block 1: neither ever
// goes on. The judge's timeout kills the child (timed_out) and the worker judges the next submission normally.
#include <cuda_bf16.h>

__device__ __forceinline__ unsigned cluster_rank() {
    unsigned v;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(v));
    return v;
}

__global__ void bf16_gemm_deadlock(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B,
                                   float beta, __nv_bfloat16* C) {
    __shared__ unsigned flag;
    if (cluster_rank() == 1) {
        unsigned remote, seen = 0;
        asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(remote) : "r"((unsigned)__cvta_generic_to_shared(&flag)));
        while (seen != 0x600Du)  // never true: block 0 writes it only past the barrier below
            asm volatile("ld.volatile.shared::cluster.u32 %0, [%1];" : "=r"(seen) : "r"(remote) : "memory");
    }
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
    if (cluster_rank() == 0 && threadIdx.x == 0) flag = 0x600Du;
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = fmaf(__bfloat162float(A[(size_t)row * K + k]), __bfloat162float(B[(size_t)k * N + col]), acc);
    const size_t at = (size_t)row * N + col;
    C[at] = __float2bfloat16_rn(alpha * acc + beta * __bfloat162float(C[at]));
}

/* @plan
[[launch]]
kernel = "bf16_gemm_deadlock"
grid = ["2 * cdiv(N, 32)", "cdiv(M, 16)"]
block = [16, 16]
cluster = [2, 1, 1]
*/

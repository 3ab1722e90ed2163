// bf16_gemm in clusters of 2 x 1 x 1 blocks, as the plan asks: each block checks that it is in a cluster of two
// (the launch attribute took), swaps a word with its partner through distributed shared memory, meets it at
// the cluster barrier, and only then computes its 16 x 16 piece of C naively. A block that finds itself alone
// or reads the wrong word from its partner writes NaN instead: a launch without the cluster is a wrong answer.
// PTX rather than cooperative_groups' cluster API, whose headers need CCCL's <nv/target> (not in the judge's set).
#include <cuda_bf16.h>

__device__ __forceinline__ unsigned cluster_special(int which) {
    unsigned v;
    if (which == 0) asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(v));
    else if (which == 1) asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(v));
    else asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(v));
    return v;
}

__device__ __forceinline__ void cluster_sync() {  // every thread of every block of the cluster meets here
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

__device__ __forceinline__ unsigned read_partner(const unsigned* local, unsigned rank) {
    unsigned remote, value;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"((unsigned)__cvta_generic_to_shared(local)), "r"(rank));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(value) : "r"(remote) : "memory");
    return value;
}

__global__ void bf16_gemm_cluster(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B,
                                  float beta, __nv_bfloat16* C) {
    __shared__ unsigned word;
    const unsigned rank = cluster_special(0);
    if (threadIdx.x == 0 && threadIdx.y == 0) word = 0xC0DE0000u + rank;
    cluster_sync();  // every block's word is written before any partner reads it
    bool clustered = cluster_special(1) == 2 && cluster_special(2) == 2;
    if (clustered) clustered = read_partner(&word, rank ^ 1u) == 0xC0DE0000u + (rank ^ 1u);
    cluster_sync();  // no block leaves while its partner may still read its shared memory
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = fmaf(__bfloat162float(A[(size_t)row * K + k]), __bfloat162float(B[(size_t)k * N + col]), acc);
    const size_t at = (size_t)row * N + col;
    const float out = alpha * acc + beta * __bfloat162float(C[at]);
    C[at] = __float2bfloat16_rn(clustered ? out : __int_as_float(0x7fc00000));
}

/* @plan
[[launch]]
kernel = "bf16_gemm_cluster"
grid = ["2 * cdiv(N, 32)", "cdiv(M, 16)"]
block = [16, 16]
cluster = [2, 1, 1]
*/

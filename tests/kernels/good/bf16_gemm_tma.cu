// bf16_gemm through TMA: each block owns 64 x 64 tiles of C (persistent: grid = SMS, tiles taken in turn),
// and one thread asks the tensor-memory accelerator for each 64 x 64 tile of A and of B, an mbarrier counting
// the bytes in. No bounds checks on the loads: past the ragged edges of A and B, TMA fills the box with zeros,
// which add nothing to the dot products. FP32 accumulation on CUDA cores (the point is the data path, not
// speed). kSwizzleB reads B's tile as TMA lays it out under the 128-byte swizzle (the test flips it).
#include <cuda_bf16.h>

struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; };
typedef CUtensorMap_st CUtensorMap;

constexpr int BM = 64, BN = 64, BK = 64;
constexpr unsigned TILE_BYTES = (BM * BK + BK * BN) * 2;

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void wait_phase(unsigned long long* bar, unsigned phase) {
    unsigned done = 0;
    while (!done) {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done) : "r"(smem(bar)), "r"(phase) : "memory");
    }
}

__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, unsigned long long* bar, int x, int y) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
        :: "r"(smem(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(smem(bar)), "r"(x), "r"(y)
        : "memory");
}

template <bool kSwizzleB>
__global__ void __launch_bounds__(256) bf16_gemm_tma(int M, int N, int K, float alpha, const __nv_bfloat16* A,
                                                     const __nv_bfloat16* B, float beta, __nv_bfloat16* C,
                                                     const __grid_constant__ CUtensorMap tmA,
                                                     const __grid_constant__ CUtensorMap tmB) {
    __shared__ alignas(1024) __nv_bfloat16 As[BM][BK];  // 1024-byte alignment: what the 128B swizzle needs
    __shared__ alignas(1024) __nv_bfloat16 Bs[BK][BN];
    __shared__ alignas(8) unsigned long long bar;
    const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
    if (tid == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem(&bar)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the async proxy
    }
    __syncthreads();
    const int tiles_n = (N + BN - 1) / BN, tiles = tiles_n * ((M + BM - 1) / BM);
    unsigned phase = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int m0 = tile / tiles_n * BM, n0 = tile % tiles_n * BN;
        float acc[4][4] = {};
        for (int k0 = 0; k0 < K; k0 += BK) {
            if (tid == 0) {
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                             :: "r"(smem(&bar)), "r"(TILE_BYTES) : "memory");
                tma_load(&As[0][0], &tmA, &bar, k0, m0);  // A is (K, M) innermost first: x = column k, y = row m
                tma_load(&Bs[0][0], &tmB, &bar, n0, k0);
            }
            wait_phase(&bar, phase);
            phase ^= 1;
            for (int k = 0; k < BK; ++k) {
                float b[4];
                for (int j = 0; j < 4; ++j) {
                    const int n = tx * 4 + j;
                    // 128B swizzle: the 16-byte chunk n / 8 of row k sits at chunk (n / 8) ^ (k % 8).
                    const int at = kSwizzleB ? ((n / 8) ^ (k % 8)) * 8 + n % 8 : n;
                    b[j] = __bfloat162float(Bs[k][at]);
                }
                for (int i = 0; i < 4; ++i) {
                    const float a = __bfloat162float(As[ty * 4 + i][k]);
                    for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a, b[j], acc[i][j]);
                }
            }
            __syncthreads();  // every thread is done with the tiles before TMA overwrites them
        }
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
                const int r = m0 + ty * 4 + i, c = n0 + tx * 4 + j;
                if (r < M && c < N) {
                    const size_t at = (size_t)r * N + c;
                    C[at] = __float2bfloat16_rn(alpha * acc[i][j] + beta * __bfloat162float(C[at]));
                }
            }
    }
}

/* @plan
[[tensor_map]]
name = "tmA"
array = "A"
box = [64, 64]

[[tensor_map]]
name = "tmB"
array = "B"
box = [64, 64]
swizzle = "none"

[[launch]]
kernel = "bf16_gemm_tma<false>"
grid = ["SMS"]
block = [256]
tensor_maps = ["tmA", "tmB"]
*/

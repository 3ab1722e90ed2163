// Step 03 - warp specialisation: a producer warpgroup and two consumer warpgroups (capsule 60, "WGMMA & warp
// specialization").
//     python -m kernels bench kernels/reference/bf16_gemm/03_warp_specialized.cu --problem bf16_gemm --arch sm_90a
// Change versus 02: the roles are split. In step 02 thread 0 produced and consumed, and every k tile ended in a
// __syncthreads that made both consumer warpgroups wait for the slower one before a stage could be refilled. Here
// the block has 3 warpgroups (384 threads):
//   - warpgroup 0 is the producer: one of its threads runs ahead through the k loop, waiting on stage s's "empty"
//     mbarrier before reusing it, then arrive.expect_tx(48 KB) on its "full" mbarrier and 5 TMA box copies
//     (A 64 k x 128 rows, B four boxes of 64 n x 64 k), exactly the loads and layouts of step 02.
//   - warpgroups 1 and 2 are consumers, 64 x 256 of the 128 x 256 tile each: wait on "full", queue 4 wgmma
//     (m64n256k16), commit, wait until only this tile's group is in flight, then hand the previous tile's stage
//     back: lane 0 of each consumer warp arrives on its "empty" mbarrier (count 8, one per consumer warp, so the
//     stage is reused only when every warp that read it is done with it).
// No block-wide barrier remains in the main loop: the warpgroups meet only through the mbarriers. The producer
// needs few registers and the consumers many (128 FP32 accumulators each), so the warpgroups trade registers
// with setmaxnreg: at launch each of the 384 threads gets 168 (65536 / 384, rounded down to a multiple of 8); the
// producer gives back down to 40 and the consumers grow to 232: 128 x 40 + 256 x 232 = 64512 <= 65536, the
// register file of an SM (a request the pool cannot meet would block the warpgroup for ever, so the sum matters).
// Parities: the n-th fill of stage s (n = kt / STAGES) completes "full" phase n, so consumers wait with parity
// n & 1; the producer's n-th reuse (n >= 1) waits for "empty" phase n - 1 to complete, parity (n - 1) & 1.
// Edges and epilogue are those of step 02: TMA zero-fills the parts of boxes outside A and B, and the epilogue
// guards rows and column pairs.
// Plan: 128 x 256 x 64 tiles, 4 stages of 48 KB (5 would need 240 KB, more than the 227 KB a block may have),
// grouped block order. Prediction: the tensor cores see a continuous stream of wgmma from two warpgroups, so the
// main loop should run close to cuBLAS's; the epilogue and the launch of one short-lived block per tile stay:
// 85-95% of cuBLAS.
// Measured on the H200 through the judge (2026-12-03):
//   4096^3 0.237 ms, 581 TFLOP/s, 78.8% of cuBLAS; 8192^3 1.583 ms, 695 TFLOP/s, 89.6%.
#include <cuda_bf16.h>

// NVRTC has no <cuda.h>: the tensor map is 128 opaque bytes, 64-byte aligned, passed by value as a
// __grid_constant__ parameter (the TMA reads it from the parameter space through its generic address).
struct alignas(64) CUtensorMap_st {
    unsigned long long opaque[16];
};
typedef CUtensorMap_st CUtensorMap;

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarrier ----------------------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// One arrival that also raises the phase's expected transaction count by `bytes`.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// A plain arrival (release semantics at CTA scope): a consumer warp hands a stage back to the producer.
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spin until the phase with this parity has completed (try_wait suspends for a while before it fails).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done = 0;
    do {
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

// ---- TMA ----------------------------------------------------------------------------------------------------
// Box at element coordinates (c0 = innermost/column, c1 = row) of the tensor map into shared memory at dst;
// completion counted on mbarrier bar.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap* map, int c0, int c1, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}

// ---- wgmma --------------------------------------------------------------------------------------------------
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Tie a register to the asm stream, so the compiler neither reads nor moves an accumulator across a wait.
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// Shared-memory matrix descriptor: start address, leading and stride byte offsets (all >> 4), 128-byte swizzle.
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}

// D(64 x 256, FP32) += A(64 x 16, K-major) * B(16 x 256, N-major); scale-d 1, scale-a/b 1, trans-a 0, trans-b 1.
// Accumulator d[4 j + q] of a thread in warp w of the warpgroup: row 16 w + lane / 4 (+ 8 for q >= 2), column
// 8 j + 2 (lane % 4) + q % 2.
#define WG_D8(i)                                                                                                   \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
        "+f"(d[i + 7])
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, 1;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56), WG_D8(64),
          WG_D8(72), WG_D8(80), WG_D8(88), WG_D8(96), WG_D8(104), WG_D8(112), WG_D8(120)
        : "l"(da), "l"(db), "r"(1));
}

constexpr int BM = 128, BN = 256, BK = 64;  // BK: 64 bf16 = one 128-byte swizzle row
constexpr int A_BYTES = BM * BK * 2;         // 16 KB: one TMA box
constexpr int B_SLAB_BYTES = BK * 64 * 2;    // 8 KB: one TMA box of 64 n x 64 k
constexpr int STAGE_BYTES = A_BYTES + BN / 64 * B_SLAB_BYTES;  // 48 KB

template <int STAGES>
__global__ void __launch_bounds__(384, 1)
bf16_gemm_ws(int M, int N, int K, float alpha, const __nv_bfloat16* __restrict__ A,
             const __nv_bfloat16* __restrict__ B, float beta, __nv_bfloat16* __restrict__ C,
             const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB) {
    // STAGES * 48 KB of tiles, then STAGES "full" and STAGES "empty" mbarriers (8 bytes each); the plan adds 1 KB
    // of slack for rounding the base up to the swizzle atom's 1024-byte alignment.
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned smem = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned full_bar = smem + STAGES * STAGE_BYTES, empty_bar = full_bar + 8 * STAGES;

    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;

    // Grouped rasterisation: GROUP block rows walked column by column, so blocks running together share A rows
    // and B columns in L2.
    constexpr int GROUP = 8;
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int bid = blockIdx.x;
    const int first_m = bid / (GROUP * grid_n) * GROUP, gsize = min(grid_m - first_m, GROUP);
    const int m0 = (first_m + (bid % (GROUP * grid_n)) % gsize) * BM;
    const int n0 = (bid % (GROUP * grid_n)) / gsize * BN;

    if (tid == 0) {
        tma_prefetch_map(&tmA);
        tma_prefetch_map(&tmB);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, 1);   // the producer's arrive.expect_tx (the bytes are counted apart)
            mbar_init(empty_bar + 8 * s, 8);  // lane 0 of each of the 8 consumer warps
        }
        // Make the initialised barriers visible to the async proxy (the TMA unit signals them).
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();  // the last block-wide barrier: from here on the warpgroups meet only through mbarriers

    const int KT = (K + BK - 1) / BK;
    // As in step 02, B boxes that start at or past column N are skipped (they would only feed columns the
    // epilogue never stores); boxes that run past an edge are loaded whole, zero-filled and counted in full.
    const int b_boxes = min(BN / 64, (N - n0 + 63) / 64);
    const unsigned stage_tx = A_BYTES + b_boxes * B_SLAB_BYTES;  // 48 KB except at the right edge
    if (wg == 0) {
        // Producer warpgroup. setmaxnreg is warpgroup-wide (.sync.aligned): all 128 threads execute it.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            for (int kt = 0; kt < KT; ++kt) {
                const int s = kt % STAGES, n = kt / STAGES;
                const unsigned st = smem + s * STAGE_BYTES, bar = full_bar + 8 * s;
                if (n >= 1) mbar_wait(empty_bar + 8 * s, (n - 1) & 1);  // consumers are done with fill n - 1
                mbar_arrive_expect_tx(bar, stage_tx);
                tma_load_2d(st, &tmA, kt * BK, m0, bar);
                for (int j = 0; j < b_boxes; ++j)
                    tma_load_2d(st + A_BYTES + j * B_SLAB_BYTES, &tmB, n0 + 64 * j, kt * BK, bar);
            }
        }
        return;  // nothing else to do: the block lives on until the consumers finish
    }

    // Consumer warpgroups 1 and 2: rows 64 (wg - 1) .. + 63 of the block tile.
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int cw = wg - 1;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

    for (int kt = 0; kt < KT; ++kt) {
        const int s = kt % STAGES;
        const unsigned st = smem + s * STAGE_BYTES;
        mbar_wait(full_bar + 8 * s, (kt / STAGES) & 1);  // tile kt has landed in stage s
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks) {
            const unsigned long long da = make_desc(st + cw * 64 * 128 + ks * 32, 16, 1024);
            const unsigned long long db = make_desc(st + A_BYTES + ks * 2048, B_SLAB_BYTES, 1024);
            wgmma_m64n256k16(acc, da, db);
        }
        wgmma_commit();
        wgmma_wait<1>();  // tile kt - 1's products are done in this warpgroup: hand its stage back
        if (kt >= 1 && lane == 0) mbar_arrive(empty_bar + 8 * ((kt - 1) % STAGES));
    }
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < 128; ++i) fence_operand(acc[i]);

    // Epilogue: row 16 w + lane / 4 (+ 8) of this warpgroup's 64 rows; columns 8 j + 2 (lane % 4) and + 1.
    const int row0 = m0 + cw * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const int col = n0 + j * 8 + (lane % 4) * 2;
        if (col >= N) continue;  // N % 8 == 0: col and col + 1 are in or out together
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + h * 8;
            if (row >= M) continue;
            __nv_bfloat162* c = reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col);
            const float2 old = __bfloat1622float2(*c);
            *c = __floats2bfloat162_rn(alpha * acc[4 * j + 2 * h] + beta * old.x,
                                       alpha * acc[4 * j + 2 * h + 1] + beta * old.y);
        }
    }
}

/* @plan
[[tensor_map]]
name = "tmA"
array = "A"
box = [64, 128]
swizzle = "128B"
l2_promotion = "256B"

[[tensor_map]]
name = "tmB"
array = "B"
box = [64, 64]
swizzle = "128B"
l2_promotion = "256B"

[[launch]]
kernel = "bf16_gemm_ws<4>"
grid = ["cdiv(M, 128) * cdiv(N, 256)"]
block = [384]
shared_bytes = "4 * (128 + 256) * 64 * 2 + 2 * 4 * 8 + 1024"
tensor_maps = ["tmA", "tmB"]
*/

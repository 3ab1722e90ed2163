// Step 04 - clusters of 2 with TMA multicast, a persistent tile scheduler and an L2-friendly raster order
// (capsule 61, "Beating cuBLAS on an H100").
//     python -m kernels bench kernels/reference/bf16_gemm/04_cluster_persistent.cu --problem bf16_gemm --arch sm_90a
// Change versus 03, three things:
//   1. Clusters of 2 CTAs along M (plan: cluster = [2, 1, 1]). The two CTAs of a cluster own vertically adjacent
//      128 x 256 tiles with the same columns, so they need the same B tile (32 KB per k step, twice A's 16 KB).
//      Each CTA's producer loads its own A box and half of B (two of the four 64 n x 64 k boxes) with
//      .multicast::cluster and cta mask 0b11: the box lands at the same shared-memory offset in both CTAs and is
//      counted on both CTAs' "full" mbarrier of that stage, so each full barrier still expects 48 KB (own A, own
//      half of B, the other CTA's half). L2 reads per CTA and k step drop from 48 KB to 32 KB. The price: a stage
//      may be refilled only when both CTAs are done with it, since either producer writes into both. Each of the
//      8 consumer warps of each CTA releases a stage on both CTAs' "empty" barriers (mapa gives the other CTA's
//      address in the cluster's shared window), so "empty" counts 16 arrivals. The barriers are initialised, fenced
//      (fence.mbarrier_init) and published to the other CTA by a cluster-wide barrier before any copy starts,
//      and no CTA leaves before a last cluster-wide barrier: the other CTA may still arrive on its barriers.
//   2. Persistent blocks: the grid is one block per SM (SMS, rounded down to whole clusters), and each cluster
//      walks the tile pairs t = cluster, cluster + clusters, ... The stage ring and its parities continue across
//      tiles (a running k-step counter), so the producer starts loading the next tile while the consumers are
//      still in the previous tile's epilogue: the TMA never waits for the epilogue, and no block launch, barrier
//      initialisation or pipeline fill is paid per tile.
//   3. Raster order: tile pairs are numbered in groups of 8 pair rows (2048 rows of C) walked column by column,
//      so the 66 pairs in flight at any moment cover about 8 x 8 tiles: their A rows and B columns are re-read
//      from L2, not from HBM.
// And a smaller one: four k steps before the end of each tile, 64 threads of each consumer warpgroup start an L2
// prefetch of one 512-byte row of the tile's C (cp.async.bulk.prefetch.L2), so the epilogue's beta * C loads come
// from L2 rather than HBM; the epilogue then loads 16 column pairs at a time before it computes and stores them.
// (Loading C into registers early does not fit: ptxas allocates the whole kernel within the launch's 168
// registers per thread, setmaxnreg or not, and the accumulators take 128.)
// Roles, layouts, parities, register split (producer 40, consumers 232) and edges are those of step 03. When M needs
// an odd number of 128-row tiles, the second CTA of the last pair loads no A (its tile lies below row M) and stores
// nothing: it still loads its half of B, which its partner needs. Clusters with no tile left only meet the others
// at the two cluster barriers.
// Two ways to write C are here, picked by the template's last argument: false stores each thread's column pairs
// straight from the accumulators, as steps 02 and 03 do; true, the plan's, stages alpha * acc through 18 KB of
// shared memory so that loads and stores of C move 16 bytes per thread and 64 contiguous bytes per row (the
// comment at the code says how). Measured both ways (below): the staged epilogue is 5% faster at 4096^3.
// Plan: 128 x 256 x 64 tiles, 4 stages of 48 KB (+ 18 KB staging), 384 threads, 1 block per SM, 8 pair rows per
// raster group, grid SMS // 2 * 2 (132 on an H200: 66 clusters; a cluster's two blocks must sit in one GPC, so
// should the GPU hold fewer than 66 such pairs at once, the rest would start late: a tail the timing would show).
// Prediction: the main loop runs as in 03 with a third less L2 traffic, and the gaps between tiles shrink: 95-105%
// of cuBLAS at 4096^3 and 8192^3.
// Measured on the H200 through the judge (2026-12-03), cuBLAS BF16 GemmEx beside it:
//   staged epilogue <4, 8, true>:  4096^3 0.197 ms, 698 TFLOP/s, 94.7% of cuBLAS; 8192^3 1.435 ms, 766 TFLOP/s, 98.9%
//   direct epilogue <4, 8, false>: 4096^3 0.206 ms, 666 TFLOP/s, 90.1%;           8192^3 1.467 ms, 750 TFLOP/s, 96.7%
//   raster groups of 4 or 16 pair rows instead of 8: within 1% of the same epilogue with 8.
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
// ---- clusters -----------------------------------------------------------------------------------------------
__device__ __forceinline__ unsigned cluster_ctarank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// The shared::cluster address of the same shared-memory offset in CTA `rank` of the cluster.
__device__ __forceinline__ unsigned mapa(unsigned addr, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
// Arrive on an mbarrier of any CTA of the cluster (address from mapa). The default semantics (release at CTA
// scope) suffice: what the arrival publishes is that this warp's wgmma reads of the stage are complete, and the
// only writer that waits for it is the TMA. Asking for .release.cluster would put a GPU-wide memory barrier
// (MEMBAR.ALL.GPU in the SASS) in front of every arrival, in the main loop.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned cluster_addr) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}
// Start pulling `bytes` (a multiple of 16) of global memory at a 16-byte aligned address into L2; no registers,
// no completion to wait for.
__device__ __forceinline__ void prefetch_l2(const void* p, unsigned bytes) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p), "r"(bytes) : "memory");
}
// Every thread of every CTA of the cluster meets here (aligned: whole warps, converged).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
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
// The same box delivered to the same shared-memory offset, and counted on the same mbarrier offset, in every CTA
// of the cluster whose bit is set in cta_mask: one L2 read feeds several SMs.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const CUtensorMap* map, int c0, int c1,
                                                      unsigned bar, unsigned short cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
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

constexpr int CLUSTER = 2;  // CTAs per cluster, along M
// Staged epilogue: per consumer warp, 16 rows x 32 columns of FP32, rows padded to 36 floats (see below).
constexpr int EPI_COLS = 32, EPI_PITCH = 36, EPI_WARP_BYTES = 16 * EPI_PITCH * 4;

// Tile pair t (grouped raster over [cdiv(grid_m, 2) pair rows x grid_n columns], GROUP pair rows walked column
// by column) -> this CTA's tile origin.
template <int GROUP>
__device__ __forceinline__ void tile_origin(int t, int pair_rows, int grid_n, unsigned rank, int& m0, int& n0) {
    const int first = t / (GROUP * grid_n) * GROUP, gsize = min(pair_rows - first, GROUP);
    const int pm = first + (t % (GROUP * grid_n)) % gsize;
    n0 = (t % (GROUP * grid_n)) / gsize * BN;
    m0 = (pm * CLUSTER + (int)rank) * BM;
}

// STAGES: ring depth; GROUP: pair rows per raster group; STAGED: the epilogue goes through shared memory (below).
template <int STAGES, int GROUP, bool STAGED>
__global__ void __launch_bounds__(384, 1)
bf16_gemm_cluster(int M, int N, int K, float alpha, const __nv_bfloat16* __restrict__ A,
                  const __nv_bfloat16* __restrict__ B, float beta, __nv_bfloat16* __restrict__ C,
                  const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB) {
    // STAGES * 48 KB of tiles, then STAGES "full" and STAGES "empty" mbarriers (8 bytes each); the plan adds 1 KB
    // of slack for rounding the base up to the swizzle atom's 1024-byte alignment. The layout is the same in both
    // CTAs of a cluster, which multicast relies on (same offsets).
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned smem = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned full_bar = smem + STAGES * STAGE_BYTES, empty_bar = full_bar + 8 * STAGES;
    const unsigned epi_smem = empty_bar + 8 * STAGES;  // 8 x EPI_WARP_BYTES when STAGED

    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
    const unsigned rank = cluster_ctarank();  // 0 or 1: which tile of the pair (the plan's cluster is [2, 1, 1])

    if (tid == 0) {
        tma_prefetch_map(&tmA);
        tma_prefetch_map(&tmB);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, 1);                  // this CTA's producer's arrive.expect_tx
            mbar_init(empty_bar + 8 * s, 8 * CLUSTER);       // every consumer warp of both CTAs
        }
        // Make the initialised barriers visible to the async proxy and to the other CTA of the cluster.
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    cluster_sync();  // both CTAs' barriers exist before either producer multicasts or either consumer arrives

    const int KT = (K + BK - 1) / BK;
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pair_rows = (grid_m + CLUSTER - 1) / CLUSTER, pairs = pair_rows * grid_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (wg == 0) {
        // Producer warpgroup. setmaxnreg is warpgroup-wide (.sync.aligned): all 128 threads execute it.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            int it = 0;  // k steps issued so far, over all tiles: stage it % STAGES, fill it / STAGES
            for (int t = cluster_id; t < pairs; t += clusters) {
                int m0, n0;
                tile_origin<GROUP>(t, pair_rows, grid_n, rank, m0, n0);
                // Boxes that start past the tensor are not loaded (as in steps 02 and 03): this CTA's A box when
                // its tile lies wholly below row M, and B boxes from column N on (both CTAs skip the same ones,
                // so each expects exactly what the two producers send). Partial boxes are loaded whole.
                const bool a_box = m0 < M;
                const int b_boxes = min(BN / 64, (N - n0 + 63) / 64);
                const unsigned stage_tx = (a_box ? A_BYTES : 0) + b_boxes * B_SLAB_BYTES;
                for (int kt = 0; kt < KT; ++kt, ++it) {
                    const int s = it % STAGES, n = it / STAGES;
                    const unsigned st = smem + s * STAGE_BYTES, bar = full_bar + 8 * s;
                    // Both CTAs' consumers are done with fill n - 1 of this stage (ours and the other's: our half
                    // of B goes into both).
                    if (n >= 1) mbar_wait(empty_bar + 8 * s, (n - 1) & 1);
                    // Own A box + own half of B + the other CTA's half of B arrive on this barrier: 48 KB away
                    // from the edges.
                    mbar_arrive_expect_tx(bar, stage_tx);
                    if (a_box) tma_load_2d(st, &tmA, kt * BK, m0, bar);
#pragma unroll
                    for (int h = 0; h < BN / 64 / CLUSTER; ++h) {
                        const int j = (int)rank * (BN / 64 / CLUSTER) + h;
                        if (j < b_boxes)
                            tma_load_2d_multicast(st + A_BYTES + j * B_SLAB_BYTES, &tmB, n0 + 64 * j, kt * BK, bar,
                                                  (unsigned short)((1u << CLUSTER) - 1));
                    }
                }
            }
        }
        __syncwarp();
    } else {
        // Consumer warpgroups 1 and 2: rows 64 (wg - 1) .. + 63 of each tile.
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int cw = wg - 1;
        // Lane 0 of each consumer warp releases a stage on both CTAs' empty barriers.
        auto release = [&](int s) {
            if (lane == 0) {
#pragma unroll
                for (unsigned r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(mapa(empty_bar + 8 * s, r));
            }
        };
        int it = 0;  // k steps consumed so far, in step with the producer's counter
        for (int t = cluster_id; t < pairs; t += clusters) {
            int m0, n0;
            tile_origin<GROUP>(t, pair_rows, grid_n, rank, m0, n0);
            const int row0 = m0 + cw * 64 + warp * 16 + lane / 4;  // + 8 h: accumulator rows of this thread
            const int colq = n0 + (lane % 4) * 2;                  // + 8 j: accumulator column pairs

            float acc[128];
#pragma unroll
            for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
            const int prefetch_kt = KT > 4 ? KT - 4 : 0;
            const int prow = m0 + cw * 64 + tid % 128;  // threads 0-63 of the warpgroup: one row of C each

            for (int kt = 0; kt < KT; ++kt, ++it) {
                if (kt == prefetch_kt && tid % 128 < 64 && prow < M)
                    prefetch_l2(C + (size_t)prow * N + n0, (unsigned)min(BN, N - n0) * 2);  // N % 8 == 0: 16 B
                const int s = it % STAGES;
                const unsigned st = smem + s * STAGE_BYTES;
                mbar_wait(full_bar + 8 * s, (it / STAGES) & 1);  // k step it has landed in stage s
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < BK / 16; ++ks) {
                    const unsigned long long da = make_desc(st + cw * 64 * 128 + ks * 32, 16, 1024);
                    const unsigned long long db = make_desc(st + A_BYTES + ks * 2048, B_SLAB_BYTES, 1024);
                    wgmma_m64n256k16(acc, da, db);
                }
                wgmma_commit();
                wgmma_wait<1>();  // k step it - 1's products are done in this warpgroup: hand its stage back
                if (kt >= 1) release((it - 1) % STAGES);
            }
            wgmma_wait<0>();
            release((it - 1) % STAGES);  // the tile's last stage: the producer is already on the next tile
#pragma unroll
            for (int i = 0; i < 128; ++i) fence_operand(acc[i]);

            if (STAGED) {
                // Epilogue through shared memory, 32 columns at a time: each warp writes alpha * acc for its 16
                // rows x 32 columns as FP32 into its own staging area (8-byte stores; rows 36 floats apart, so the
                // 8 rows of a store instruction start 4 banks apart and each bank is hit twice: 2 wavefronts, the
                // minimum for 256 bytes), then reads back 8 consecutive columns of one row per thread (two 16-byte
                // loads; 4 wavefronts for 512 bytes, again the minimum), adds beta * C read as 8 BF16 in one 16-byte
                // load, and stores 16 bytes: a warp moves 64 contiguous bytes of each of 8 rows per instruction
                // instead of 16. N % 8 == 0, so a group of 8 columns is wholly inside or outside.
                // Plain C++ accesses (not asm) to the staging area, so the compiler knows they cannot alias C.
                // C loads go through the read-only path (__ldg): C is written by this kernel, but every element is
                // read once, by the thread that then writes it, before it is written, so no load can see a stale
                // value; what __ldg buys is that the compiler may keep these loads ahead of earlier stores to C (a
                // plain load through the pointer that is also stored through may not pass a store).
                float* stage_area = reinterpret_cast<float*>(smem_raw + (epi_smem - smem_u32(smem_raw))) +
                                    (cw * 4 + warp) * (EPI_WARP_BYTES / 4);
                // Thread's share of chunk c: rows rl = lane / 4 + 8 i (i = 0, 1) of the warp's 16, columns
                // c * 32 + (lane % 4) * 8 .. + 7. The C loads run two chunks ahead of their use, so their latency
                // overlaps the staging of the chunks in between (8 registers per chunk in flight).
                auto load_c = [&](int c, uint4 (&out)[2]) {
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int row = m0 + cw * 64 + warp * 16 + lane / 4 + 8 * i;
                        const int col = n0 + c * EPI_COLS + (lane % 4) * 8;
                        out[i] = (row < M && col < N)
                                     ? __ldg(reinterpret_cast<const uint4*>(C + (size_t)row * N + col))
                                     : make_uint4(0u, 0u, 0u, 0u);
                    }
                };
                constexpr int CHUNKS = BN / EPI_COLS;
                uint4 c_in[3][2];
                load_c(0, c_in[0]);
                load_c(1, c_in[1]);
#pragma unroll
                for (int c = 0; c < CHUNKS; ++c) {
                    if (c + 2 < CHUNKS) load_c(c + 2, c_in[(c + 2) % 3]);
#pragma unroll
                    for (int jj = 0; jj < EPI_COLS / 8; ++jj)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int j = c * (EPI_COLS / 8) + jj;
                            const int rl = lane / 4 + 8 * h, cl = 8 * jj + 2 * (lane % 4);
                            *reinterpret_cast<float2*>(stage_area + rl * EPI_PITCH + cl) =
                                make_float2(alpha * acc[4 * j + 2 * h], alpha * acc[4 * j + 2 * h + 1]);
                        }
                    __syncwarp();
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int rl = lane / 4 + 8 * i;
                        const int row = m0 + cw * 64 + warp * 16 + rl, col = n0 + c * EPI_COLS + (lane % 4) * 8;
                        const float* src = stage_area + rl * EPI_PITCH + (lane % 4) * 8;
                        const float4 v0 = *reinterpret_cast<const float4*>(src);
                        const float4 v1 = *reinterpret_cast<const float4*>(src + 4);
                        const float v[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
                        if (row < M && col < N) {  // N % 8 == 0: the 8 columns are in or out together
                            uint4 out = c_in[c % 3][i];
                            unsigned* w = reinterpret_cast<unsigned*>(&out);
#pragma unroll
                            for (int e = 0; e < 4; ++e) {
                                const float2 o = __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&w[e]));
                                const __nv_bfloat162 r =
                                    __floats2bfloat162_rn(v[2 * e] + beta * o.x, v[2 * e + 1] + beta * o.y);
                                w[e] = *reinterpret_cast<const unsigned*>(&r);
                            }
                            *reinterpret_cast<uint4*>(C + (size_t)row * N + col) = out;
                        }
                    }
                    __syncwarp();  // the staging area is rewritten by the next chunk
                }
            } else {
                // Epilogue: alpha * acc + beta * C, rounded to BF16, one column pair per 4-byte access; N % 8 == 0,
                // so a pair is wholly inside or outside. The loads of 8 column pairs x 2 rows go out together, then
                // the stores. Plain loads here: through __ldg the compiler hoists all 64 of them above the stores,
                // which does not fit beside the accumulators (it spills).
#pragma unroll
                for (int jb = 0; jb < BN / 8; jb += 8) {
                    unsigned c_old[16];
#pragma unroll
                    for (int j = jb; j < jb + 8; ++j)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int row = row0 + 8 * h, col = colq + 8 * j;
                            const unsigned* src = reinterpret_cast<const unsigned*>(C + (size_t)row * N + col);
                            c_old[2 * (j - jb) + h] = (row < M && col < N) ? *src : 0u;
                        }
#pragma unroll
                    for (int j = jb; j < jb + 8; ++j)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int row = row0 + 8 * h, col = colq + 8 * j;
                            if (row >= M || col >= N) continue;
                            __nv_bfloat162 old;
                            *reinterpret_cast<unsigned*>(&old) = c_old[2 * (j - jb) + h];
                            const float2 o = __bfloat1622float2(old);
                            *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) = __floats2bfloat162_rn(
                                alpha * acc[4 * j + 2 * h] + beta * o.x, alpha * acc[4 * j + 2 * h + 1] + beta * o.y);
                        }
                }
            }
        }
    }
    // No CTA may leave while the other can still arrive on its barriers or multicast into its shared memory.
    cluster_sync();
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
kernel = "bf16_gemm_cluster<4, 8, true>"
grid = ["SMS // 2 * 2"]
block = [384]
cluster = [2, 1, 1]
shared_bytes = "4 * (128 + 256) * 64 * 2 + 2 * 4 * 8 + 8 * 16 * 36 * 4 + 1024"
tensor_maps = ["tmA", "tmB"]
*/

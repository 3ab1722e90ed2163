// Sweep template derived from step 04 (kernels/reference/bf16_gemm/04_cluster_persistent.cu): one kernel whose
// template arguments (filled in from sweep.toml's placeholders, in the code and in the plan) cover:
//   - BM x BN output tiles: 128 x 256 (step 04's), 128 x 128, 256 x 128.
//   - SPLIT: how the two consumer warpgroups share a tile. 0: by rows (each BM / 2 x BN; step 04's 64 x 256),
//     1: by columns (each BM x BN / 2, e.g. 128 x 128 of a 128 x 256 tile as two m64n128k16 per k16 sharing one B
//     descriptor). The producer warpgroup and the setmaxnreg split (40 / 232) are step 04's.
//   - STAGES: ring depth (what fits beside the epilogue's shared memory: 227 KB per block).
//   - CM x CN: the cluster, CM CTAs along M (they share B: each loads BN / 64 / CM of the 64-column B boxes and
//     multicasts them to the CTAs of its column) by CN along N (they share A: each loads BM / CN rows of the A box
//     and multicasts them to the CTAs of its row). 1 x 1, 2 x 1 (step 04) and 1 x 2. The plan launches a 1-D grid
//     with cluster [CM * CN, 1, 1]; rank r is (cm, cn) = (r % CM, r / CM). Every consumer warp releases a stage on
//     the empty barrier of every CTA of the cluster (any producer of the cluster may write into any CTA's stage),
//     so "empty" counts 8 * CM * CN. Edges as in step 04: a box that would start past the tensor (an A piece below
//     row M, a B box right of column N) is issued by nobody and expected by nobody; the pieces that are issued are
//     the same in every CTA that receives them, so each CTA's "full" barrier expects exactly what lands.
//   - GROUP: the raster, step 04's grouped order over cluster tiles (GROUP cluster rows walked column by column).
//   - EPI: the epilogue. 0: step 04's (alpha * acc staged per warp through 18 KB of FP32 shared memory, C loaded
//     and stored 16 bytes per thread; C prefetched into L2 four k steps before the tile's end). 1: C goes through
//     shared memory both ways by TMA, and the store overlaps the next tile's main loop:
//       the producer, half-way through issuing a tile's k steps, loads the whole BM x BN tile of C (64 x 64 boxes,
//       128-byte swizzle) into a C buffer, counted on a "c_full" mbarrier; at the tile's end each consumer thread
//       reads its own accumulators' C pairs from that buffer (the swizzle puts the 8 rows of one access in 8
//       different 16-byte columns: no bank conflict), writes alpha * acc + beta * C rounded to BF16 in place,
//       fences (generic -> async proxy), meets its warpgroup at a named barrier, and one thread per warpgroup issues
//       TMA stores of the warpgroup's boxes and goes straight into the next tile's k loop. The stores read shared
//       memory while the next tile's products run; one k step later that thread waits for their reads
//       (cp.async.bulk.wait_group.read 0) and arrives on "c_free" (count 2), which the producer waits on before it
//       loads the next C tile into the buffer. No bounds checks in the epilogue: TMA fills outside C with zeros and
//       drops writes outside it; a box wholly outside C is neither loaded nor stored. The price: BM x BN x 2 bytes
//       of shared memory (64 KB at 128 x 256), so the ring has one stage fewer.
// Left out (too much new code for the time, or measured already): ping-pong consumers (one warpgroup per 128 x 128
// tile, turns at the tensor cores: measured 77.9% / 79.2% of cuBLAS as rung 05; 128 x 128 tiles
// read twice the L2 bytes per product), 2 x 2 clusters, a raster that walks rows of tiles.
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


// D(64 x 128, FP32) += A(64 x 16, K-major) * B(16 x 128, N-major): as above, half the columns (j < 16).
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 1;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56)
        : "l"(da), "l"(db), "r"(1));
}
// One m64 row block of a warpgroup's part, picked by the accumulator array's size (N = 256 or 128).
__device__ __forceinline__ void wgmma_rows(float (&d)[128], unsigned long long da, unsigned long long db) {
    wgmma_m64n256k16(d, da, db);
}
__device__ __forceinline__ void wgmma_rows(float (&d)[64], unsigned long long da, unsigned long long db) {
    wgmma_m64n128k16(d, da, db);
}

// ---- the TMA epilogue's pieces --------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Shared memory at src (a box laid out as the tensor map's swizzle says) to the box at (c0, c1) of the map's array;
// parts outside the array are not written. Completion is tracked per thread in bulk groups.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, unsigned src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                     reinterpret_cast<unsigned long long>(map)),
                 "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// This thread's bulk stores have finished reading shared memory (the buffer may be overwritten) ...
__device__ __forceinline__ void bulk_wait_read_all() {
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// ... or have completed (before the block exits).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Ordinary shared-memory writes of this thread become visible to the async proxy (the TMA store that reads them).
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void named_sync(unsigned id, unsigned count) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

constexpr int BK = 64;                      // 64 bf16 = one 128-byte swizzle row
constexpr int B_SLAB_BYTES = BK * 64 * 2;   // 8 KB: one TMA box of 64 n x 64 k
constexpr int C_BOX_BYTES = 64 * 64 * 2;    // 8 KB: one TMA box of C, 64 columns x 64 rows, 128-byte swizzle
// Step 04's staged epilogue: per consumer warp, 16 rows x 32 columns of FP32, rows padded to 36 floats.
constexpr int EPI_COLS = 32, EPI_PITCH = 36, EPI_WARP_BYTES = 16 * EPI_PITCH * 4;

// Cluster tile t (grouped raster over [cl_m cluster rows x cl_n cluster columns], GROUP cluster rows walked column
// by column) -> this CTA's tile origin.
template <int BM, int BN, int CM, int CN, int GROUP>
__device__ __forceinline__ void tile_origin(int t, int cl_m, int cl_n, int cm, int cn, int& m0, int& n0) {
    const int first = t / (GROUP * cl_n) * GROUP, gsize = min(cl_m - first, GROUP), r = t % (GROUP * cl_n);
    m0 = ((first + r % gsize) * CM + cm) * BM;
    n0 = (r / gsize * CN + cn) * BN;
}

// Whole 64-wide boxes of a tile at (m0, n0) that start inside an extent (0 when the tile lies past it).
__device__ __forceinline__ int boxes_in(int extent, int origin, int most) {
    return max(0, min(most, (extent - origin + 63) / 64));
}

template <int BM, int BN, int SPLIT, int STAGES, int CM, int CN, int GROUP, int EPI>
__global__ void __launch_bounds__(384, 1)
bf16_gemm_sweep(int M, int N, int K, float alpha, const __nv_bfloat16* __restrict__ A,
                const __nv_bfloat16* __restrict__ B, float beta, __nv_bfloat16* __restrict__ C,
                const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                const __grid_constant__ CUtensorMap tmC) {
    constexpr int CLUSTER = CM * CN;
    // One consumer warpgroup's part of the tile: WM x WN, as MB products m64nWNk16 per k16.
    constexpr int WM = SPLIT == 0 ? BM / 2 : BM, WN = SPLIT == 0 ? BN : BN / 2, MB = WM / 64;
    static_assert(WM % 64 == 0 && (WN == 128 || WN == 256) && MB * WN <= 256, "at most 128 accumulators a thread");
    static_assert(BN / 64 % CM == 0 && (BM / CN) % 8 == 0 && CLUSTER <= 2, "B boxes over CM, A rows over CN");
    constexpr int A_BYTES = BM * BK * 2, STAGE_BYTES = A_BYTES + BN / 64 * B_SLAB_BYTES;
    constexpr int A_PIECE = BM / CN;  // rows of A each CTA of a cluster row loads: the plan's tmA box height
    constexpr int EPI_BYTES = EPI == 0 ? 8 * EPI_WARP_BYTES : BM * BN * 2;

    // STAGES stages, the epilogue's area (1024-aligned: STAGE_BYTES is a multiple of 1024), then the mbarriers;
    // the plan adds 1 KB of slack for rounding the base up to the swizzle atom. The same in every CTA of a cluster.
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned smem = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned epi_smem = smem + STAGES * STAGE_BYTES;
    const unsigned full_bar = epi_smem + EPI_BYTES, empty_bar = full_bar + 8 * STAGES;
    const unsigned c_full = empty_bar + 8 * STAGES, c_free = c_full + 8;
    unsigned char* const epi_gen = smem_raw + (epi_smem - smem_u32(smem_raw));  // the same bytes, generic pointer

    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
    const unsigned rank = cluster_ctarank();
    const int cm = (int)rank % CM, cn = (int)rank / CM;

    if (tid == 0) {
        tma_prefetch_map(&tmA);
        tma_prefetch_map(&tmB);
        if (EPI == 1) tma_prefetch_map(&tmC);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, 1);              // this CTA's producer's arrive.expect_tx
            mbar_init(empty_bar + 8 * s, 8 * CLUSTER);   // every consumer warp of every CTA of the cluster
        }
        mbar_init(c_full, 1);  // the producer's arrive.expect_tx for the C tile
        mbar_init(c_free, 2);  // one thread per consumer warpgroup: its stores have read the C buffer
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    cluster_sync();

    const int KT = (K + BK - 1) / BK;
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int cl_m = (grid_m + CM - 1) / CM, cl_n = (grid_n + CN - 1) / CN, tiles = cl_m * cl_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            unsigned short mask_a = 0, mask_b = 0;  // CTAs sharing this CTA's A rows (its cluster row), B columns
#pragma unroll
            for (int j = 0; j < CN; ++j) mask_a |= (unsigned short)(1u << (cm + CM * j));
#pragma unroll
            for (int i = 0; i < CM; ++i) mask_b |= (unsigned short)(1u << (CM * cn + i));
            // The C tile is loaded after k step c_kt of its tile is issued: late enough that the previous tile's
            // stores are long done (c_free), early enough to land before the epilogue; never before k step 1, where
            // the consumers arrive on c_free.
            const int c_kt = max(KT / 2, min(1, KT - 1));
            int it = 0, tj = 0;  // k steps issued so far over all tiles; this cluster's tiles so far
            for (int t = cluster_id; t < tiles; t += clusters, ++tj) {
                int m0, n0;
                tile_origin<BM, BN, CM, CN, GROUP>(t, cl_m, cl_n, cm, cn, m0, n0);
                // A pieces that start inside A (the same count in every CTA of the cluster row: same m0), whether
                // this CTA's own piece is one of them, and the B boxes that start left of column N.
                const int a_pieces = max(0, min(CN, (M - m0 + A_PIECE - 1) / A_PIECE));
                const bool my_a = cn < a_pieces;
                const int b_boxes = boxes_in(N, n0, BN / 64);
                const unsigned stage_tx = a_pieces * A_PIECE * BK * 2 + b_boxes * B_SLAB_BYTES;
                for (int kt = 0; kt < KT; ++kt, ++it) {
                    const int s = it % STAGES, n = it / STAGES;
                    const unsigned st = smem + s * STAGE_BYTES, bar = full_bar + 8 * s;
                    if (n >= 1) mbar_wait(empty_bar + 8 * s, (n - 1) & 1);
                    mbar_arrive_expect_tx(bar, stage_tx);
                    if (my_a) {
                        if (CN == 1)
                            tma_load_2d(st, &tmA, kt * BK, m0, bar);
                        else
                            tma_load_2d_multicast(st + cn * A_PIECE * 128, &tmA, kt * BK, m0 + cn * A_PIECE, bar,
                                                  mask_a);
                    }
#pragma unroll
                    for (int h = 0; h < BN / 64 / CM; ++h) {
                        const int j = cm * (BN / 64 / CM) + h;
                        if (j < b_boxes) {
                            if (CM == 1)
                                tma_load_2d(st + A_BYTES + j * B_SLAB_BYTES, &tmB, n0 + 64 * j, kt * BK, bar);
                            else
                                tma_load_2d_multicast(st + A_BYTES + j * B_SLAB_BYTES, &tmB, n0 + 64 * j, kt * BK,
                                                      bar, mask_b);
                        }
                    }
                    if (EPI == 1 && kt == c_kt) {
                        if (tj >= 1) mbar_wait(c_free, (tj - 1) & 1);  // the last tile's stores have read the buffer
                        const int c_rows = boxes_in(M, m0, BM / 64), c_cols = boxes_in(N, n0, BN / 64);
                        mbar_arrive_expect_tx(c_full, c_rows * c_cols * C_BOX_BYTES);
#pragma unroll
                        for (int q = 0; q < BM / 64 * (BN / 64); ++q) {
                            const int bm = q / (BN / 64), bn = q % (BN / 64);
                            if (bm < c_rows && bn < c_cols)
                                tma_load_2d(epi_smem + q * C_BOX_BYTES, &tmC, n0 + 64 * bn, m0 + 64 * bm, c_full);
                        }
                    }
                }
            }
        }
        __syncwarp();
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int cw = wg - 1;
        const int wr0 = SPLIT == 0 ? cw * WM : 0, wc0 = SPLIT == 0 ? 0 : cw * WN;  // the part's origin in the tile
        auto release = [&](int s) {
            if (lane == 0) {
#pragma unroll
                for (unsigned r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(mapa(empty_bar + 8 * s, r));
            }
        };
        const int free_kt = KT > 1 ? 1 : 0;  // where the last tile's TMA stores are waited for (EPI 1)
        int it = 0, tj = 0;
        for (int t = cluster_id; t < tiles; t += clusters, ++tj) {
            int m0, n0;
            tile_origin<BM, BN, CM, CN, GROUP>(t, cl_m, cl_n, cm, cn, m0, n0);

            float acc[MB][WN / 2];
#pragma unroll
            for (int b = 0; b < MB; ++b)
#pragma unroll
                for (int i = 0; i < WN / 2; ++i) acc[b][i] = 0.0f;
            const int prefetch_kt = KT > 4 ? KT - 4 : 0;
            const int prow = m0 + wr0 + tid % 128, pcols = min(WN, N - n0 - wc0);

            for (int kt = 0; kt < KT; ++kt, ++it) {
                if (EPI == 0 && kt == prefetch_kt && tid % 128 < WM && prow < M && pcols > 0)
                    prefetch_l2(C + (size_t)prow * N + n0 + wc0, (unsigned)pcols * 2);  // N % 8 == 0: 16 B
                const int s = it % STAGES;
                const unsigned st = smem + s * STAGE_BYTES;
                mbar_wait(full_bar + 8 * s, (it / STAGES) & 1);
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < BK / 16; ++ks) {
                    const unsigned long long db =
                        make_desc(st + A_BYTES + (wc0 / 64) * B_SLAB_BYTES + ks * 2048, B_SLAB_BYTES, 1024);
#pragma unroll
                    for (int b = 0; b < MB; ++b)
                        wgmma_rows(acc[b], make_desc(st + (wr0 + 64 * b) * 128 + ks * 32, 16, 1024), db);
                }
                wgmma_commit();
                if (EPI == 1 && kt == free_kt && tj >= 1 && tid % 128 == 0) {
                    bulk_wait_read_all();  // issued one k step ago: long done in all but the smallest shapes
                    mbar_arrive(c_free);
                }
                __syncwarp();  // warp 0 converged again before the next warpgroup-wide wgmma instruction
                wgmma_wait<1>();
                if (kt >= 1) release((it - 1) % STAGES);
            }
            wgmma_wait<0>();
            release((it - 1) % STAGES);
#pragma unroll
            for (int b = 0; b < MB; ++b)
#pragma unroll
                for (int i = 0; i < WN / 2; ++i) fence_operand(acc[b][i]);

            if (EPI == 1) {
                // C's tile is in the buffer as (BM / 64) x (BN / 64) boxes of 64 x 64, 128-byte swizzle: row rr of a
                // box at rr * 128 bytes, its 16-byte column k at position k ^ (rr % 8). The thread's pairs: rows
                // 16 warp + lane / 4 (+ 8) of each m64 block (rr % 8 = lane / 4), columns 8 j + 2 (lane % 4).
                mbar_wait(c_full, tj & 1);
                // 32-bit shared addresses: the thread's row 16 warp + lane / 4 of its first box, its 4 bytes within a
                // 16-byte column; the swizzle then only XORs the column's byte offset with (lane / 4) * 16.
                const unsigned base = epi_smem + ((wr0 / 64) * (BN / 64) + wc0 / 64) * C_BOX_BYTES +
                                      (16 * warp + lane / 4) * 128 + 4 * (lane % 4);
                const unsigned xr = (lane / 4) * 16;
#pragma unroll
                for (int b = 0; b < MB; ++b)
#pragma unroll
                    for (int j = 0; j < WN / 8; ++j)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const unsigned addr = base + (b * (BN / 64) + j / 8) * C_BOX_BYTES + h * 1024 +
                                                  (((j % 8) * 16) ^ xr);
                            unsigned word;
                            asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(word) : "r"(addr));
                            __nv_bfloat162 old;
                            *reinterpret_cast<unsigned*>(&old) = word;
                            const float2 o = __bfloat1622float2(old);
                            const __nv_bfloat162 r = __floats2bfloat162_rn(alpha * acc[b][4 * j + 2 * h] + beta * o.x,
                                                                           alpha * acc[b][4 * j + 2 * h + 1] + beta * o.y);
                            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(*reinterpret_cast<const unsigned*>(&r)));
                        }
                fence_proxy_async();
                named_sync(1 + cw, 128);  // the warpgroup's part of the buffer is written
                if (tid % 128 == 0) {
                    const int c_rows = boxes_in(M, m0, BM / 64), c_cols = boxes_in(N, n0, BN / 64);
#pragma unroll
                    for (int b = 0; b < MB; ++b)
#pragma unroll
                        for (int q = 0; q < WN / 64; ++q) {
                            const int bm = wr0 / 64 + b, bn = wc0 / 64 + q;
                            if (bm < c_rows && bn < c_cols)
                                tma_store_2d(&tmC, epi_smem + (bm * (BN / 64) + bn) * C_BOX_BYTES, n0 + 64 * bn,
                                             m0 + 64 * bm);
                        }
                    bulk_commit();
                }
                __syncwarp();
            } else {
                // Step 04's staged epilogue, per m64 block and 32-column chunk (see step 04 for the why).
                float* stage_area = reinterpret_cast<float*>(epi_gen) + (cw * 4 + warp) * (EPI_WARP_BYTES / 4);
                constexpr int CPB = WN / EPI_COLS, CHUNKS = MB * CPB;
                auto load_c = [&](int q, uint4 (&out)[2]) {
                    const int b = q / CPB, c = q % CPB;
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int row = m0 + wr0 + 64 * b + warp * 16 + lane / 4 + 8 * i;
                        const int col = n0 + wc0 + c * EPI_COLS + (lane % 4) * 8;
                        out[i] = (row < M && col < N)
                                     ? __ldg(reinterpret_cast<const uint4*>(C + (size_t)row * N + col))
                                     : make_uint4(0u, 0u, 0u, 0u);
                    }
                };
                uint4 c_in[3][2];
                load_c(0, c_in[0]);
                load_c(1, c_in[1]);
#pragma unroll
                for (int q = 0; q < CHUNKS; ++q) {
                    const int b = q / CPB, c = q % CPB;
                    if (q + 2 < CHUNKS) load_c(q + 2, c_in[(q + 2) % 3]);
#pragma unroll
                    for (int jj = 0; jj < EPI_COLS / 8; ++jj)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int j = c * (EPI_COLS / 8) + jj;
                            const int rl = lane / 4 + 8 * h, cl = 8 * jj + 2 * (lane % 4);
                            *reinterpret_cast<float2*>(stage_area + rl * EPI_PITCH + cl) =
                                make_float2(alpha * acc[b][4 * j + 2 * h], alpha * acc[b][4 * j + 2 * h + 1]);
                        }
                    __syncwarp();
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int rl = lane / 4 + 8 * i;
                        const int row = m0 + wr0 + 64 * b + warp * 16 + rl;
                        const int col = n0 + wc0 + c * EPI_COLS + (lane % 4) * 8;
                        const float* src = stage_area + rl * EPI_PITCH + (lane % 4) * 8;
                        const float4 v0 = *reinterpret_cast<const float4*>(src);
                        const float4 v1 = *reinterpret_cast<const float4*>(src + 4);
                        const float v[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
                        if (row < M && col < N) {
                            uint4 out = c_in[q % 3][i];
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
                    __syncwarp();
                }
            }
        }
        if (EPI == 1 && tid % 128 == 0) bulk_wait_all();  // the last stores are done with shared memory
    }
    cluster_sync();
}

/* @plan
[[tensor_map]]
name = "tmA"
array = "A"
box = [64, ${A_BOX_ROWS}]
swizzle = "128B"
l2_promotion = "256B"

[[tensor_map]]
name = "tmB"
array = "B"
box = [64, 64]
swizzle = "128B"
l2_promotion = "256B"

[[tensor_map]]
name = "tmC"
array = "C"
box = [64, 64]
swizzle = "128B"
l2_promotion = "256B"

[[launch]]
kernel = "bf16_gemm_sweep<${BM}, ${BN}, ${SPLIT}, ${STAGES}, ${CM}, ${CN}, ${GROUP}, ${EPI}>"
grid = ["SMS // (${CM} * ${CN}) * (${CM} * ${CN})"]
block = [384]
cluster = ["${CM} * ${CN}", 1, 1]
shared_bytes = "${STAGES} * (${BM} + ${BN}) * 128 + (1 - ${EPI}) * 18432 + ${EPI} * ${BM} * ${BN} * 2 + 8 * (2 * ${STAGES} + 2) + 1024"
tensor_maps = ["tmA", "tmB", "tmC"]
*/

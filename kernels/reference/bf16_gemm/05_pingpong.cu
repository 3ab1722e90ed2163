// Step 05 - ping-pong consumers: one warpgroup's epilogue runs under the other's main loop
// (capsule 61, "Beating cuBLAS on an H100", its last step).
//     python -m kernels bench kernels/reference/bf16_gemm/05_pingpong.cu --problem bf16_gemm --arch sm_90a
// Where step 04 loses its time: both consumer warpgroups work on the same 128 x 256 tile, so they reach its
// epilogue together, and while they scale, add beta * C and store, no product is issued: the tensor cores idle for
// the whole epilogue of every tile (the producer's prefetch of the next tile does not help with that). At 4096^3 a
// tile's main loop is only K / 64 = 64 k steps, so that idle time is a larger share there than at 8192^3, where
// step 04 is much closer to cuBLAS.
// Change versus 04, one idea: each consumer warpgroup owns whole tiles, every other one of the cluster's sequence,
// and the two take turns at the tensor cores.
//   1. Tiles are 128 x 128 (not 128 x 256): one warpgroup holds a whole tile in its 128 accumulators per thread, as
//      two m64n128k16 products per k16 (rows 0-63 and 64-127 share the B descriptor). A stage is 32 KB (A 16 KB,
//      B 16 KB), so the ring holds 6 stages (7 without the epilogue's staging area). The cluster, the multicast of
//      B (now one 64-column box per CTA), the raster order, the producer and the C prefetch are step 04's.
//   2. Warpgroup 0 takes the cluster's tiles 0, 2, 4, ..., warpgroup 1 tiles 1, 3, 5, ...; the producer does not
//      know which: it fills the ring in tile order, and a consumer's tile i is the ring's k steps i K/64 .. on.
//      Each stage is read by one warpgroup only, so "empty" now counts 4 warps from each of the 2 CTAs.
//   3. Turns: named barriers 1 and 2 (bar.sync / bar.arrive, 256 threads each). A warpgroup waits for its turn,
//      issues all of its tile's products, then hands the turn over (bar.arrive on the other's barrier) before it
//      drains its own products and runs its epilogue. So the epilogue of one tile runs while the other warpgroup
//      feeds the tensor cores, and the products of consecutive tiles queue back to back. Only a tile that has a
//      successor hands the turn over, so every bar.arrive has its bar.sync.
//      The turns are also what keeps the ring's parities sound: a consumer waits on a "full" barrier by parity,
//      which cannot tell fill n from fill n + 2, so it must never wait more than one fill ahead. A warpgroup
//      starts its tile only after the other has waited on every stage of the previous tile, so the fill before the
//      one it waits for has always completed. (Without the turns, warpgroup 1 would wait on tile 1's stages while
//      tile 0's were still filling, and could take tile 0's data for its own.)
// Kept from 04: descriptors and swizzle, the mbarrier pipeline and its running k-step counter, multicast and the
// cluster barriers, the register split (producer 40, consumers 232; ptxas allocates 168 for the whole kernel, and
// the 128 accumulators fit as before) and the staged epilogue with 16-byte loads and stores of C.
// The price: a 128 x 128 tile reads A and B per product twice as often as 128 x 256 did (L2 reads per CTA and k
// step: 16 KB of A + 8 KB of B for half the products of step 04's 32 KB), and the two m64n128 products of a k16
// both read the same 4 KB of B from shared memory (12 KB per 64 x 256 x 16 products instead of 04's 10 KB).
// Plan: 128 x 128 x 64 tiles per warpgroup, 6 stages of 32 KB + 18 KB staging, 384 threads, 1 block per SM,
// clusters of 2 along M, 8 pair rows per raster group, grid SMS // 2 * 2. The template's last argument picks
// the epilogue as in step 04 (true: staged).
// Prediction: the main loop runs as in 04 (the L2 and shared-memory traffic above should stay within what the
// H200 delivers) and the epilogue disappears from the critical path except after a cluster's last tile:
// 100-105% of cuBLAS at 4096^3 and 8192^3.
// Measured: not yet.
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

// Named barriers 1 and 2 order the two consumer warpgroups' main loops (bar 0 is __syncthreads, unused here).
// bar.arrive counts this warp and goes on; bar.sync counts it and waits until `threads` have been counted.
__device__ __forceinline__ void named_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// D(64 x 128, FP32) += A(64 x 16, K-major) * B(16 x 128, N-major); scale-d 1, scale-a/b 1, trans-a 0, trans-b 1.
// Accumulator d[4 j + q] of a thread in warp w of the warpgroup: row 16 w + lane / 4 (+ 8 for q >= 2), column
// 8 j + 2 (lane % 4) + q % 2 (j < 16).
#define WG_D8(i)                                                                                                   \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
        "+f"(d[i + 7])
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

constexpr int BM = 128, BN = 128, BK = 64;  // one consumer warpgroup's tile; BK: one 128-byte swizzle row
constexpr int A_BYTES = BM * BK * 2;         // 16 KB: one TMA box
constexpr int B_SLAB_BYTES = BK * 64 * 2;    // 8 KB: one TMA box of 64 n x 64 k
constexpr int STAGE_BYTES = A_BYTES + BN / 64 * B_SLAB_BYTES;  // 32 KB

constexpr int CLUSTER = 2;  // CTAs per cluster, along M
// Staged epilogue: per consumer warp, 16 rows x 32 columns of FP32, rows padded to 36 floats (as in step 04).
constexpr int EPI_COLS = 32, EPI_PITCH = 36, EPI_WARP_BYTES = 16 * EPI_PITCH * 4;

// Tile pair t (grouped raster over [cdiv(grid_m, 2) pair rows x grid_n columns], GROUP pair rows walked column
// by column) -> this CTA's tile origin. As in step 04, with 128-column tiles.
template <int GROUP>
__device__ __forceinline__ void tile_origin(int t, int pair_rows, int grid_n, unsigned rank, int& m0, int& n0) {
    const int first = t / (GROUP * grid_n) * GROUP, gsize = min(pair_rows - first, GROUP);
    const int pm = first + (t % (GROUP * grid_n)) % gsize;
    n0 = (t % (GROUP * grid_n)) / gsize * BN;
    m0 = (pm * CLUSTER + (int)rank) * BM;
}

// STAGES: ring depth (6 x 32 KB + the staging area fit in 227 KB, 7 x 32 KB only without it); GROUP: pair rows
// per raster group; STAGED: step 04's epilogue through shared memory (true) or straight from the accumulators.
template <int STAGES, int GROUP, bool STAGED>
__global__ void __launch_bounds__(384, 1)
bf16_gemm_pingpong(int M, int N, int K, float alpha, const __nv_bfloat16* __restrict__ A,
                   const __nv_bfloat16* __restrict__ B, float beta, __nv_bfloat16* __restrict__ C,
                   const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB) {
    // STAGES * 32 KB of tiles, STAGES "full" and STAGES "empty" mbarriers, 8 x 2304 bytes of epilogue staging;
    // the plan adds 1 KB of slack for rounding the base up to the swizzle atom's 1024-byte alignment. The layout
    // is the same in both CTAs of a cluster, which multicast relies on.
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned smem = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned full_bar = smem + STAGES * STAGE_BYTES, empty_bar = full_bar + 8 * STAGES;
    const unsigned epi_smem = empty_bar + 8 * STAGES;

    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
    const unsigned rank = cluster_ctarank();

    if (tid == 0) {
        tma_prefetch_map(&tmA);
        tma_prefetch_map(&tmB);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, 1);             // this CTA's producer's arrive.expect_tx
            mbar_init(empty_bar + 8 * s, 4 * CLUSTER);  // the 4 warps of ONE consumer warpgroup, in both CTAs
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    cluster_sync();

    const int KT = (K + BK - 1) / BK;
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pair_rows = (grid_m + CLUSTER - 1) / CLUSTER, pairs = pair_rows * grid_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (wg == 0) {
        // Producer warpgroup: exactly step 04's, over 128 x 128 tiles in the cluster's order; it does not know
        // which consumer takes which tile.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            int it = 0;  // k steps issued so far, over all tiles: stage it % STAGES, fill it / STAGES
            for (int t = cluster_id; t < pairs; t += clusters) {
                int m0, n0;
                tile_origin<GROUP>(t, pair_rows, grid_n, rank, m0, n0);
                const bool a_box = m0 < M;
                const int b_boxes = min(BN / 64, (N - n0 + 63) / 64);
                const unsigned stage_tx = (a_box ? A_BYTES : 0) + b_boxes * B_SLAB_BYTES;
                for (int kt = 0; kt < KT; ++kt, ++it) {
                    const int s = it % STAGES, n = it / STAGES;
                    const unsigned st = smem + s * STAGE_BYTES, bar = full_bar + 8 * s;
                    if (n >= 1) mbar_wait(empty_bar + 8 * s, (n - 1) & 1);
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
        // Consumer warpgroup cw (0 or 1) owns every other tile of the cluster's sequence: tiles i = cw, cw + 2, ...
        // (t = cluster_id + i * clusters), all 128 x 128 of each (128 accumulators per thread, as in step 04).
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int cw = wg - 1;
        auto release = [&](int s) {
            if (lane == 0) {
#pragma unroll
                for (unsigned r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(mapa(empty_bar + 8 * s, r));
            }
        };
        float* stage_area = reinterpret_cast<float*>(smem_raw + (epi_smem - smem_u32(smem_raw))) +
                            (cw * 4 + warp) * (EPI_WARP_BYTES / 4);
        // Tile i's k steps are the ring's k steps i * KT .. i * KT + KT - 1 (the producer's running counter).
        int it0 = cw * KT;
        for (int t = cluster_id + cw * clusters; t < pairs; t += 2 * clusters, it0 += 2 * KT) {
            int m0, n0;
            tile_origin<GROUP>(t, pair_rows, grid_n, rank, m0, n0);

            float acc[2][64];  // [h][.]: rows 64 h .. 64 h + 63 of the tile
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int i = 0; i < 64; ++i) acc[h][i] = 0.0f;
            const int prefetch_kt = KT > 4 ? KT - 4 : 0;
            const int prow = m0 + tid % 128;  // one row of C per thread

            // Our turn at the tensor cores: the other warpgroup has issued all of the previous tile's products
            // (it arrives on our barrier then). The cluster's first tile needs no turn.
            if (t != cluster_id) named_sync(1 + cw, 256);
            for (int kt = 0; kt < KT; ++kt) {
                const int it = it0 + kt;
                if (kt == prefetch_kt && prow < M)
                    prefetch_l2(C + (size_t)prow * N + n0, (unsigned)min(BN, N - n0) * 2);  // N % 8 == 0: 16 B
                const int s = it % STAGES;
                const unsigned st = smem + s * STAGE_BYTES;
                mbar_wait(full_bar + 8 * s, (it / STAGES) & 1);
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < BK / 16; ++ks) {
                    const unsigned long long db = make_desc(st + A_BYTES + ks * 2048, B_SLAB_BYTES, 1024);
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        wgmma_m64n128k16(acc[h], make_desc(st + h * 64 * 128 + ks * 32, 16, 1024), db);
                }
                wgmma_commit();
                wgmma_wait<1>();
                if (kt >= 1) release((it - 1) % STAGES);
            }
            // All of this tile's products are issued: the other warpgroup's turn (if it has a next tile, so that
            // every arrival is matched by a bar.sync), while ours drain and we run the epilogue.
            if (t + clusters < pairs) named_arrive(2 - cw, 256);
            wgmma_wait<0>();
            release((it0 + KT - 1) % STAGES);
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int i = 0; i < 64; ++i) fence_operand(acc[h][i]);

            if (STAGED) {
                // Epilogue, step 04's staged one, over 8 chunks of 16 rows x 32 columns per warp: chunk c covers rows
                // 64 (c / 4) + 16 warp .. + 15 and columns 32 (c % 4) .. + 31 of the tile. Each warp stages alpha *
                // acc as FP32 in its own area, reads back 8 consecutive columns of one row per thread, adds beta * C
                // (8 BF16 in one 16-byte load, two chunks ahead) and stores 16 bytes.
                auto load_c = [&](int c, uint4 (&out)[2]) {
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int row = m0 + 64 * (c / 4) + warp * 16 + lane / 4 + 8 * i;
                        const int col = n0 + (c % 4) * EPI_COLS + (lane % 4) * 8;
                        out[i] = (row < M && col < N) ? __ldg(reinterpret_cast<const uint4*>(C + (size_t)row * N + col))
                                                      : make_uint4(0u, 0u, 0u, 0u);
                    }
                };
                constexpr int CHUNKS = 2 * BN / EPI_COLS;
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
                            const int j = (c % 4) * (EPI_COLS / 8) + jj;
                            const int rl = lane / 4 + 8 * h, cl = 8 * jj + 2 * (lane % 4);
                            *reinterpret_cast<float2*>(stage_area + rl * EPI_PITCH + cl) = make_float2(
                                alpha * acc[c / 4][4 * j + 2 * h], alpha * acc[c / 4][4 * j + 2 * h + 1]);
                        }
                    __syncwarp();
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int rl = lane / 4 + 8 * i;
                        const int row = m0 + 64 * (c / 4) + warp * 16 + rl;
                        const int col = n0 + (c % 4) * EPI_COLS + (lane % 4) * 8;
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
                // Step 04's direct epilogue: one column pair per 4-byte access (N % 8 == 0: a pair is wholly inside
                // or outside), the loads of 8 column pairs x 2 rows first, then their stores.
#pragma unroll
                for (int hh = 0; hh < 2; ++hh)
#pragma unroll
                    for (int jb = 0; jb < BN / 8; jb += 8) {
                        const int row0 = m0 + 64 * hh + warp * 16 + lane / 4, colq = n0 + (lane % 4) * 2;
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
                                *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
                                    __floats2bfloat162_rn(alpha * acc[hh][4 * j + 2 * h] + beta * o.x,
                                                          alpha * acc[hh][4 * j + 2 * h + 1] + beta * o.y);
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
kernel = "bf16_gemm_pingpong<6, 8, true>"
grid = ["SMS // 2 * 2"]
block = [384]
cluster = [2, 1, 1]
shared_bytes = "6 * (128 + 128) * 64 * 2 + 2 * 6 * 8 + 8 * 16 * 36 * 4 + 1024"
tensor_maps = ["tmA", "tmB"]
*/

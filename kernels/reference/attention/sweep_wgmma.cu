// Sweep template over rung 04 (04_wgmma_tma.cu): one kernel, its ideas as compile-time switches, judged by
//     python -m kernels.tools.sweep kernels/reference/attention/sweep.toml --time-budget 1
// (placeholders: $${NAME}, filled from sweep.toml; the header of 04 explains the base design). What varies:
//   BM             query rows per block, 64 per consumer warpgroup (NWG = 1, 2, 3): 64, 128 or 192 rows. More rows per block
//                  means each K/V tile read from L2 feeds more rows, but fewer registers each (setmaxnreg below).
//   BN             keys per K/V tile (64, 96, 128, 176): fewer, longer tiles halve the per-tile fixed costs (two
//                  row reductions by shuffle, barrier waits, O's rescale) at the price of more registers (S is
//                  BN / 2 floats a thread, P BN / 4 words) and a ragged last tile (4096 = 23.3 x 176).
//   STAGES         depth of the K/V ring (2 or 3).
//   SPLIT_RELEASE  K and V of a stage are released separately: K as soon as Q K^T has landed, V after P V. With
//                  the overlap (tile t's Q K^T beside t - 1's P V), a joint release comes a tile late and with 2
//                  stages the next K waits (rung 04's note); released apart, 2 stages suffice and free 64 KB
//                  (what FlashAttention-3 does: separate K and V pipelines).
//   PINGPONG       the consumer warpgroups take turns to issue their products (named barriers, in a ring), so
//                  one warpgroup's exponentials run while the other's GEMMs own the tensor cores (FA3's
//                  inter-warpgroup schedule); rung 04 tried it at BN 128 and 3 stages and saw no gain.
//   PRODUCER_REGS / CONSUMER_REGS  setmaxnreg (0: not used, every thread keeps the launch bound's share).
//   MIN_BLOCKS     blocks per SM in __launch_bounds__ (2 for the 64-row block: two blocks interleave).
//   EXP_FOLD       1: max over raw scores, exp2(s * scale_log2 - m) as one FFMA into ex2.approx (rung 04);
//                  0: scores multiplied first, max, then exp2f(s - m) (the version before rung 04's item 5).
//   ORDER          0: blocks numbered head-major (all query tiles of one head, then the next: K/V of a head stay
//                  in L2), heaviest causal tile of each head first (rung 04's grid); 1: heads fastest (each query
//                  tile across all heads, heaviest of every head first: longest-job-first across the whole grid,
//                  but K/V of ~all heads in flight at once: 128 MB at 4 x 16 x 4096, more than L2).
//   PERSISTENT     one block per SM (grid min(SMS, work)) walks work items blockIdx.x, + gridDim.x, ...: the
//                  producer loads the next item's Q (once consumers release it after their last Q K^T) and its
//                  first K/V tiles while the consumers finish P V and write O, so each item's start-up latency
//                  (a Q and a K copy, ~1-2 us against ~54 us an item) is hidden; the ring continues across items.
// With ORDER 0 and PERSISTENT 0 the grid is 1-D in the same order as rung 04's 2-D grid (query tile fastest).
#include <cuda_bf16.h>

struct alignas(64) CUtensorMap_st {
    unsigned long long opaque[16];
};
typedef CUtensorMap_st CUtensorMap;

constexpr int BM = ${BM};      // query rows per block: 64 per consumer warpgroup
constexpr int NWG = BM / 64;
constexpr int BN = ${BN};      // keys per K/V tile
constexpr int STAGES = ${STAGES};
constexpr bool OVERLAP = ${OVERLAP} != 0;
constexpr bool SPLIT_RELEASE = ${SPLIT_RELEASE} != 0;
constexpr bool PINGPONG = ${PINGPONG} != 0 && NWG > 1;
constexpr int PRODUCER_REGS = ${PRODUCER_REGS};
constexpr int CONSUMER_REGS = ${CONSUMER_REGS};
constexpr int MIN_BLOCKS = ${MIN_BLOCKS};
constexpr bool EXP_FOLD = ${EXP_FOLD} != 0;
constexpr int ORDER = ${ORDER};
constexpr bool PERSISTENT = ${PERSISTENT} != 0;
constexpr int CONSUMER_WARPS = 4 * NWG;
constexpr int THREADS = 32 * CONSUMER_WARPS + 128;  // + the producer warpgroup
constexpr unsigned FULL_MASK = 0xffffffffu;
static_assert(BM % 64 == 0 && BN % 16 == 0 && BN <= 256 && BM <= 256, "wgmma n and TMA box limits");
static_assert(!OVERLAP || STAGES >= 3 || SPLIT_RELEASE, "overlap with 2 joint-release stages stalls every tile");

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarrier -----------------------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
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
// Named barriers 1 .. NWG (0 is __syncthreads'): warpgroup w waits on w + 1 before it issues, then lets the next
// warpgroup in the ring go (256 threads: the 128 that wait and the 128 that arrived).
__device__ __forceinline__ void named_sync(int id) {
    asm volatile("bar.sync %0, 256;\n" ::"r"(id) : "memory");
}
__device__ __forceinline__ void named_arrive(int id) {
    asm volatile("bar.arrive %0, 256;\n" ::"r"(id) : "memory");
}

// ---- TMA: a 4-D box (c0 = head_dim column, c1 = row of seq, c2 = head, c3 = batch) into shared memory ----------
__device__ __forceinline__ void tma_load_4d(unsigned dst, const CUtensorMap* map, int c0, int c1, int c2, int c3,
                                            unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
        : "memory");
}

// ---- wgmma --------------------------------------------------------------------------------------------------
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void fence_array(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}

#define WG_D8(i)                                                                                                   \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
        "+f"(d[i + 7])
#define WG_REGS32                                                                                                  \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
    "%24, %25, %26, %27, %28, %29, %30, %31"
#define WG_REGS64_TAIL                                                                                             \
    ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "    \
    "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

// S(64 x N) (+)= Q(64 x 16, K-major, shared) * K^T(16 x N, K-major, shared), N = BN; accumulate = 0 zeroes S.
// Accumulator d[4 j + q] of a thread in warp w of the warpgroup: row 16 w + lane / 4 (+ 8 for q >= 2), column
// 8 j + 2 (lane % 4) + q % 2.
template <int N>
__device__ __forceinline__ void wgmma_qk(float (&d)[N / 2], unsigned long long da, unsigned long long db,
                                         int accumulate);
template <>
__device__ __forceinline__ void wgmma_qk<64>(float (&d)[32], unsigned long long da, unsigned long long db,
                                             int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24)
        : "l"(da), "l"(db), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_qk<96>(float (&d)[48], unsigned long long da, unsigned long long db,
                                             int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
        "}, %48, %49, p, 1, 1, 0, 0;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40)
        : "l"(da), "l"(db), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_qk<128>(float (&d)[64], unsigned long long da, unsigned long long db,
                                             int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56)
        : "l"(da), "l"(db), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_qk<176>(float (&d)[88], unsigned long long da, unsigned long long db,
                                             int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87"
        "}, %88, %89, p, 1, 1, 0, 0;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56), WG_D8(64), WG_D8(72), WG_D8(80)
        : "l"(da), "l"(db), "r"(accumulate));
}

// O(64 x 128) += P(64 x 16, BF16 pairs in registers) * V(16 x 128, N-major in shared memory: trans-b = 1).
__device__ __forceinline__ void wgmma_pv(float (&d)[64], const unsigned (&a)[4], unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" WG_REGS32 WG_REGS64_TAIL
        "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}
// The same at head_dim 64: O(64 x 64).
__device__ __forceinline__ void wgmma_pv(float (&d)[32], const unsigned (&a)[4], unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" WG_REGS32 "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

// 2^x on the special function unit (ex2.approx, about 2 ulp; 2^-inf = +0).
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);  // lo in the low half: the lower column
    return *reinterpret_cast<const unsigned*>(&pair);
}

// Shared memory from a 1024-byte aligned base (the 128-byte swizzle's atom): Q (D / 64 boxes of BM rows x 64
// columns), then STAGES x (K, V) (D / 64 boxes of BN rows each), then the mbarriers. BM and BN are multiples of
// 8, so every box starts on 1024 bytes.
template <int D>
struct Layout {
    static constexpr unsigned QBOX = BM * 128, KVBOX = BN * 128;
    static constexpr unsigned QTILE = D / 64 * QBOX, KVTILE = D / 64 * KVBOX;
    static constexpr unsigned Q = 0, K0 = QTILE, BARS = K0 + STAGES * 2 * KVTILE;
    __device__ static unsigned k(int s) { return K0 + s * 2 * KVTILE; }
    __device__ static unsigned v(int s) { return K0 + s * 2 * KVTILE + KVTILE; }
};
// mbarriers: q_full, q_empty, then per stage k_full, v_full, k_empty, v_empty (k_empty unused without
// SPLIT_RELEASE: v_empty then frees the whole stage, as rung 04's one "empty"): 2 + 4 STAGES of 8 bytes.

// Work item -> (query block, batch * heads index).
__device__ __forceinline__ void decode_item(int item, int q_tiles, int bh_count, int causal, int& q_block, int& bh) {
    int qi;
    if (ORDER == 0) {
        bh = item / q_tiles;
        qi = item - bh * q_tiles;
    } else {
        qi = item / bh_count;
        bh = item - qi * bh_count;
    }
    q_block = causal ? q_tiles - 1 - qi : qi;  // causal: the heaviest blocks first
}

template <int D>
__device__ void attention_sweep(int batch, int heads, int seq, int causal, __nv_bfloat16* O, unsigned base,
                                const CUtensorMap* tmQ, const CUtensorMap* tmK, const CUtensorMap* tmV) {
    using L = Layout<D>;
    const unsigned bars = base + L::BARS;
    const unsigned q_full = bars, q_empty = bars + 8;
    auto k_full = [&](int s) { return bars + 8 * (2 + s); };
    auto v_full = [&](int s) { return bars + 8 * (2 + STAGES + s); };
    auto k_empty = [&](int s) { return bars + 8 * (2 + 2 * STAGES + s); };
    auto v_empty = [&](int s) { return bars + 8 * (2 + 3 * STAGES + s); };

    const int q_tiles = (seq + BM - 1) / BM, bh_count = batch * heads, n_items = q_tiles * bh_count;
    const int step = PERSISTENT ? gridDim.x : n_items;  // not persistent: one item per block
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    if (warp >= CONSUMER_WARPS) {  // the producer warpgroup: one lane issues every copy
        if (PRODUCER_REGS > 0) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS) : "memory");
        if (warp == CONSUMER_WARPS && lane == 0) {
            int it = 0;  // position in the K/V ring, continued across items
            int n = 0;
            for (int item = blockIdx.x; item < n_items; item += step, ++n) {
                int q_block, bh;
                decode_item(item, q_tiles, bh_count, causal, q_block, bh);
                const int q0 = q_block * BM, head = bh % heads, b = bh / heads;
                const int kv_end = causal ? min(seq, q0 + BM) : seq;
                const int tiles = (kv_end + BN - 1) / BN;
                if (n > 0) mbar_wait(q_empty, (n - 1) & 1);  // consumers' last Q K^T of the previous item done
                mbar_arrive_expect_tx(q_full, L::QTILE);
                for (int c = 0; c < D / 64; ++c) tma_load_4d(base + L::Q + c * L::QBOX, tmQ, 64 * c, q0, head, b, q_full);
                for (int t = 0; t < tiles; ++t, ++it) {
                    const int s = it % STAGES, round = it / STAGES;
                    if (it >= STAGES) mbar_wait(SPLIT_RELEASE ? k_empty(s) : v_empty(s), (round - 1) & 1);
                    mbar_arrive_expect_tx(k_full(s), L::KVTILE);
                    for (int c = 0; c < D / 64; ++c)
                        tma_load_4d(base + L::k(s) + c * L::KVBOX, tmK, 64 * c, t * BN, head, b, k_full(s));
                    if (SPLIT_RELEASE && it >= STAGES) mbar_wait(v_empty(s), (round - 1) & 1);
                    mbar_arrive_expect_tx(v_full(s), L::KVTILE);
                    for (int c = 0; c < D / 64; ++c)
                        tma_load_4d(base + L::v(s) + c * L::KVBOX, tmV, 64 * c, t * BN, head, b, v_full(s));
                }
            }
        }
        return;
    }

    // A consumer warpgroup: 64 query rows, wg * 64 into the block's BM.
    if (CONSUMER_REGS > 0) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS) : "memory");
    const int wg = warp / 4, g = lane / 4, t4 = lane % 4;
    const float scale_log2 = rsqrtf((float)D) * 1.4426950408889634f;
    float o[D / 2];
    float m[2], l[2];       // running maxima of the lane's two rows (log2 units), this lane's part of their sums
    float sc[BN / 2];       // S of one tile, then its exponentials
    unsigned p[BN / 16][4];  // P as wgmma's A operand: k step kk holds keys 16 kk .. 16 kk + 15
    float alpha[2];         // how much the running maxima grew, as a factor on O and l
    int row0 = 0, it = 0;

    // Tile t of the current item sits at ring position it + t.
    auto wait_k = [&](int t) { mbar_wait(k_full((it + t) % STAGES), ((it + t) / STAGES) & 1); };
    auto wait_v = [&](int t) { mbar_wait(v_full((it + t) % STAGES), ((it + t) / STAGES) & 1); };
    // Ping-pong: the last warpgroup lets the first one issue first.
    if (PINGPONG && wg == NWG - 1) named_arrive(1);
    // Ping-pong takes its turn once the data it issues on has landed: -1 = no such tile.
    auto turn_begin = [&](int k_tile, int v_tile) {
        if (PINGPONG) {
            if (k_tile >= 0) wait_k(k_tile);
            if (v_tile >= 0) wait_v(v_tile);
            named_sync(1 + wg);
        }
    };
    auto turn_end = [&]() {
        if (PINGPONG) named_arrive(1 + (wg + 1) % NWG);
    };

    // S = Q K^T of tile t, issued (not waited for).
    auto issue_qk = [&](int t) {
        const int r = it + t, s = r % STAGES;
        if (!PINGPONG) wait_k(t);  // ping-pong waits before taking its turn (a turn is not held waiting for data)
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < D / 16; ++ks) {
            const unsigned long long da =
                make_desc(base + L::Q + (ks / 4) * L::QBOX + wg * 64 * 128 + (ks % 4) * 32, 16, 1024);
            const unsigned long long db = make_desc(base + L::k(s) + (ks / 4) * L::KVBOX + (ks % 4) * 32, 16, 1024);
            wgmma_qk<BN>(sc, da, db, ks);
        }
        wgmma_commit();
    };
    // O += P V of tile t, issued (not waited for).
    auto issue_pv = [&](int t) {
        const int r = it + t, s = r % STAGES;
        if (!PINGPONG) wait_v(t);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) wgmma_pv(o, p[kk], make_desc(base + L::v(s) + kk * 2048, L::KVBOX, 1024));
        wgmma_commit();
    };
    auto arrive_warp = [&](unsigned bar) {
        __syncwarp();
        if (lane == 0) mbar_arrive(bar);
    };
    auto release_k = [&](int t) {  // Q K^T of tile t has landed: its K may be overwritten
        if (SPLIT_RELEASE) arrive_warp(k_empty((it + t) % STAGES));
    };
    auto release_v = [&](int t) {  // P V of tile t is done: its V (and, without the split, its K) too
        arrive_warp(v_empty((it + t) % STAGES));
    };
    // The online softmax of tile t's scores, in place: masks, new maxima, exponentials, the sums.
    auto softmax = [&](int t) {
        const int k0 = t * BN;
        if (k0 + BN > seq || (causal && k0 + BN - 1 > row0)) {  // masks only on diagonal tiles and seq's
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) {
                const int row = row0 + (i % 4 / 2) * 8, key = k0 + 8 * (i / 4) + 2 * t4 + i % 2;
                if (key >= seq || (causal && key > row)) sc[i] = neg_inf();
            }
        }
        if (!EXP_FOLD) {
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) sc[i] *= scale_log2;
        }
        float tile_max[2] = {neg_inf(), neg_inf()};  // of the raw scores when folded: the scale is positive
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) tile_max[i % 4 / 2] = fmaxf(tile_max[i % 4 / 2], sc[i]);
        float shift[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(FULL_MASK, tile_max[h], 1));
            tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(FULL_MASK, tile_max[h], 2));
            const float m_new = fmaxf(m[h], EXP_FOLD ? tile_max[h] * scale_log2 : tile_max[h]);
            shift[h] = m_new == neg_inf() ? 0.0f : m_new;  // every key so far masked: exp2(-inf) = 0, not NaN
            alpha[h] = EXP_FOLD ? fast_exp2(m[h] - shift[h]) : exp2f(m[h] - shift[h]);
            m[h] = m_new;
            l[h] *= alpha[h];
        }
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) {
            if (EXP_FOLD)
                sc[i] = fast_exp2(fmaf(sc[i], scale_log2, -shift[i % 4 / 2]));  // one FFMA and one MUFU per score
            else
                sc[i] = exp2f(sc[i] - shift[i % 4 / 2]);
            l[i % 4 / 2] += sc[i];  // FP32, before P is rounded to BF16
        }
    };
    auto rescale_o_and_pack_p = [&]() {
#pragma unroll
        for (int i = 0; i < D / 2; i += 4) {
            o[i] *= alpha[0];
            o[i + 1] *= alpha[0];
            o[i + 2] *= alpha[1];
            o[i + 3] *= alpha[1];
        }
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            p[j / 2][2 * (j % 2)] = pack_bf16(sc[4 * j], sc[4 * j + 1]);
            p[j / 2][2 * (j % 2) + 1] = pack_bf16(sc[4 * j + 2], sc[4 * j + 3]);
        }
    };

    int n = 0;
    for (int item = blockIdx.x; item < n_items; item += step, ++n) {
        int q_block, bh;
        decode_item(item, q_tiles, bh_count, causal, q_block, bh);
        const int q0 = q_block * BM, head = bh % heads, b = bh / heads;
        const int kv_end = causal ? min(seq, q0 + BM) : seq;
        const int tiles = (kv_end + BN - 1) / BN;
        row0 = q0 + wg * 64 + (warp % 4) * 16 + g;  // this lane's rows: row0 and row0 + 8
#pragma unroll
        for (int i = 0; i < D / 2; ++i) o[i] = 0.0f;
        m[0] = m[1] = neg_inf();
        l[0] = l[1] = 0.0f;

        mbar_wait(q_full, n & 1);
        if (OVERLAP) {
            // Tile t's Q K^T and tile t - 1's P V are in flight together; the exponentials of tile t run while
            // the tensor cores finish P V. P is packed only once P V of t - 1 is done with its registers.
            turn_begin(0, -1);
            issue_qk(0);
            turn_end();
            wgmma_wait<0>();
            fence_array(sc);
            release_k(0);
            softmax(0);
            rescale_o_and_pack_p();
            for (int t = 1; t < tiles; ++t) {
                turn_begin(t, t - 1);
                issue_qk(t);
                issue_pv(t - 1);
                turn_end();
                wgmma_wait<1>();  // Q K^T of tile t has landed
                fence_array(sc);
                release_k(t);
                softmax(t);
                wgmma_wait<0>();  // P V of tile t - 1 too
                fence_array(o);
                release_v(t - 1);
                rescale_o_and_pack_p();
            }
            if (PERSISTENT) arrive_warp(q_empty);  // every Q K^T of this item has landed
            turn_begin(-1, tiles - 1);
            issue_pv(tiles - 1);
            turn_end();
            wgmma_wait<0>();
            fence_array(o);
            release_v(tiles - 1);
        } else {
            for (int t = 0; t < tiles; ++t) {
                turn_begin(t, -1);
                issue_qk(t);
                turn_end();
                wgmma_wait<0>();
                fence_array(sc);
                release_k(t);
                if (PERSISTENT && t == tiles - 1) arrive_warp(q_empty);
                softmax(t);
                rescale_o_and_pack_p();
                turn_begin(-1, t);
                issue_pv(t);
                turn_end();
                wgmma_wait<0>();
                fence_array(o);
                release_v(t);
            }
        }
        it += tiles;

#pragma unroll
        for (int h = 0; h < 2; ++h) {
            l[h] += __shfl_xor_sync(FULL_MASK, l[h], 1);
            l[h] += __shfl_xor_sync(FULL_MASK, l[h], 2);
            l[h] = 1.0f / l[h];  // l >= 1: the row's maximum contributes 2^0
        }
        const size_t head_offset = ((size_t)b * heads + head) * seq * D;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int i = row0 + 8 * h;
            if (i >= seq) continue;
            __nv_bfloat16* out = O + head_offset + (size_t)i * D + 2 * t4;
#pragma unroll
            for (int j = 0; j < D / 8; ++j) {
                *reinterpret_cast<__nv_bfloat162*>(out + 8 * j) =
                    __floats2bfloat162_rn(o[4 * j + 2 * h] * l[h], o[4 * j + 2 * h + 1] * l[h]);
            }
        }
    }
    // Ping-pong: the first warpgroup takes the last warpgroup's final "go", so no arrival is left pending.
    if (PINGPONG && wg == 0) named_sync(1);
}

// Grid: 1-D over work items (or min(SMS, items) when persistent); S (the workspace) is not used.
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_sweep_kernel(int batch, int heads, int seq, int head_dim, int causal, const __nv_bfloat16* Q,
                       const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O, float* S,
                       const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                       const __grid_constant__ CUtensorMap tmV) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned bars = base + (head_dim == 64 ? Layout<64>::BARS : Layout<128>::BARS);
    if (threadIdx.x == 0) {
        mbar_init(bars, 1);                   // q_full: the producer's arrive plus the copy's bytes
        mbar_init(bars + 8, CONSUMER_WARPS);  // q_empty
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(bars + 8 * (2 + s), 1);
            mbar_init(bars + 8 * (2 + STAGES + s), 1);
            mbar_init(bars + 8 * (2 + 2 * STAGES + s), CONSUMER_WARPS);
            mbar_init(bars + 8 * (2 + 3 * STAGES + s), CONSUMER_WARPS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (head_dim == 64) {
        attention_sweep<64>(batch, heads, seq, causal, O, base, &tmQ, &tmK, &tmV);
    } else {
        attention_sweep<128>(batch, heads, seq, causal, O, base, &tmQ, &tmK, &tmV);
    }
}

/* @plan
[[tensor_map]]
name = "tmQ"
array = "Q"
box = [64, ${BM}, 1, 1]
swizzle = "128B"
l2_promotion = "256B"

[[tensor_map]]
name = "tmK"
array = "K"
box = [64, ${BN}, 1, 1]
swizzle = "128B"
l2_promotion = "256B"

[[tensor_map]]
name = "tmV"
array = "V"
box = [64, ${BN}, 1, 1]
swizzle = "128B"
l2_promotion = "256B"

[[launch]]
kernel = "attention_sweep_kernel"
# persistent: min(blocks per SM x SMS, items); otherwise one block per item
grid = ["min(${PERSISTENT} * ${MIN_BLOCKS} * SMS + (1 - ${PERSISTENT}) * 2147483647, cdiv(seq, ${BM}) * batch * heads)"]
block = ["2 * ${BM} + 128"]
shared_bytes = "(${BM} + 2 * ${STAGES} * ${BN}) * head_dim * 2 + 8 * (2 + 4 * ${STAGES}) + 1024"
tensor_maps = ["tmQ", "tmK", "tmV"]
*/

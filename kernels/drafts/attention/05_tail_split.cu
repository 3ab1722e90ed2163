// Draft (not yet run on a GPU; kernels/drafts/README.md) of step 05 - Hopper: step 04 with its last wave split along the keys (a "stream-K" tail) and a combine kernel.
//     python -m kernels bench kernels/drafts/attention/05_tail_split.cu --problem attention --arch sm_90a
// Why: 04's non-causal grid at 1 x 8 x 16384 is 1024 equal blocks of 128 query rows on 132 SMs, 7.76 waves run in
// 8: in the last wave 100 SMs work while 32 idle, and 04 reaches 98.6% of cuDNN. The main loop, its pipeline and
// its softmax are 04's; what changes is which keys of which rows a block takes, three things:
//   1. The grid is [SMS, cdiv(units, SMS)], a unit being one of 04's blocks (128 query rows of one batch and head).
//      Blocks start in linear order lin = blockIdx.y * SMS + blockIdx.x (gridDim.x is SMS: the kernel learns it
//      there), so the last row of the grid runs last. Causal shapes, and every non-causal row but the last, take
//      one unit per block in 04's order (causal: within each head the heaviest first); lin >= units exits.
//   2. Non-causal with R = units % SMS > 0: the last row's SMS blocks share the last R units' R x T key tiles
//      (T = cdiv(seq, 128)), flattened unit after unit, in contiguous ranges of L = cdiv(R T, SMS) tiles: block c
//      takes [c L, min((c + 1) L, R T)) and exits if that is empty. Each SM of the last wave then runs L tiles
//      instead of T. As R < SMS, L <= T: a range is the end of one unit and/or the start of the next, at most two
//      segments, run one after the other by the same producer and consumers. The K/V ring's stage and phase
//      counters run on across them; the Q barrier's second phase brings the second unit's Q, which the producer
//      may load only once the 8 consumer warps have arrived on a "Q empty" mbarrier (each does after its last
//      Q K^T of the first segment has completed: nothing reads Q after that).
//   3. A segment covering its whole unit writes O as in 04. A partial one writes, per row, its unnormalised FP32 O,
//      its maximum m and its sum l to slot 2 c + k of the workspace S (k: the block's first or second segment;
//      a slot is 128 rows x head_dim floats of O, then 128 m, then 128 l). In the kernel's own base-2 convention,
//      with x_ij = (Q_i . K_j) * log2(e) / sqrt(head_dim) over the segment's keys j < seq:
//          m_i = max_j x_ij,   l_i = sum_j 2^(x_ij - m_i) (FP32, before P's rounding),
//          O_i = sum_j bf16(2^(x_ij - m_i)) V_j (FP32).
//      The second launch merges each unit split over blocks c0 .. c1 (c0 = r T / L, c1 = ((r + 1) T - 1) / L):
//      m = max m_c, w_c = 2^(m_c - m), O = sum w_c O_c / sum w_c l_c, rounded to BF16 once. The split needs
//      2 SMS x 128 x (head_dim + 2) floats of the workspace; shapes whose S is smaller (the small tests) keep 04's
//      schedule, both kernels testing the same predicate (tail_split_allowed).
// Plan: attention grid [SMS, cdiv(units, SMS)], 384 threads, 1 block per SM, 04's shared memory plus one mbarrier;
// combine grid [SMS (1 when causal: it has nothing to do), 16], 256 threads: block x is tail unit r (gridDim.x
// tells it SMS), block y a group of 8 rows, a warp per row with its lanes along head_dim.
// Prediction: at 1 x 8 x 16384 non-causal R = 100, T = 128, L = 97: the last wave takes 97/128 of a full one, 7.76
// waves' time instead of 8, about 3% less than 04, minus the second segment's Q load and the partial epilogues
// (about a tile's time per tail block) and the combine (its own launch, and 15 MB of partial results written by the
// tail and read back from L2: a few us against ~1.6 ms): about 101% of cuDNN. At 4 x 16 x 4096, R = 68, T = 32,
// L = 17: 15.53 waves instead of 16, also ~3%.
// Causal: unchanged but for the combine's empty launch.
// Measured: to be measured on the H200.
#include <cuda_bf16.h>

// NVRTC has no <cuda.h>: the tensor map is 128 opaque bytes, 64-byte aligned, passed by value as a
// __grid_constant__ parameter (the TMA reads it from the parameter space through its generic address).
struct alignas(64) CUtensorMap_st {
    unsigned long long opaque[16];
};
typedef CUtensorMap_st CUtensorMap;

constexpr int BM = 128;  // query rows per block: 64 per consumer warpgroup
constexpr int BN = 128;  // keys per K/V tile
constexpr int CONSUMER_WARPS = 8;
constexpr int THREADS = 32 * CONSUMER_WARPS + 128;  // + the producer warpgroup
constexpr unsigned FULL_MASK = 0xffffffffu;

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

// Shared-memory matrix descriptor: start address, leading and stride byte offsets (all >> 4), 128-byte swizzle.
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

// Accumulator d[4 j + q] of a thread in warp w of the warpgroup: row 16 w + lane / 4 (+ 8 for q >= 2), column
// 8 j + 2 (lane % 4) + q % 2.
// S(64 x 128) (+)= Q(64 x 16, K-major, shared) * K^T(16 x 128, K-major, shared); accumulate = 0 zeroes S first.
__device__ __forceinline__ void wgmma_qk(float (&d)[64], unsigned long long da, unsigned long long db,
                                         int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" WG_REGS32 WG_REGS64_TAIL
        "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56)
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

// 2^x on the special function unit (ex2.approx, about 2 ulp; 2^-inf = +0). exp2f would add range handling
// around the same instruction.
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);  // lo in the low half: the lower column
    return *reinterpret_cast<const unsigned*>(&pair);
}

// Shared memory, from a 1024-byte aligned base (the 128-byte swizzle's atom): Q, then STAGES x (K, V), then the
// mbarriers. Each tile is D / 64 boxes of 128 rows x 64 columns (16 KB), one after the other.
template <int D>
struct Layout {
    static constexpr unsigned BOX = 128 * 64 * 2, TILE = D / 64 * BOX;
    static constexpr unsigned Q = 0, K0 = TILE;
    __device__ static unsigned k(int s) { return K0 + s * 2 * TILE; }
    __device__ static unsigned v(int s) { return K0 + s * 2 * TILE + TILE; }
};

// ---- the schedule: which key tiles of which unit each block runs --------------------------------------------
// A unit is 04's block: 128 query rows of one (batch, head). Units are numbered as 04's grid started them.
struct Segment {
    int q0, head, batch;  // the unit's first query row and its batch and head
    int t_begin, t_end;   // the key tiles it runs, [t_begin, t_end)
    int slot;             // -1: the whole unit, O written normalised; otherwise the workspace slot of the partial one
};

// The tail split's partial results need 2 slots per block of the last row, 128 x (head_dim + 2) floats each.
// The combine kernel tests the same.
__device__ __forceinline__ bool tail_split_allowed(int batch, int heads, int seq, int head_dim, int sms) {
    return (size_t)batch * heads * seq * seq >= (size_t)2 * sms * BM * (head_dim + 2);
}

__device__ __forceinline__ Segment unit_segment(int unit, int q_tiles, int heads, int seq, int causal, int t_begin,
                                                int t_end, int slot) {
    const int q_block = causal ? q_tiles - 1 - unit % q_tiles : unit % q_tiles;  // causal: the heaviest first
    const int bh = unit / q_tiles;
    Segment s;
    s.q0 = q_block * BM;
    s.head = bh % heads;
    s.batch = bh / heads;
    s.t_begin = t_begin;
    // t_end = -1: all the unit's key tiles (causal: up to its diagonal)
    s.t_end = t_end >= 0 ? t_end : ((causal ? min(seq, s.q0 + BM) : seq) + BN - 1) / BN;
    s.slot = slot;
    return s;
}

// This block's segments (0, 1 or 2) on grid [SMS, cdiv(units, SMS)]. The same for every thread of the block.
__device__ int block_segments(int batch, int heads, int seq, int head_dim, int causal, Segment& s0, Segment& s1) {
    const int sms = gridDim.x, q_tiles = (seq + BM - 1) / BM, units = q_tiles * batch * heads;
    const int rem = units % sms;  // R: the units of the last, partial wave
    if (!causal && rem > 0 && blockIdx.y == gridDim.y - 1 && tail_split_allowed(batch, heads, seq, head_dim, sms)) {
        // The last R units' R x T key tiles, unit after unit; block c takes tiles [c L, min((c + 1) L, R T)).
        const int T = q_tiles, total = rem * T, len = (total + sms - 1) / sms;
        const int c = blockIdx.x, begin = c * len, end = min(begin + len, total);
        if (begin >= end) return 0;
        const int r = begin / T, first = units - rem + r;
        const int t0 = begin - r * T, t1 = min(T, end - r * T);
        s0 = unit_segment(first, q_tiles, heads, seq, 0, t0, t1, t0 == 0 && t1 == T ? -1 : 2 * c);
        if (end <= (r + 1) * T) return 1;
        const int t2 = end - (r + 1) * T;  // < len <= T: the next unit's start, always partial
        s1 = unit_segment(first + 1, q_tiles, heads, seq, 0, 0, t2, t2 == T ? -1 : 2 * c + 1);
        return 2;
    }
    const int lin = blockIdx.y * sms + blockIdx.x;
    if (lin >= units) return 0;
    s0 = unit_segment(lin, q_tiles, heads, seq, causal, 0, -1, -1);
    return 1;
}

template <int D, int STAGES, bool OVERLAP>
__device__ void attention_wgmma(int heads, int seq, int causal, __nv_bfloat16* O, float* S, unsigned base,
                                const CUtensorMap* tmQ, const CUtensorMap* tmK, const CUtensorMap* tmV,
                                int segments, Segment seg0, Segment seg1) {
    using L = Layout<D>;
    const unsigned bars = base + L::k(STAGES);
    const unsigned q_full = bars;
    auto k_full = [&](int s) { return bars + 8 * (1 + s); };
    auto v_full = [&](int s) { return bars + 8 * (1 + STAGES + s); };
    auto empty = [&](int s) { return bars + 8 * (1 + 2 * STAGES + s); };
    const unsigned q_empty = bars + 8 * (1 + 3 * STAGES);  // the first segment's Q is no longer read
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    if (warp >= CONSUMER_WARPS) {  // the producer warpgroup: one lane issues every copy
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
        if (warp == CONSUMER_WARPS && lane == 0) {
            int it = 0;  // K/V tiles loaded so far, over both segments: the ring's stage and phase
            for (int k = 0; k < segments; ++k) {
                const Segment sg = k == 0 ? seg0 : seg1;  // by value: a selected reference would live in memory
                if (k > 0) mbar_wait(q_empty, 0);  // both consumer warpgroups are done with the first Q
                mbar_arrive_expect_tx(q_full, L::TILE);
                for (int b = 0; b < D / 64; ++b)
                    tma_load_4d(base + L::Q + b * L::BOX, tmQ, 64 * b, sg.q0, sg.head, sg.batch, q_full);
                for (int t = sg.t_begin; t < sg.t_end; ++t, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(empty(s), (it / STAGES - 1) & 1);
                    mbar_arrive_expect_tx(k_full(s), L::TILE);
                    for (int b = 0; b < D / 64; ++b)
                        tma_load_4d(base + L::k(s) + b * L::BOX, tmK, 64 * b, t * BN, sg.head, sg.batch, k_full(s));
                    mbar_arrive_expect_tx(v_full(s), L::TILE);
                    for (int b = 0; b < D / 64; ++b)
                        tma_load_4d(base + L::v(s) + b * L::BOX, tmV, 64 * b, t * BN, sg.head, sg.batch, v_full(s));
                }
            }
        }
        return;
    }

    // A consumer warpgroup: 64 query rows, wg * 64 into the block's 128.
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::: "memory");
    const int wg = warp / 4, g = lane / 4, t4 = lane % 4;
    const int row_in_unit = wg * 64 + (warp % 4) * 16 + g;  // this lane's rows: these and 8 further, of 128
    int row0 = 0;                                          // the same in the sequence, per segment
    const float scale_log2 = rsqrtf((float)D) * 1.4426950408889634f;
    float o[D / 2];
    float m[2];     // running maxima of the two rows (log2 units)
    float l[2];     // this lane's part of their running sums
    float sc[64];   // S of one tile, then its exponentials
    unsigned p[8][4];  // P as wgmma's A operand: k step kk holds keys 16 kk .. 16 kk + 15
    float alpha[2];    // how much the running maxima grew, as a factor on O and l

    // S = Q K^T of the ring's tile it, issued (not waited for).
    auto issue_qk = [&](int it) {
        const int s = it % STAGES;
        mbar_wait(k_full(s), (it / STAGES) & 1);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < D / 16; ++ks) {
            // Q: this warpgroup's 64 rows (8 KB into each 128-row box); K: all 128 rows; 16 columns = 32 bytes
            // inside the swizzled 128-byte row.
            const unsigned long long da =
                make_desc(base + L::Q + (ks / 4) * L::BOX + wg * 64 * 128 + (ks % 4) * 32, 16, 1024);
            const unsigned long long db = make_desc(base + L::k(s) + (ks / 4) * L::BOX + (ks % 4) * 32, 16, 1024);
            wgmma_qk(sc, da, db, ks);
        }
        wgmma_commit();
    };
    // O += P V of the ring's tile it, issued (not waited for).
    auto issue_pv = [&](int it) {
        const int s = it % STAGES;
        mbar_wait(v_full(s), (it / STAGES) & 1);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
            // V: 16 keys = 16 rows of 128 bytes further; the box of the next 64 columns is BOX bytes on (LBO).
            wgmma_pv(o, p[kk], make_desc(base + L::v(s) + kk * 2048, L::BOX, 1024));
        }
        wgmma_commit();
    };
    auto release = [&](int it) {
        __syncwarp();
        if (lane == 0) mbar_arrive(empty(it % STAGES));  // this warp no longer reads the stage
    };
    auto release_q = [&]() {  // after this warp's last Q K^T of a segment has completed
        __syncwarp();
        if (lane == 0) mbar_arrive(q_empty);
    };
    // The online softmax of key tile t's scores, in place: masks, new maxima, exponentials, the sums; alpha says
    // how to rescale what O holds so far.
    auto softmax = [&](int t) {
        const int k0 = t * BN;
        if (k0 + BN > seq || (causal && k0 + BN - 1 > row0)) {  // masks only on the diagonal tile and seq's
#pragma unroll
            for (int i = 0; i < 64; ++i) {
                const int row = row0 + (i % 4 / 2) * 8, key = k0 + 8 * (i / 4) + 2 * t4 + i % 2;
                if (key >= seq || (causal && key > row)) sc[i] = neg_inf();
            }
        }
        float tile_max[2] = {neg_inf(), neg_inf()};  // of the raw scores: the scale is positive
#pragma unroll
        for (int i = 0; i < 64; ++i) tile_max[i % 4 / 2] = fmaxf(tile_max[i % 4 / 2], sc[i]);
        float shift[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(FULL_MASK, tile_max[h], 1));
            tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(FULL_MASK, tile_max[h], 2));
            const float m_new = fmaxf(m[h], tile_max[h] * scale_log2);
            shift[h] = m_new == neg_inf() ? 0.0f : m_new;  // every key so far masked: exp2(-inf) = 0, not NaN
            alpha[h] = fast_exp2(m[h] - shift[h]);
            m[h] = m_new;
            l[h] *= alpha[h];
        }
#pragma unroll
        for (int i = 0; i < 64; ++i) {
            sc[i] = fast_exp2(fmaf(sc[i], scale_log2, -shift[i % 4 / 2]));  // one FFMA and one MUFU per score
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
        for (int j = 0; j < 16; ++j) {
            p[j / 2][2 * (j % 2)] = pack_bf16(sc[4 * j], sc[4 * j + 1]);
            p[j / 2][2 * (j % 2) + 1] = pack_bf16(sc[4 * j + 2], sc[4 * j + 3]);
        }
    };

    int it0 = 0;  // the ring's tile index of the segment's first key tile: it continues across segments
#pragma unroll 1
    for (int k = 0; k < segments; ++k) {
        const Segment sg = k == 0 ? seg0 : seg1;  // by value: a selected reference would live in memory
        const int tiles = sg.t_end - sg.t_begin, t_begin = sg.t_begin;
        const bool more = k + 1 < segments;  // the producer waits for this segment's Q to be released
        row0 = sg.q0 + row_in_unit;
#pragma unroll
        for (int i = 0; i < D / 2; ++i) o[i] = 0.0f;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            m[h] = neg_inf();
            l[h] = 0.0f;
        }
        mbar_wait(q_full, k & 1);  // the Q barrier's phase k: segment k's Q
        if (OVERLAP) {
            // Tile t's Q K^T and tile t - 1's P V are in flight together; the exponentials of tile t run while the
            // tensor cores finish P V. P is packed only once P V of t - 1 is done with the registers it reads.
            issue_qk(it0);
            wgmma_wait<0>();
            fence_array(sc);
            if (more && tiles == 1) release_q();
            softmax(t_begin);
            rescale_o_and_pack_p();
            for (int j = 1; j < tiles; ++j) {
                issue_qk(it0 + j);
                issue_pv(it0 + j - 1);
                wgmma_wait<1>();  // Q K^T of tile j has landed
                fence_array(sc);
                if (more && j == tiles - 1) release_q();
                softmax(t_begin + j);
                wgmma_wait<0>();  // P V of tile j - 1 too
                fence_array(o);
                release(it0 + j - 1);
                rescale_o_and_pack_p();
            }
            issue_pv(it0 + tiles - 1);
            wgmma_wait<0>();
            fence_array(o);
            release(it0 + tiles - 1);
        } else {
            for (int j = 0; j < tiles; ++j) {
                issue_qk(it0 + j);
                wgmma_wait<0>();
                fence_array(sc);
                if (more && j == tiles - 1) release_q();
                softmax(t_begin + j);
                rescale_o_and_pack_p();
                issue_pv(it0 + j);
                wgmma_wait<0>();
                fence_array(o);
                release(it0 + j);
            }
        }
        it0 += tiles;

#pragma unroll
        for (int h = 0; h < 2; ++h) {
            l[h] += __shfl_xor_sync(FULL_MASK, l[h], 1);
            l[h] += __shfl_xor_sync(FULL_MASK, l[h], 2);
        }
        if (sg.slot < 0) {  // the whole unit: O, normalised, as in 04
            const size_t head_offset = ((size_t)sg.batch * heads + sg.head) * seq * D;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int i = row0 + 8 * h;
                if (i >= seq) continue;
                const float inv = 1.0f / l[h];  // l >= 1: the row's maximum contributes exp2(0)
                __nv_bfloat16* out = O + head_offset + (size_t)i * D + 2 * t4;
#pragma unroll
                for (int j = 0; j < D / 8; ++j) {
                    *reinterpret_cast<__nv_bfloat162*>(out + 8 * j) =
                        __floats2bfloat162_rn(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
                }
            }
        } else {  // part of the keys: unnormalised O, m and l (the header's convention) for the combine
            float* slot = S + (size_t)sg.slot * BM * (D + 2);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row_in_unit + 8 * h;
                if (sg.q0 + r >= seq) continue;  // the combine reads rows < seq only
                float* out = slot + r * D + 2 * t4;
#pragma unroll
                for (int j = 0; j < D / 8; ++j)
                    *reinterpret_cast<float2*>(out + 8 * j) = make_float2(o[4 * j + 2 * h], o[4 * j + 2 * h + 1]);
                if (t4 == 0) {  // the quad's four lanes hold the same m and, reduced above, the same l
                    slot[BM * D + r] = m[h];
                    slot[BM * D + BM + r] = l[h];
                }
            }
        }
    }
}

// Grid [SMS, cdiv(units, SMS)]: gridDim.x is the multiprocessor count. S holds the tail's partial results.
template <int STAGES, bool OVERLAP>
__global__ void __launch_bounds__(THREADS, 1)
attention_wgmma_kernel(int batch, int heads, int seq, int head_dim, int causal, const __nv_bfloat16* Q,
                       const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O, float* S,
                       const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                       const __grid_constant__ CUtensorMap tmV) {
    Segment seg0{}, seg1{};  // seg1 is read only when there are two
    const int segments = block_segments(batch, heads, seq, head_dim, causal, seg0, seg1);
    if (segments == 0) return;  // the whole block: past the last unit, or an empty share of the tail
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned bars = base + (head_dim == 64 ? Layout<64>::k(STAGES) : Layout<128>::k(STAGES));
    if (threadIdx.x == 0) {
        mbar_init(bars, 1);  // Q: the producer's arrive plus the copy's bytes (one phase per segment)
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(bars + 8 * (1 + s), 1);
            mbar_init(bars + 8 * (1 + STAGES + s), 1);
            mbar_init(bars + 8 * (1 + 2 * STAGES + s), CONSUMER_WARPS);
        }
        mbar_init(bars + 8 * (1 + 3 * STAGES), CONSUMER_WARPS);  // Q empty: every consumer warp
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (head_dim == 64) {
        attention_wgmma<64, STAGES, OVERLAP>(heads, seq, causal, O, S, base, &tmQ, &tmK, &tmV, segments, seg0, seg1);
    } else {
        attention_wgmma<128, STAGES, OVERLAP>(heads, seq, causal, O, S, base, &tmQ, &tmK, &tmV, segments, seg0, seg1);
    }
}

// ---- the combine: merges each split tail unit's partial results ----------------------------------------------
constexpr int COMBINE_WARPS = 8;  // a warp per row: 16 blocks of 8 rows cover a unit's 128

template <int D>
__device__ void combine_row(int heads, int seq, int q0, int head, int batch, int r, int T, int len, int c0, int c1,
                            __nv_bfloat16* O, const float* S) {
    constexpr int N = D / 32;  // columns per lane, contiguous: one 16-byte (D = 128) or 8-byte load per slot
    struct alignas(4 * N) Chunk {
        float x[N];
    };
    const int row = blockIdx.y * COMBINE_WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (q0 + row >= seq) return;
    auto slot_of = [&](int c) {  // block c's first segment if it starts in unit r, else its second
        return S + (size_t)(2 * c + ((c * len) / T == r ? 0 : 1)) * BM * (D + 2);
    };
    float m = neg_inf();
    for (int c = c0; c <= c1; ++c) m = fmaxf(m, slot_of(c)[BM * D + row]);
    const float shift = m == neg_inf() ? 0.0f : m;
    float acc[N] = {}, l = 0.0f;
    for (int c = c0; c <= c1; ++c) {
        const float* slot = slot_of(c);
        const float w = exp2f(slot[BM * D + row] - shift);  // the stored m and l are base 2 (the header)
        l += w * slot[BM * D + BM + row];
        const Chunk part = *reinterpret_cast<const Chunk*>(slot + row * D + N * lane);
#pragma unroll
        for (int n = 0; n < N; ++n) acc[n] += w * part.x[n];
    }
    const float inv = 1.0f / l;
    __nv_bfloat16* out = O + (((size_t)batch * heads + head) * seq + q0 + row) * D + N * lane;
#pragma unroll
    for (int n = 0; n < N; n += 2)
        *reinterpret_cast<__nv_bfloat162*>(out + n) = __floats2bfloat162_rn(acc[n] * inv, acc[n + 1] * inv);
}

// Grid [SMS, 16] (x: tail unit r, so gridDim.x is SMS; y: 8 rows of its 128); [1, 16] when causal.
__global__ void __launch_bounds__(32 * COMBINE_WARPS)
attention_tail_combine(int batch, int heads, int seq, int head_dim, int causal, const __nv_bfloat16* Q,
                       const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O, float* S) {
    if (causal) return;
    const int sms = gridDim.x, q_tiles = (seq + BM - 1) / BM, units = q_tiles * batch * heads;
    const int rem = units % sms, r = blockIdx.x;
    if (rem == 0 || r >= rem || !tail_split_allowed(batch, heads, seq, head_dim, sms)) return;
    // The attention kernel's tail partition: blocks c0 .. c1 hold unit r's key tiles [r T, (r + 1) T).
    const int T = q_tiles, len = (rem * T + sms - 1) / sms;
    const int c0 = r * T / len, c1 = ((r + 1) * T - 1) / len;
    if (c0 == c1) return;  // one block ran the whole unit and wrote O
    const int unit = units - rem + r, q0 = unit % q_tiles * BM, head = unit / q_tiles % heads;
    const int batch_index = unit / q_tiles / heads;
    if (head_dim == 64) {
        combine_row<64>(heads, seq, q0, head, batch_index, r, T, len, c0, c1, O, S);
    } else {
        combine_row<128>(heads, seq, q0, head, batch_index, r, T, len, c0, c1, O, S);
    }
}

/* @plan
[[tensor_map]]
name = "tmQ"
array = "Q"
box = [64, 128, 1, 1]
swizzle = "128B"
l2_promotion = "256B"

[[tensor_map]]
name = "tmK"
array = "K"
box = [64, 128, 1, 1]
swizzle = "128B"
l2_promotion = "256B"

[[tensor_map]]
name = "tmV"
array = "V"
box = [64, 128, 1, 1]
swizzle = "128B"
l2_promotion = "256B"

[[launch]]
kernel = "attention_wgmma_kernel<3, true>"
grid = ["SMS", "cdiv(cdiv(seq, 128) * batch * heads, SMS)"]
block = [384]
shared_bytes = "(1 + 2 * 3) * 128 * head_dim * 2 + 8 * (2 + 3 * 3) + 1024"
tensor_maps = ["tmQ", "tmK", "tmV"]

[[launch]]
kernel = "attention_tail_combine"
grid = ["max(1, SMS * (1 - causal))", "16"]
block = [256]
*/

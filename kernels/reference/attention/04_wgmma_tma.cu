// Step 04 - Hopper: wgmma from shared memory and registers, a TMA pipeline, a producer warpgroup, two consumers
// (capsule 54, "FlashAttention III").
//     python -m kernels bench kernels/reference/attention/04_wgmma_tma.cu --problem attention --arch sm_90a
// Change versus 03, five things:
//   1. Both products on warpgroup MMA (wgmma.mma_async, sm_90a). S = Q K^T reads both operands from shared
//      memory (m64n128k16, Q and K both K-major: their rows are head_dim contiguous); O += P V takes P from
//      registers (the S accumulator's layout, exponentiated and rounded to BF16 pairs, is the register layout of
//      wgmma's A operand, as with mma.sync in 03) and V from shared memory, transposed by the instruction itself
//      (V's rows are keys, contiguous along head_dim: an "N-major" B operand, trans-b = 1).
//   2. The TMA moves every tile: three tensor maps over the [batch, heads, seq, head_dim] arrays (4-D boxes of 64
//      head_dim columns x 128 rows x 1 head x 1 batch, 128-byte swizzle, the layout wgmma reads). Rows past seq
//      come back as zeros from the map's bounds, per head, so no tile ever reads another head's keys.
//   3. Warp specialisation: one lane of a producer warpgroup loads Q once and streams K and V through a ring of
//      STAGES stages, each with its own "K full", "V full" and "empty" mbarriers, so Q K^T of a tile starts as
//      soon as its K has landed while V is still in flight; a stage is refilled once the 8 consumer warps have
//      released it. Two consumer warpgroups own 64 query rows each (a block: 128 rows), so each K/V tile read
//      from L2 feeds twice as many rows as in 03. setmaxnreg moves registers from the producer (24 per thread) to
//      the consumers (240): S (64), O (64 at head_dim 128) and P (32) fit with no spills.
//   4. Within a warpgroup, tile t's Q K^T and tile t - 1's P V are issued together; tile t's exponentials run
//      while the tensor cores finish P V (OVERLAP, FlashAttention-3's intra-warpgroup pipelining). P is packed
//      once P V of t - 1 no longer reads its registers. This needs 3 stages: with 2, a stage is released one tile
//      later than without the overlap, and the next K waits for its copy every tile.
//   5. The softmax's inner loop is one FFMA and one ex2.approx per score: the maximum is taken over the raw
//      scores (the scale is positive) and exp2(s * scale - m) is a single fused multiply-add before the special
//      function unit's 2^x; exp2f() would wrap the same instruction in range handling.
// The masks are 03's (only on the diagonal tile and the tile holding seq); rows of a lane reduce with two shuffles.
// Plan: grid (cdiv(seq, 128), batch * heads), causal blocks heaviest first, 384 threads, 1 block per SM; shared
// memory: Q (128 x head_dim) and 3 x (K, V) tiles of 128 x head_dim BF16, 224 KB at head_dim 128.
// Prediction: about 2x step 03 from wgmma's rate and the doubled rows per K/V tile, 400-450 TFLOP/s; the rest
// from hiding the exponentials behind the products.
// Measured on the H200 through the judge (2026-12-03), against PyTorch SDPA, whose fastest
// backend there is cuDNN; TFLOP/s at 4 x 16 x 4096 and 1 x 8 x 16384, head_dim 128 (non-causal / causal):
//   <3, true> (the plan):          640 / 556 and 682 / 673 TFLOP/s: 94.9% / 97.2% and 98.6% / 129.4% of SDPA
//   (cuDNN's causal times vary from run to run by up to a third; its non-causal ones within 1.5%)
//   without item 5 (exp2f, scale after the max): <3, true> 497 / 429 and 525 / 517; <2, false> (no overlap, 2
//   stages) 475 / 396 and 502 / 465; <2, true> 391 / 325 and 410 / 361 (the late release above).
//   Not kept, none faster than the plan by more than the noise: the two consumer warpgroups taking turns to issue
//   their products (named barriers, FlashAttention-3's "ping-pong"), skipping O's rescale when no row's maximum
//   moved, and clusters of 2 CTAs with each K and V box multicast to both (half the L2 reads, 614 / 675 TFLOP/s
//   non-causal: L2 is not what limits this kernel).
// What is left to beat cuDNN at seq 16384 non-causal (98%): the grid is 1024 equal blocks on 132 SMs, 7.76 waves
// run in 8 (97% of the time is busy); splitting the last wave's blocks along the keys, with a combine, would
// recover most of that.
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

template <int D, int STAGES, bool OVERLAP>
__device__ void attention_wgmma(int heads, int seq, int causal, __nv_bfloat16* O, unsigned base,
                                const CUtensorMap* tmQ, const CUtensorMap* tmK, const CUtensorMap* tmV) {
    using L = Layout<D>;
    const unsigned bars = base + L::k(STAGES);
    const unsigned q_full = bars;
    auto k_full = [&](int s) { return bars + 8 * (1 + s); };
    auto v_full = [&](int s) { return bars + 8 * (1 + STAGES + s); };
    auto empty = [&](int s) { return bars + 8 * (1 + 2 * STAGES + s); };

    const int q_block = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;  // causal: the heaviest blocks first
    const int q0 = q_block * BM, head = blockIdx.y % heads, batch = blockIdx.y / heads;
    const int kv_end = causal ? min(seq, q0 + BM) : seq;
    const int tiles = (kv_end + BN - 1) / BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    if (warp >= CONSUMER_WARPS) {  // the producer warpgroup: one lane issues every copy
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
        if (warp == CONSUMER_WARPS && lane == 0) {
            mbar_arrive_expect_tx(q_full, L::TILE);
            for (int b = 0; b < D / 64; ++b) tma_load_4d(base + L::Q + b * L::BOX, tmQ, 64 * b, q0, head, batch, q_full);
            for (int t = 0; t < tiles; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES) mbar_wait(empty(s), (t / STAGES - 1) & 1);
                mbar_arrive_expect_tx(k_full(s), L::TILE);
                for (int b = 0; b < D / 64; ++b)
                    tma_load_4d(base + L::k(s) + b * L::BOX, tmK, 64 * b, t * BN, head, batch, k_full(s));
                mbar_arrive_expect_tx(v_full(s), L::TILE);
                for (int b = 0; b < D / 64; ++b)
                    tma_load_4d(base + L::v(s) + b * L::BOX, tmV, 64 * b, t * BN, head, batch, v_full(s));
            }
        }
        return;
    }

    // A consumer warpgroup: 64 query rows, wg * 64 into the block's 128.
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::: "memory");
    const int wg = warp / 4, g = lane / 4, t4 = lane % 4;
    const int row0 = q0 + wg * 64 + (warp % 4) * 16 + g;  // this lane's rows: row0 and row0 + 8
    const float scale_log2 = rsqrtf((float)D) * 1.4426950408889634f;
    float o[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] = 0.0f;
    float m[2] = {neg_inf(), neg_inf()};  // running maxima of the two rows (log2 units)
    float l[2] = {0.0f, 0.0f};             // this lane's part of their running sums
    float sc[64];                          // S of one tile, then its exponentials
    unsigned p[8][4];                      // P as wgmma's A operand: k step kk holds keys 16 kk .. 16 kk + 15
    float alpha[2];                        // how much the running maxima grew, as a factor on O and l

    // S = Q K^T of tile t, issued (not waited for).
    auto issue_qk = [&](int t) {
        const int s = t % STAGES;
        mbar_wait(k_full(s), (t / STAGES) & 1);
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
    // O += P V of tile t, issued (not waited for).
    auto issue_pv = [&](int t) {
        const int s = t % STAGES;
        mbar_wait(v_full(s), (t / STAGES) & 1);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
            // V: 16 keys = 16 rows of 128 bytes further; the box of the next 64 columns is BOX bytes on (LBO).
            wgmma_pv(o, p[kk], make_desc(base + L::v(s) + kk * 2048, L::BOX, 1024));
        }
        wgmma_commit();
    };
    auto release = [&](int t) {
        __syncwarp();
        if (lane == 0) mbar_arrive(empty(t % STAGES));  // this warp no longer reads the stage
    };
    // The online softmax of tile t's scores, in place: masks, new maxima, exponentials, the sums; alpha says
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

    mbar_wait(q_full, 0);
    if (OVERLAP) {
        // Tile t's Q K^T and tile t - 1's P V are in flight together; the exponentials of tile t run while the
        // tensor cores finish P V. P is packed only once P V of t - 1 is done with the registers it reads.
        issue_qk(0);
        wgmma_wait<0>();
        fence_array(sc);
        softmax(0);
        rescale_o_and_pack_p();
        for (int t = 1; t < tiles; ++t) {
            issue_qk(t);
            issue_pv(t - 1);
            wgmma_wait<1>();  // Q K^T of tile t has landed
            fence_array(sc);
            softmax(t);
            wgmma_wait<0>();  // P V of tile t - 1 too
            fence_array(o);
            release(t - 1);
            rescale_o_and_pack_p();
        }
        issue_pv(tiles - 1);
        wgmma_wait<0>();
        fence_array(o);
        release(tiles - 1);
    } else {
        for (int t = 0; t < tiles; ++t) {
            issue_qk(t);
            wgmma_wait<0>();
            fence_array(sc);
            softmax(t);
            rescale_o_and_pack_p();
            issue_pv(t);
            wgmma_wait<0>();
            fence_array(o);
            release(t);
        }
    }

#pragma unroll
    for (int h = 0; h < 2; ++h) {
        l[h] += __shfl_xor_sync(FULL_MASK, l[h], 1);
        l[h] += __shfl_xor_sync(FULL_MASK, l[h], 2);
        l[h] = 1.0f / l[h];  // l >= 1: the row's maximum contributes exp2f(0)
    }
    const size_t head_offset = ((size_t)batch * heads + head) * seq * D;
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

// Grid (cdiv(seq, BM), batch * heads); S (the workspace) is not used.
template <int STAGES, bool OVERLAP>
__global__ void __launch_bounds__(THREADS, 1)
attention_wgmma_kernel(int batch, int heads, int seq, int head_dim, int causal, const __nv_bfloat16* Q,
                       const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O, float* S,
                       const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                       const __grid_constant__ CUtensorMap tmV) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned base = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned bars = base + (head_dim == 64 ? Layout<64>::k(STAGES) : Layout<128>::k(STAGES));
    if (threadIdx.x == 0) {
        mbar_init(bars, 1);  // Q: the producer's arrive plus the copy's bytes
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(bars + 8 * (1 + s), 1);
            mbar_init(bars + 8 * (1 + STAGES + s), 1);
            mbar_init(bars + 8 * (1 + 2 * STAGES + s), CONSUMER_WARPS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (head_dim == 64) {
        attention_wgmma<64, STAGES, OVERLAP>(heads, seq, causal, O, base, &tmQ, &tmK, &tmV);
    } else {
        attention_wgmma<128, STAGES, OVERLAP>(heads, seq, causal, O, base, &tmQ, &tmK, &tmV);
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
grid = ["cdiv(seq, 128)", "batch * heads"]
block = [384]
shared_bytes = "(1 + 2 * 3) * 128 * head_dim * 2 + 8 * (1 + 3 * 3) + 1024"
tensor_maps = ["tmQ", "tmK", "tmV"]
*/

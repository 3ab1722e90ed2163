// Sweep template for hgemm (kernels/reference/sweeps/hgemm.toml): rung 13 (13_hgemm_staged_persistent.cu) and a
// warp-specialised relative, each tile / ring / raster / prefetch choice a template argument named in the plan.
//     python -m kernels.tools.sweep kernels/reference/sweeps/hgemm.toml --time-budget 1
// Not a rung (no NN_ prefix): the ladder does not pick it up. The plan's placeholders (KERNEL, GRID, THREADS, SHARED) are
// filled in per variant.
// Two kernels:
//   hgemm_wgmma_staged<BM, BN, STAGES, GROUP, PREFETCH_C, MINB, EPI_AHEAD = 0>: rung 13's code, unchanged but for
//     MINB (blocks per SM in __launch_bounds__) and EPI_AHEAD (how many chunks ahead the epilogue loads C; at 0
//     the SASS is instruction for instruction what it was before the parameter existed, by cuobjdump of this
//     NVRTC's output). BM / 64 warpgroups of m64nBN wgmma, cp.async ring with one block barrier per k step,
//     epilogue staged through the free ring, persistent blocks, C prefetched into L2 PREFETCH_C k steps before a
//     tile's end. <128, 256, 4, 8, 8, 1> is rung 13 itself.
//   hgemm_ws<BN, STAGES, GROUP, PREFETCH_C, MAXNREG>: 128 x BN tiles, a producer warpgroup of cp.async copies and
//     two consumer warpgroups, full / empty mbarrier rings continued across tiles (the comment at the code says
//     why cp.async and not TMA), the staged epilogue in areas of its own so the producer fills the next tile's
//     stages meanwhile.
// Shared memory: staged STAGES * (BM + BN) * 128 + 1024; ws STAGES * (128 + BN) * 128 + 20480 (staging)
// + 16 * STAGES (barriers) + 1024.
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async16_zfill(unsigned dst, const void* src, bool pred) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
// Make this thread's generic-proxy writes to shared memory (cp.async, st.shared) visible to the async proxy (wgmma).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// Tie a register to the asm stream, so the compiler neither reads nor moves an accumulator across a wait.
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// Shared-memory matrix descriptor: start address, leading and stride byte offsets (all >> 4), 128-byte swizzle.
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}

// D(64 x BN, FP32) += A(64 x 16, K-major) * B(16 x BN, N-major), scale-d = 1 (accumulate), trans-a 0, trans-b 1.
// Accumulator d[4 j + q] of a thread in warp w of the warpgroup: row 16 w + lane / 4 (+ 8 for q >= 2), column
// 8 j + 2 (lane % 4) + q % 2 (the m16n8 accumulator layout of mma.sync, repeated along n).
#define WG_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                 "+f"(d[i + 6]), "+f"(d[i + 7])
template <int BN> struct Wgmma;
template <> struct Wgmma<256> {
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long da, unsigned long long db) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
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
};
template <> struct Wgmma<128> {
    static __device__ __forceinline__ void mma(float (&d)[64], unsigned long long da, unsigned long long db) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
            "%64, %65, p, 1, 1, 0, 1;\n}\n"
            : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56)
            : "l"(da), "l"(db), "r"(1));
    }
};


// Start pulling `bytes` (a multiple of 16) of global memory at a 16-byte aligned address into L2; no registers,
// nothing to wait for.
__device__ __forceinline__ void prefetch_l2(const void* p, unsigned bytes) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p), "r"(bytes) : "memory");
}

// Up to 8 halves from p, those at index >= valid read as zero (none are dereferenced), packed as one 16-byte
// value with p[0] lowest: the safe path's copy of a chunk whose row may be unaligned or cut by the edge.
__device__ __forceinline__ uint4 load8_checked(const __half* p, int valid) {
    unsigned w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const unsigned lo = 2 * q < valid ? __half_as_ushort(p[2 * q]) : 0u;
        const unsigned hi = 2 * q + 1 < valid ? __half_as_ushort(p[2 * q + 1]) : 0u;
        w[q] = lo | (hi << 16);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

template <int BM, int BN, int STAGES, int GROUP, int PREFETCH_C, int EPI_AHEAD, bool ALIGNED>
__device__ __forceinline__ void hgemm_staged_body(int M, int N, int K, float alpha, const __half* __restrict__ A,
                                                  const __half* __restrict__ B, float beta, float* __restrict__ C,
                                                  unsigned smem, unsigned char* smem_gen) {
    constexpr int BK = 64;                        // one 128-byte swizzle row of halves
    constexpr int NT = BM / 64 * 128;             // one warpgroup per 64 rows of the block tile
    constexpr int A_BYTES = BM * BK * 2, STAGE_BYTES = A_BYTES + BK * BN * 2;
    constexpr int A_ROWSTEP = NT / 8;             // A: 8 chunks of 16 bytes per row
    constexpr int B_CHUNKS = BN / 8, B_KSTEP = NT / B_CHUNKS;
    constexpr int CA = BM * 8 / NT, CB = BK * B_CHUNKS / NT;
    static_assert(BM % 64 == 0 && BN % 64 == 0 && A_ROWSTEP % 8 == 0 && B_KSTEP % 8 == 0 && CB * B_KSTEP == BK, "shape");
    // Epilogue staging: per warp 16 rows x EPI_COLS columns of FP32, rows EPI_PITCH floats apart, in ring slots
    // STAGES - 2 and on (the slots the next tile's prologue does not fill). EPI_LANES lanes cover one row's
    // EPI_COLS columns with float4 accesses; a warp instruction covers EPI_ROWS rows. (64-column chunks keep
    // twice as many C loads in flight and spill.)
    constexpr int EPI_COLS = 32, EPI_PITCH = EPI_COLS + 8, EPI_WARP_FLOATS = 16 * EPI_PITCH;
    constexpr int EPI_LANES = EPI_COLS / 4, EPI_ROWS = 32 / EPI_LANES;
    constexpr int EPI_CHUNKS = BN / EPI_COLS, EPI_LOADS = 16 / EPI_ROWS;  // a lane's float4 loads of C per chunk
    static_assert(BN % EPI_COLS == 0 && EPI_AHEAD >= 0 && EPI_AHEAD < EPI_CHUNKS, "epilogue chunk");
    constexpr int EPI_OFFSET = (STAGES - 2) * STAGE_BYTES;
    static_assert(STAGES >= 3 && EPI_OFFSET + NT / 32 * EPI_WARP_FLOATS * 4 <= STAGES * STAGE_BYTES, "staging");

    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;

    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN, tiles = grid_m * grid_n;
    // Tile t -> origin, grouped rasterisation (as in step 11): GROUP block rows walked column by column.
    auto origin = [&](int t, int& m0, int& n0) {
        const int first_m = t / (GROUP * grid_n) * GROUP, gsize = min(grid_m - first_m, GROUP);
        m0 = (first_m + (t % (GROUP * grid_n)) % gsize) * BM;
        n0 = (t % (GROUP * grid_n)) / gsize * BN;
    };

    // Copy assignment, as in step 12: one swizzled shared-memory position per thread for all its A (B) chunks.
    const int a_r = tid / 8, a_c = tid % 8;
    const unsigned a_dst = a_r * 128 + ((a_c ^ (a_r % 8)) << 4);
    const int b_k = tid / B_CHUNKS, b_n = (tid % B_CHUNKS) * 8;
    const unsigned b_dst = A_BYTES + (b_n / 64) * (BK * 128) + b_k * 128 + ((((b_n % 64) / 8) ^ (b_k % 8)) << 4);

    auto load_stage = [&](int stage, int k0, int m0, int n0) {
        const unsigned st = smem + stage * STAGE_BYTES;
        if (ALIGNED) {
            if (m0 + BM <= M && n0 + BN <= N && k0 + BK <= K) {  // block-uniform: inner tiles need no bounds tests
                const __half* a = A + (size_t)(m0 + a_r) * K + k0 + a_c * 8;
#pragma unroll
                for (int i = 0; i < CA; ++i) cp_async16(st + a_dst + i * A_ROWSTEP * 128, a + (size_t)i * A_ROWSTEP * K);
                const __half* b = B + (size_t)(k0 + b_k) * N + n0 + b_n;
#pragma unroll
                for (int i = 0; i < CB; ++i) cp_async16(st + b_dst + i * B_KSTEP * 128, b + (size_t)i * B_KSTEP * N);
            } else {  // K % 8 == 0 and N % 8 == 0: a 16-byte chunk is wholly inside or wholly outside
#pragma unroll
                for (int i = 0; i < CA; ++i) {
                    const int row = m0 + a_r + i * A_ROWSTEP, col = k0 + a_c * 8;
                    const bool p = row < M && col < K;
                    cp_async16_zfill(st + a_dst + i * A_ROWSTEP * 128, p ? A + (size_t)row * K + col : A, p);
                }
#pragma unroll
                for (int i = 0; i < CB; ++i) {
                    const int row = k0 + b_k + i * B_KSTEP, col = n0 + b_n;
                    const bool p = row < K && col < N;
                    cp_async16_zfill(st + b_dst + i * B_KSTEP * 128, p ? B + (size_t)row * N + col : B, p);
                }
            }
        } else {  // unaligned rows: element-wise loads with bounds checks, 16-byte shared stores. Not unrolled:
                  // this slow path's registers are allocated with the fast path's, and unrolled it spills.
#pragma unroll 1
            for (int i = 0; i < CA; ++i) {
                const int row = m0 + a_r + i * A_ROWSTEP, col = k0 + a_c * 8;
                const uint4 v = load8_checked(A + (size_t)row * K + col, row < M ? K - col : 0);
                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(st + a_dst + i * A_ROWSTEP * 128),
                             "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
            }
#pragma unroll 1
            for (int i = 0; i < CB; ++i) {
                const int row = k0 + b_k + i * B_KSTEP, col = n0 + b_n;
                const uint4 v = load8_checked(B + (size_t)row * N + col, row < K ? N - col : 0);
                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(st + b_dst + i * B_KSTEP * 128),
                             "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
            }
        }
    };

    const int KT = (K + BK - 1) / BK;
    // A tile's first STAGES - 2 k stages into ring slots 0 .. STAGES - 3. Always commit (maybe an empty group) so
    // the group count stays in step.
    auto prologue = [&](int m0, int n0) {
#pragma unroll
        for (int s = 0; s < STAGES - 2; ++s) {
            if (s < KT) load_stage(s, s * BK, m0, n0);
            cp_async_commit();
        }
    };

    int t = blockIdx.x;
    if (t >= tiles) return;  // the whole block: no barrier is left waiting
    int m0, n0;
    origin(t, m0, n0);
    prologue(m0, n0);
    const int prefetch_kt = KT > PREFETCH_C ? KT - PREFETCH_C : 0;

    for (; t < tiles; t += gridDim.x) {
        float acc[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;

        for (int kt = 0; kt < KT; ++kt) {
            cp_async_wait<STAGES - 3>();  // this thread's copies of tile kt have landed ...
            fence_proxy_async();          // ... are visible to the tensor cores' proxy ...
            __syncthreads();              // ... for every thread; and tile kt - 2's products are done everywhere
            if (kt + STAGES - 2 < KT) load_stage((kt + STAGES - 2) % STAGES, (kt + STAGES - 2) * BK, m0, n0);
            cp_async_commit();
            if (PREFETCH_C > 0 && ALIGNED && kt == prefetch_kt && tid < BM && m0 + tid < M)
                prefetch_l2(C + (size_t)(m0 + tid) * N + n0, (unsigned)min(BN, N - n0) * 4);  // N % 8 == 0
            const unsigned st = smem + (kt % STAGES) * STAGE_BYTES;
            wgmma_fence();
#pragma unroll
            for (int s = 0; s < BK / 16; ++s) {
                const unsigned long long da = make_desc(st + wg * 64 * 128 + s * 32, 16, 1024);
                const unsigned long long db = make_desc(st + A_BYTES + s * 2048, BK * 128, 1024);
                Wgmma<BN>::mma(acc, da, db);
            }
            wgmma_commit();
            wgmma_wait<1>();  // the previous tile's group is done; this one may still run
        }
        // EPI_AHEAD > 0: the lane's C of the epilogue's first EPI_AHEAD chunks is loaded now, its latency under the
        // last products, the barrier and the next tile's prologue (the lines are in L2: PREFETCH_C above).
        const int em0 = m0, en0 = n0;  // this tile, for the epilogue (the next tile's prologue moves m0, n0)
        const int wrow = em0 + wg * 64 + warp * 16;
        float4 old[EPI_AHEAD + 1][EPI_LOADS];
        auto load_c = [&](int c, float4(&dst)[EPI_LOADS]) {
            const int col = en0 + c * EPI_COLS + (lane % EPI_LANES) * 4;
#pragma unroll
            for (int i = 0; i < EPI_LOADS; ++i) {
                const int row = wrow + lane / EPI_LANES + EPI_ROWS * i;
                dst[i] = (row < M && col < N) ? __ldcs(reinterpret_cast<const float4*>(C + (size_t)row * N + col))
                                              : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
        };
        if (ALIGNED) {
#pragma unroll
            for (int c = 0; c < EPI_AHEAD; ++c) load_c(c, old[c]);
        }
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) fence_operand(acc[i]);
        // Every warpgroup's products are done and every copy of this tile has landed: the whole ring is free.
        __syncthreads();

        if (t + (int)gridDim.x < tiles) {  // start filling the pipeline for the next tile before the epilogue
            origin(t + gridDim.x, m0, n0);
            prologue(m0, n0);
        }

        if (ALIGNED) {
            // Staged epilogue (header, point 1). The thread's accumulators j (8 columns each) of chunk c go to
            // columns 8 j - c EPI_COLS + 2 (lane % 4) of rows lane / 4 (+ 8) of the warp's area; read back, lane
            // owns columns 4 (lane % EPI_LANES) .. + 3 of rows lane / EPI_LANES + EPI_ROWS i.
            // With EPI_AHEAD > 0 chunk c + EPI_AHEAD's C is loaded before chunk c is staged, so each chunk's loads
            // have a chunk's work to land in instead of waiting at its own start; old[] is a ring of EPI_AHEAD + 1.
            float* stage_area =
                reinterpret_cast<float*>(smem_gen + EPI_OFFSET) + (wg * 4 + warp) * EPI_WARP_FLOATS;
#pragma unroll
            for (int c = 0; c < EPI_CHUNKS; ++c) {
                const int col = en0 + c * EPI_COLS + (lane % EPI_LANES) * 4;
                if (c + EPI_AHEAD < EPI_CHUNKS) load_c(c + EPI_AHEAD, old[(c + EPI_AHEAD) % (EPI_AHEAD + 1)]);
                const float4(&mine)[EPI_LOADS] = old[c % (EPI_AHEAD + 1)];
#pragma unroll
                for (int jj = 0; jj < EPI_COLS / 8; ++jj)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int j = c * (EPI_COLS / 8) + jj;
                        float* dst = stage_area + (lane / 4 + 8 * h) * EPI_PITCH + 8 * jj + 2 * (lane % 4);
                        *reinterpret_cast<float2*>(dst) =
                            make_float2(alpha * acc[4 * j + 2 * h], alpha * acc[4 * j + 2 * h + 1]);
                    }
                __syncwarp();
#pragma unroll
                for (int i = 0; i < EPI_LOADS; ++i) {
                    const int rl = lane / EPI_LANES + EPI_ROWS * i, row = wrow + rl;
                    if (row < M && col < N) {  // N % 8 == 0: the 4 columns are in or out together
                        const float* src = stage_area + rl * EPI_PITCH + (lane % EPI_LANES) * 4;
                        float4 v = *reinterpret_cast<const float4*>(src);
                        v.x += beta * mine[i].x;
                        v.y += beta * mine[i].y;
                        v.z += beta * mine[i].z;
                        v.w += beta * mine[i].w;
                        __stcs(reinterpret_cast<float4*>(C + (size_t)row * N + col), v);
                    }
                }
                __syncwarp();  // the staging area is rewritten by the next chunk
            }
        } else {  // step 12's epilogue: scalar, bounds-checked, straight from the accumulators
            const int row0 = em0 + wg * 64 + warp * 16 + lane / 4;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const int col = en0 + j * 8 + (lane % 4) * 2;
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int row = row0 + h * 8;
                    if (row >= M) continue;
                    float* c = C + (size_t)row * N + col;
                    if (col < N) c[0] = alpha * acc[4 * j + 2 * h] + beta * c[0];
                    if (col + 1 < N) c[1] = alpha * acc[4 * j + 2 * h + 1] + beta * c[1];
                }
            }
        }
        // The next tile's first barrier (top of its k loop) orders this epilogue's staging reads before any copy
        // into slots STAGES - 2 and on.
    }
}

// GROUP: block rows per raster group; PREFETCH_C: how many k steps before a tile's end its C is prefetched into
// L2 (header, point 3; 0: not at all). Persistence is the plan's choice: with one block per tile the loop runs once.
// MINB (sweep): blocks per SM for __launch_bounds__; 2 lets two 128 x 128 blocks share an SM, so one's epilogue
// runs beside the other's main loop (rung 13 is MINB = 1, same code otherwise).
template <int BM, int BN, int STAGES, int GROUP, int PREFETCH_C, int MINB, int EPI_AHEAD = 0>
__global__ void __launch_bounds__(BM / 64 * 128, MINB)
hgemm_wgmma_staged(int M, int N, int K, float alpha, const __half* __restrict__ A, const __half* __restrict__ B,
                   float beta, float* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];  // STAGES * (BM + BN) * 64 * 2 bytes, + 1 KB slack
    // Swizzle atoms must start on 1024-byte boundaries: round the base up (the plan asks for 1 KB extra).
    const unsigned base = smem_u32(smem_raw), smem = (base + 1023) & ~1023u;
    unsigned char* smem_gen = smem_raw + (smem - base);  // the same rounded base, as a generic pointer
    const bool aligned = (K % 8 == 0) && (N % 8 == 0) &&
                         (((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B) |
                            reinterpret_cast<unsigned long long>(C)) & 15) == 0);
    if (aligned)
        hgemm_staged_body<BM, BN, STAGES, GROUP, PREFETCH_C, EPI_AHEAD, true>(M, N, K, alpha, A, B, beta, C, smem,
                                                                              smem_gen);
    else
        hgemm_staged_body<BM, BN, STAGES, GROUP, PREFETCH_C, 0, false>(M, N, K, alpha, A, B, beta, C, smem, smem_gen);
}


// ==== Warp-specialised variant (sweep): a cp.async producer warpgroup and mbarrier full / empty rings ============
// hgemm declares no array shapes and promises no alignment (K = 129 gives rows of 258 bytes), so the plan may not
// declare TMA tensor maps over A, B or C (plan.py refuses them, and a 16-byte global stride is a TMA rule): the
// producer copies with 16-byte cp.async instead, as rung 13 does, and reports each stage through the mbarrier
// (cp.async.mbarrier.arrive.noinc: the arrival fires once all of the thread's earlier copies have landed, so the
// producer never waits for its own copies, only for a free slot). Clusters with multicast need TMA for the same
// reason and are not tried. What this buys over rung 13: no block-wide barrier per k step, and the producer runs
// ahead into the next tile's stages while the two consumer warpgroups do the epilogue (the ring is not used for
// staging: each consumer warp has its own 2.5 KB after the ring).
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
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
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// One arrival (counted in the barrier's init count: noinc), triggered when this thread's earlier cp.async land.
__device__ __forceinline__ void cp_async_mbar_arrive(unsigned bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// BM = 128 (two consumer warpgroups of 64 rows, m64nBN wgmma), BN = 128 or 256; 384 threads: warpgroup 0 copies,
// 1 and 2 multiply. MAXNREG: setmaxnreg (producer 40, consumers 232) or not.
template <int BN, int STAGES, int GROUP, int PREFETCH_C, int MAXNREG, bool ALIGNED>
__device__ __forceinline__ void hgemm_ws_body(int M, int N, int K, float alpha, const __half* __restrict__ A,
                                              const __half* __restrict__ B, float beta, float* __restrict__ C,
                                              unsigned smem, unsigned char* smem_gen) {
    constexpr int BM = 128, BK = 64, PT = 128;
    constexpr int A_BYTES = BM * BK * 2, STAGE_BYTES = A_BYTES + BK * BN * 2;
    constexpr int B_ROW_CHUNKS = BN / 8, A_PER_T = BM * 8 / PT, B_PER_T = BK * B_ROW_CHUNKS / PT;
    static_assert(BM * 8 % PT == 0 && BK * B_ROW_CHUNKS % PT == 0, "copy split");
    constexpr int EPI_COLS = 32, EPI_PITCH = EPI_COLS + 8, EPI_WARP_FLOATS = 16 * EPI_PITCH;
    constexpr int EPI_LANES = EPI_COLS / 4, EPI_ROWS = 32 / EPI_LANES;
    // Layout: ring | 8 consumer warps' staging (20 KB) | STAGES full barriers | STAGES empty barriers.
    constexpr int EPI_OFFSET = STAGES * STAGE_BYTES;
    const unsigned full_bar = smem + EPI_OFFSET + 8 * EPI_WARP_FLOATS * 4, empty_bar = full_bar + 8 * STAGES;

    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, PT);  // one arrival per producer thread and fill
            mbar_init(empty_bar + 8 * s, 8);  // lane 0 of each consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN, tiles = grid_m * grid_n;
    auto origin = [&](int t, int& m0, int& n0) {
        const int first_m = t / (GROUP * grid_n) * GROUP, gsize = min(grid_m - first_m, GROUP);
        m0 = (first_m + (t % (GROUP * grid_n)) % gsize) * BM;
        n0 = (t % (GROUP * grid_n)) / gsize * BN;
    };
    const int KT = (K + BK - 1) / BK;

    if (wg == 0) {
        if (MAXNREG) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        // Chunk idx = tid + PT i: A row idx / 8, 16-byte column idx % 8; B k row idx / B_ROW_CHUNKS, column chunk
        // idx % B_ROW_CHUNKS in slab chunk / 8. Same swizzled positions as rung 13 (XOR of the chunk with row % 8).
        int it = 0;
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            int m0, n0;
            origin(t, m0, n0);
            for (int kt = 0; kt < KT; ++kt, ++it) {
                const int s = it % STAGES, n = it / STAGES, k0 = kt * BK;
                if (n >= 1) mbar_wait(empty_bar + 8 * s, (n - 1) & 1);
                const unsigned st = smem + s * STAGE_BYTES;
                const bool inner = m0 + BM <= M && n0 + BN <= N && k0 + BK <= K;
#pragma unroll 4
                for (int i = 0; i < A_PER_T; ++i) {
                    const int idx = tid + PT * i, r = idx / 8, c = idx % 8, row = m0 + r, col = k0 + c * 8;
                    const unsigned dst = st + r * 128 + ((c ^ (r % 8)) << 4);
                    if (ALIGNED) {
                        if (inner) cp_async16(dst, A + (size_t)row * K + col);
                        else {
                            const bool p = row < M && col < K;
                            cp_async16_zfill(dst, p ? A + (size_t)row * K + col : A, p);
                        }
                    } else {
                        const uint4 v = load8_checked(A + (size_t)row * K + col, row < M ? K - col : 0);
                        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y),
                                     "r"(v.z), "r"(v.w));
                    }
                }
#pragma unroll 4
                for (int i = 0; i < B_PER_T; ++i) {
                    const int idx = tid + PT * i, k = idx / B_ROW_CHUNKS, cn = idx % B_ROW_CHUNKS;
                    const int row = k0 + k, col = n0 + cn * 8;
                    const unsigned dst = st + A_BYTES + (cn / 8) * (BK * 128) + k * 128 + (((cn % 8) ^ (k % 8)) << 4);
                    if (ALIGNED) {
                        if (inner) cp_async16(dst, B + (size_t)row * N + col);
                        else {
                            const bool p = row < K && col < N;
                            cp_async16_zfill(dst, p ? B + (size_t)row * N + col : B, p);
                        }
                    } else {
                        const uint4 v = load8_checked(B + (size_t)row * N + col, row < K ? N - col : 0);
                        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y),
                                     "r"(v.z), "r"(v.w));
                    }
                }
                // cp.async: arrive when they land; plain stores: an ordinary (release) arrival after them.
                if (ALIGNED) cp_async_mbar_arrive(full_bar + 8 * s);
                else mbar_arrive(full_bar + 8 * s);
            }
        }
        asm volatile("cp.async.wait_all;\n" ::: "memory");
    } else {
        if (MAXNREG) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int cw = wg - 1, ctid = tid % 128;
        float* stage_area = reinterpret_cast<float*>(smem_gen + EPI_OFFSET) + (cw * 4 + warp) * EPI_WARP_FLOATS;
        int it = 0;
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            int m0, n0;
            origin(t, m0, n0);
            float acc[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
            const int prefetch_kt = KT > PREFETCH_C ? KT - PREFETCH_C : 0;
            const int prow = m0 + cw * 64 + ctid;  // threads 0-63 of the warpgroup: one row of C each
            for (int kt = 0; kt < KT; ++kt, ++it) {
                if (PREFETCH_C > 0 && ALIGNED && kt == prefetch_kt && ctid < 64 && prow < M)
                    prefetch_l2(C + (size_t)prow * N + n0, (unsigned)min(BN, N - n0) * 4);  // N % 8 == 0
                const int s = it % STAGES;
                const unsigned st = smem + s * STAGE_BYTES;
                mbar_wait(full_bar + 8 * s, (it / STAGES) & 1);
                // The producer's cp.async / st.shared writes are generic-proxy writes, acquired through the barrier;
                // the tensor cores read through the async proxy: fence between the two in this thread.
                fence_proxy_async();
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < BK / 16; ++ks) {
                    const unsigned long long da = make_desc(st + cw * 64 * 128 + ks * 32, 16, 1024);
                    const unsigned long long db = make_desc(st + A_BYTES + ks * 2048, BK * 128, 1024);
                    Wgmma<BN>::mma(acc, da, db);
                }
                wgmma_commit();
                wgmma_wait<1>();  // k step it - 1's products are done in this warpgroup: hand its slot back
                if (kt >= 1 && lane == 0) mbar_arrive(empty_bar + 8 * ((it - 1) % STAGES));
            }
            wgmma_wait<0>();
            if (lane == 0) mbar_arrive(empty_bar + 8 * ((it - 1) % STAGES));
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) fence_operand(acc[i]);

            const int wrow = m0 + cw * 64 + warp * 16;
            if (ALIGNED) {  // rung 13's staged epilogue, in the warp's own staging area
#pragma unroll
                for (int c = 0; c < BN / EPI_COLS; ++c) {
                    const int col = n0 + c * EPI_COLS + (lane % EPI_LANES) * 4;
                    float4 old[16 / EPI_ROWS];
#pragma unroll
                    for (int i = 0; i < 16 / EPI_ROWS; ++i) {
                        const int row = wrow + lane / EPI_LANES + EPI_ROWS * i;
                        old[i] = (row < M && col < N)
                                     ? __ldcs(reinterpret_cast<const float4*>(C + (size_t)row * N + col))
                                     : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    }
#pragma unroll
                    for (int jj = 0; jj < EPI_COLS / 8; ++jj)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int j = c * (EPI_COLS / 8) + jj;
                            float* dst = stage_area + (lane / 4 + 8 * h) * EPI_PITCH + 8 * jj + 2 * (lane % 4);
                            *reinterpret_cast<float2*>(dst) =
                                make_float2(alpha * acc[4 * j + 2 * h], alpha * acc[4 * j + 2 * h + 1]);
                        }
                    __syncwarp();
#pragma unroll
                    for (int i = 0; i < 16 / EPI_ROWS; ++i) {
                        const int rl = lane / EPI_LANES + EPI_ROWS * i, row = wrow + rl;
                        if (row < M && col < N) {
                            const float* src = stage_area + rl * EPI_PITCH + (lane % EPI_LANES) * 4;
                            float4 v = *reinterpret_cast<const float4*>(src);
                            v.x += beta * old[i].x;
                            v.y += beta * old[i].y;
                            v.z += beta * old[i].z;
                            v.w += beta * old[i].w;
                            __stcs(reinterpret_cast<float4*>(C + (size_t)row * N + col), v);
                        }
                    }
                    __syncwarp();
                }
            } else {  // scalar, bounds-checked, straight from the accumulators
                const int row0 = wrow + lane / 4;
#pragma unroll
                for (int j = 0; j < BN / 8; ++j) {
                    const int col = n0 + j * 8 + (lane % 4) * 2;
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int row = row0 + h * 8;
                        if (row >= M) continue;
                        float* c = C + (size_t)row * N + col;
                        if (col < N) c[0] = alpha * acc[4 * j + 2 * h] + beta * c[0];
                        if (col + 1 < N) c[1] = alpha * acc[4 * j + 2 * h + 1] + beta * c[1];
                    }
                }
            }
        }
    }
}

template <int BN, int STAGES, int GROUP, int PREFETCH_C, int MAXNREG>
__global__ void __launch_bounds__(384, 1)
hgemm_ws(int M, int N, int K, float alpha, const __half* __restrict__ A, const __half* __restrict__ B, float beta,
         float* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned base = smem_u32(smem_raw), smem = (base + 1023) & ~1023u;
    unsigned char* smem_gen = smem_raw + (smem - base);
    const bool aligned = (K % 8 == 0) && (N % 8 == 0) &&
                         (((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B) |
                            reinterpret_cast<unsigned long long>(C)) & 15) == 0);
    if (aligned)
        hgemm_ws_body<BN, STAGES, GROUP, PREFETCH_C, MAXNREG, true>(M, N, K, alpha, A, B, beta, C, smem, smem_gen);
    else
        hgemm_ws_body<BN, STAGES, GROUP, PREFETCH_C, MAXNREG, false>(M, N, K, alpha, A, B, beta, C, smem, smem_gen);
}

/* @plan
[[launch]]
kernel = "${KERNEL}"
grid = ["${GRID}"]
block = [${THREADS}]
shared_bytes = "${SHARED}"
*/

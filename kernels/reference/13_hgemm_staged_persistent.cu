// Step 13 - rung 12 with its epilogue staged through shared memory, persistent blocks, C prefetched into L2
//     python -m kernels bench kernels/reference/13_hgemm_staged_persistent.cu --problem hgemm --arch sm_90a
// Change versus 12. The main loop is step 12's code (a 4-stage ring of 16-byte cp.async with the 128-byte
// swizzle, one block barrier per k step, BM / 64 warpgroups of m64nBNk16 wgmma), now run at a 128 x 256 x 64
// tile: 2 warpgroups of 256 threads, each an m64n256k16 wgmma over its 64 rows (128 FP32 accumulators a thread,
// 196 registers); what changes is everything around it.
// C is FP32 and both read (beta * C) and written: at 4096^2 that is 2 x 64 MB, twice the bytes of A and B
// together, so how C moves is a large share of this GEMM's time.
//   1. Staged epilogue. In step 12 each thread reads and writes C straight from the wgmma accumulator layout: a
//      warp instruction touches 8 rows x 32 bytes (8-byte float2 per thread), a quarter of each 128-byte line
//      per instruction, 4 instructions per line. Here, once every warpgroup's products are done (one block
//      barrier: the ring is then free), each warp writes alpha * acc for its 16 rows into its own area of the ring
//      (32 columns at a time, rows 40 floats apart: the 8 rows of a float2 store instruction start 8 banks apart,
//      so each bank is hit exactly twice, the minimum for 256 bytes), then reads it back as float4 along rows:
//      8 lanes cover 32 consecutive columns (one whole 128-byte line), a warp instruction 4 such rows. C is read and
//      written with 16-byte accesses (ld.global.cs / st.global.cs: streamed, evict-first, so C does not push the
//      A and B tiles that neighbouring blocks still read out of L2). The C loads of a chunk are issued before its
//      staging stores, so their latency overlaps them. This needs N % 4 == 0 and a 16-byte aligned C; the fast
//      path takes step 12's condition (K % 8 == 0, N % 8 == 0, A, B, C 16-byte aligned), and every other shape
//      keeps step 12's scalar, bounds-checked epilogue. N % 8 == 0 makes a group of 4 columns wholly in or out.
//   2. Persistent blocks: the grid is min(SMS, tiles) blocks and block b takes tiles b, b + grid, ... in the
//      grouped raster order of step 11 (8 block rows walked column by column). Right after the barrier that
//      frees the ring, the block starts the cp.async copies of the next tile's first two k stages into ring
//      slots 0 and 1, and only then runs the epilogue in slot 2 (8 warps x 2.5 KB of staging): the next main loop
//      starts with its pipeline already full, instead of a new block's launch and pipeline fill per tile.
//   3. Eight k steps before a tile's end (5-7 us at 4096^3), 128 threads each start an L2 prefetch of one row
//      of the tile's C (cp.async.bulk.prefetch.L2, 1 KB; fast path only, where rows are 16-byte aligned), so
//      C's HBM reads overlap the last k steps and the epilogue's C loads come from L2. Every block's tiles end at
//      about the same time: 132 x 128 KB of C is 17 MB to read, 4-5 us of the H200's HBM bandwidth, which is why
//      the prefetch starts that early (and not earlier: C's lines must not push A and B out of the 50 MB L2).
// The safe path (unaligned rows) packs its halves in registers instead of a local array and does not unroll its
// copy loops: its registers are allocated together with the fast path's, and as in step 12 it would spill.
// The cp.async group count stays in step across tiles: the next tile's prologue commits its STAGES - 2 groups
// after the current tile's last (empty) groups, exactly as a fresh block's prologue would.
// Plan: 128 x 256 block tile, 256 threads, 4 stages of 48 KB + 1 KB slack, 1 block per SM, grid
// min(SMS, cdiv(M, 128) * cdiv(N, 256)) (132 on an H200 at 4096^2: 512 tiles, 3.9 per block).
// Why 128 x 256 and not 256 x 128 (the tile this rung first ran, as step 12 does): a sweep of variants
// (this code with the tile and blocks per SM as parameters) timed both. A stage is the
// same 48 KB either way (16 KB of A + 32 KB of B instead of 32 + 16), as are the tile count and C's bytes per
// tile; 128 x 256 holds it with half the threads (256, not 512: 8 warps meet at each k step's barrier instead of
// 16, each thread issues 12 copies a stage instead of 6), and each byte of B in a stage is read from shared memory by
// 2 warpgroups instead of 4. The sweep measured only the times, so which of these differences pays is not known.
// Measured on the H200 (2026-12-04, the sweep,
// one second of timed rounds; baseline the fastest of cuBLAS GemmEx and cuBLASLt's top algorithms, cuBLASLt's
// heuristic #4 at about 0.2018 ms at 4096^3, GemmEx 0.2250 ms): 4096^3 0.2269 ms, 89.3% of the baseline, 77.9%
// of the FP16 tensor roofline; the 256 x 128 tile in the same run 0.2476 ms, 81.9%.
// Earlier (2026-12-03, the rung judged alone, baseline cuBLAS GemmEx alone at 0.224 ms):
// the 256 x 128 tile 0.248 ms, 90.3% of that baseline; step 12 87.6%.
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

template <int BM, int BN, int STAGES, int GROUP, int PREFETCH_C, bool ALIGNED>
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
    static_assert(BN % EPI_COLS == 0, "epilogue chunk");
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
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) fence_operand(acc[i]);
        // Every warpgroup's products are done and every copy of this tile has landed: the whole ring is free.
        __syncthreads();

        const int em0 = m0, en0 = n0;  // this tile, for the epilogue
        if (t + (int)gridDim.x < tiles) {  // start filling the pipeline for the next tile before the epilogue
            origin(t + gridDim.x, m0, n0);
            prologue(m0, n0);
        }

        if (ALIGNED) {
            // Staged epilogue (header, point 1). The thread's accumulators j (8 columns each) of chunk c go to
            // columns 8 j - c EPI_COLS + 2 (lane % 4) of rows lane / 4 (+ 8) of the warp's area; read back, lane
            // owns columns 4 (lane % EPI_LANES) .. + 3 of rows lane / EPI_LANES + EPI_ROWS i.
            float* stage_area =
                reinterpret_cast<float*>(smem_gen + EPI_OFFSET) + (wg * 4 + warp) * EPI_WARP_FLOATS;
            const int wrow = em0 + wg * 64 + warp * 16;
#pragma unroll
            for (int c = 0; c < BN / EPI_COLS; ++c) {
                const int col = en0 + c * EPI_COLS + (lane % EPI_LANES) * 4;
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
                    if (row < M && col < N) {  // N % 8 == 0: the 4 columns are in or out together
                        const float* src = stage_area + rl * EPI_PITCH + (lane % EPI_LANES) * 4;
                        float4 v = *reinterpret_cast<const float4*>(src);
                        v.x += beta * old[i].x;
                        v.y += beta * old[i].y;
                        v.z += beta * old[i].z;
                        v.w += beta * old[i].w;
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
template <int BM, int BN, int STAGES, int GROUP, int PREFETCH_C>
__global__ void __launch_bounds__(BM / 64 * 128, 1)
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
        hgemm_staged_body<BM, BN, STAGES, GROUP, PREFETCH_C, true>(M, N, K, alpha, A, B, beta, C, smem, smem_gen);
    else
        hgemm_staged_body<BM, BN, STAGES, GROUP, PREFETCH_C, false>(M, N, K, alpha, A, B, beta, C, smem, smem_gen);
}

/* @plan
[[launch]]
kernel = "hgemm_wgmma_staged<128, 256, 4, 8, 8>"
grid = ["min(SMS, cdiv(M, 128) * cdiv(N, 256))"]
block = [256]
shared_bytes = "4 * (128 + 256) * 64 * 2 + 1024"
*/

// Step 13 - warp specialisation for the FP16 wgmma GEMM: a cp.async producer warpgroup, two consumer warpgroups.
//     python -m kernels bench kernels/reference/13_hgemm_wgmma_ws.cu --problem hgemm --arch sm_90a
// Change versus 12: in step 12 every warpgroup both copied and multiplied, and every k tile ended in a
// __syncthreads, so the slowest warp set the pace of all. Here the roles are split as in the bf16_gemm ladder's
// step 03 (capsule 60), but the copies stay cp.async: hgemm promises no alignment (K or N odd, A at any address),
// so the TMA, whose global strides must be multiples of 16 bytes, cannot serve every shape.
//   - Warpgroup 0 (128 threads) is the producer. For k tile kt it waits on stage s's "empty" mbarrier, issues its
//     share of the stage's 16-byte cp.async copies (8 chunks of A, 16 of B per thread, zero-filled past the edges;
//     element-wise loads and 16-byte shared stores when rows are not 16-byte aligned), commits them as a group,
//     and then publishes the tile issued LAG = 2 tiles earlier: it waits for that group (cp.async.wait_group 2),
//     fences it to the async proxy (fence.proxy.async, so wgmma sees it) and arrives on that stage's "full"
//     mbarrier (count 128, one arrival per producer thread). Two groups stay in flight per thread.
//   - Warpgroups 1 and 2 are consumers, 64 x 256 of the 128 x 256 tile each (128 FP32 accumulators per thread):
//     wait on "full", queue 4 wgmma m64n256k16, commit, wait until only this tile's group is in flight, and lane 0
//     of each warp arrives on the previous tile's "empty" mbarrier (count 8).
// Layouts and descriptors are step 12's (A K-major and B N-major in 128-byte swizzle atoms; B in 64-column slabs
// 8 KB apart). The epilogue is step 12's as well: FP32 C = alpha * acc + beta * C, float2 when rows are aligned.
// No setmaxnreg here: ptxas allocates the whole kernel within the launch's 168 registers per thread (65536 / 384)
// whatever the warpgroups ask for later, the consumers fit in that, and the producer's address arithmetic would
// not fit in 40.
// Plan: 128 x 256 x 64 tiles, 4 stages of 48 KB, 384 threads, 1 block per SM, grouped block order (as in 12).
// Prediction: the tensor cores see a steady stream from two warpgroups that never wait for each other: 90-100% of
// cuBLAS at 4096^3 (step 12: 87-88%).
// Measured on the H200 through the judge: not yet.
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async16_zfill(unsigned dst, const void* src, bool pred) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(pred ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// Make this thread's generic-proxy writes to shared memory (cp.async, st.shared) visible to the async proxy (wgmma).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// ---- mbarrier ----------------------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// One arrival, with release semantics: this thread's earlier writes are visible to whoever waits on the phase.
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

constexpr int BM = 128, BN = 256, BK = 64;  // BK: 64 halves = one 128-byte swizzle row
constexpr int A_BYTES = BM * BK * 2;         // 16 KB
constexpr int B_SLAB_BYTES = BK * 64 * 2;    // 8 KB: 64 k rows of 64 n
constexpr int STAGE_BYTES = A_BYTES + BN / 64 * B_SLAB_BYTES;  // 48 KB
constexpr int LAG = 2;                        // cp.async groups a producer thread keeps in flight

// The producer thread's share of one stage (t = its index in the producer warpgroup, 0..127).
//   A: 128 rows x 8 chunks of 16 bytes; chunk t % 8 of rows t / 8 + 16 i (i < 8). Rows 16 apart share their
//      position in the 8-row swizzle atom, so the swizzled chunk is the same for all i.
//   B: 64 k rows x 32 chunks; chunk t % 32 (columns 8 (t % 32) .. + 7) of k rows t / 32 + 4 i (i < 16).
template <bool ALIGNED>
__device__ __forceinline__ void load_stage(unsigned st, int t, int m0, int n0, int k0, int M, int N, int K,
                                           const __half* __restrict__ A, const __half* __restrict__ B) {
    const int a_r = t / 8, a_c = t % 8;
    const unsigned a_dst = st + a_r * 128 + ((a_c ^ (a_r % 8)) << 4);
    const int b_k = t / 32, b_n = (t % 32) * 8;
    const unsigned b_base = st + A_BYTES + (b_n / 64) * B_SLAB_BYTES;
    const int b_chunk = (b_n % 64) / 8;
    if (ALIGNED) {
        if (m0 + BM <= M && n0 + BN <= N && k0 + BK <= K) {  // block-uniform: inner tiles need no bounds tests
            const __half* a = A + (size_t)(m0 + a_r) * K + k0 + a_c * 8;
#pragma unroll
            for (int i = 0; i < 8; ++i) cp_async16(a_dst + i * 16 * 128, a + (size_t)i * 16 * K);
            const __half* b = B + (size_t)(k0 + b_k) * N + n0 + b_n;
#pragma unroll
            for (int i = 0; i < 16; ++i) {
                const int k = b_k + 4 * i;
                cp_async16(b_base + k * 128 + ((b_chunk ^ (k % 8)) << 4), b + (size_t)i * 4 * N);
            }
        } else {  // K % 8 == 0 and N % 8 == 0: a 16-byte chunk is wholly inside or wholly outside
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const int row = m0 + a_r + 16 * i, col = k0 + a_c * 8;
                const bool p = row < M && col < K;
                cp_async16_zfill(a_dst + i * 16 * 128, p ? A + (size_t)row * K + col : A, p);
            }
#pragma unroll
            for (int i = 0; i < 16; ++i) {
                const int k = b_k + 4 * i, row = k0 + k, col = n0 + b_n;
                const bool p = row < K && col < N;
                cp_async16_zfill(b_base + k * 128 + ((b_chunk ^ (k % 8)) << 4), p ? B + (size_t)row * N + col : B, p);
            }
        }
    } else {  // unaligned rows: element-wise loads with bounds checks, 16-byte shared stores
#pragma unroll 2
        for (int i = 0; i < 8; ++i) {
            const int row = m0 + a_r + 16 * i, col = k0 + a_c * 8;
            __align__(16) __half h[8];
#pragma unroll
            for (int q = 0; q < 8; ++q)
                h[q] = (row < M && col + q < K) ? A[(size_t)row * K + col + q] : __float2half(0.0f);
            const uint4 v = *reinterpret_cast<uint4*>(h);
            asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(a_dst + i * 16 * 128), "r"(v.x),
                         "r"(v.y), "r"(v.z), "r"(v.w)
                         : "memory");
        }
#pragma unroll 2
        for (int i = 0; i < 16; ++i) {
            const int k = b_k + 4 * i, row = k0 + k, col = n0 + b_n;
            __align__(16) __half h[8];
#pragma unroll
            for (int q = 0; q < 8; ++q)
                h[q] = (row < K && col + q < N) ? B[(size_t)row * N + col + q] : __float2half(0.0f);
            const uint4 v = *reinterpret_cast<uint4*>(h);
            const unsigned dst = b_base + k * 128 + ((b_chunk ^ (k % 8)) << 4);
            asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                         : "memory");
        }
    }
}

template <bool ALIGNED, int STAGES>
__device__ __forceinline__ void hgemm_ws_body(int M, int N, int K, float alpha, const __half* __restrict__ A,
                                              const __half* __restrict__ B, float beta, float* __restrict__ C,
                                              unsigned smem, int m0, int n0) {
    const unsigned full_bar = smem + STAGES * STAGE_BYTES, empty_bar = full_bar + 8 * STAGES;
    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
    const int KT = (K + BK - 1) / BK;

    if (wg == 0) {
        // Producer: issue tile kt, publish tile kt - LAG (its copies are then complete for this thread).
        for (int kt = 0; kt < KT; ++kt) {
            const int s = kt % STAGES, n = kt / STAGES;
            if (n >= 1) mbar_wait(empty_bar + 8 * s, (n - 1) & 1);  // consumers are done with fill n - 1
            load_stage<ALIGNED>(smem + s * STAGE_BYTES, tid, m0, n0, kt * BK, M, N, K, A, B);
            cp_async_commit();
            if (kt >= LAG) {
                cp_async_wait<LAG>();  // this thread's copies of tile kt - LAG have landed ...
                fence_proxy_async();   // ... are visible to the tensor cores' proxy ...
                mbar_arrive(full_bar + 8 * ((kt - LAG) % STAGES));  // ... and are published
            }
        }
        cp_async_wait<0>();
        fence_proxy_async();
        for (int kt = KT > LAG ? KT - LAG : 0; kt < KT; ++kt) mbar_arrive(full_bar + 8 * (kt % STAGES));
        return;
    }

    // Consumer warpgroups 1 and 2: rows 64 (wg - 1) .. + 63 of the block tile.
    const int cw = wg - 1;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    for (int kt = 0; kt < KT; ++kt) {
        const int s = kt % STAGES;
        const unsigned st = smem + s * STAGE_BYTES;
        mbar_wait(full_bar + 8 * s, (kt / STAGES) & 1);  // all 128 producer threads published tile kt
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

    const int row0 = m0 + cw * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const int col = n0 + j * 8 + (lane % 4) * 2;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + h * 8;
            if (row >= M) continue;
            float* c = C + (size_t)row * N + col;
            const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
            if (ALIGNED) {  // N % 8 == 0: both columns are in range together
                if (col < N) {
                    float2 o = *reinterpret_cast<float2*>(c);
                    o.x = alpha * v0 + beta * o.x;
                    o.y = alpha * v1 + beta * o.y;
                    *reinterpret_cast<float2*>(c) = o;
                }
            } else {
                if (col < N) c[0] = alpha * v0 + beta * c[0];
                if (col + 1 < N) c[1] = alpha * v1 + beta * c[1];
            }
        }
    }
}

template <int STAGES>
__global__ void __launch_bounds__(384, 1)
hgemm_wgmma_ws(int M, int N, int K, float alpha, const __half* __restrict__ A, const __half* __restrict__ B,
               float beta, float* __restrict__ C) {
    // STAGES * 48 KB of tiles, then STAGES "full" and STAGES "empty" mbarriers; 1 KB of slack for rounding the
    // base up to the swizzle atom's 1024-byte alignment.
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const unsigned smem = (smem_u32(smem_raw) + 1023) & ~1023u;
    const unsigned full_bar = smem + STAGES * STAGE_BYTES, empty_bar = full_bar + 8 * STAGES;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, 128);  // every producer thread, once its copies of the tile are in
            mbar_init(empty_bar + 8 * s, 8);   // lane 0 of each of the 8 consumer warps
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();  // the only block-wide barrier

    // Grouped rasterisation (as in step 12): GROUP block rows walked column by column.
    constexpr int GROUP = 8;
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int bid = blockIdx.x;
    const int first_m = bid / (GROUP * grid_n) * GROUP, gsize = min(grid_m - first_m, GROUP);
    const int m0 = (first_m + (bid % (GROUP * grid_n)) % gsize) * BM;
    const int n0 = (bid % (GROUP * grid_n)) / gsize * BN;

    const bool aligned = (K % 8 == 0) && (N % 8 == 0) &&
                         (((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B) |
                            reinterpret_cast<unsigned long long>(C)) & 15) == 0);
    if (aligned)
        hgemm_ws_body<true, STAGES>(M, N, K, alpha, A, B, beta, C, smem, m0, n0);
    else
        hgemm_ws_body<false, STAGES>(M, N, K, alpha, A, B, beta, C, smem, m0, n0);
}

/* @plan
[[launch]]
kernel = "hgemm_wgmma_ws<4>"
grid = ["cdiv(M, 128) * cdiv(N, 256)"]
block = [384]
shared_bytes = "4 * (128 + 256) * 64 * 2 + 2 * 4 * 8 + 1024"
*/

// Step 11 - tuned tensor-core HGEMM: mma.sync m16n8k16 + ldmatrix, multi-stage cp.async, padded shared memory.
// Change versus 10: (1) a 256 x 128 block tile with BK = 64 (16 warps of 64 x 32, 4 x 4 mma tiles of 16 x 8 each):
// twice the work per block and half the barriers per k of step 10, and 25% less L2 traffic per FLOP than 128 x 128
// (at 128 x 128, L2 throughput was the busiest unit in Nsight Compute); (2) fragments come from ldmatrix (A) and
// ldmatrix.trans (B, stored k-major as in global memory) straight into the registers the PTX mma.sync instruction
// expects, instead of WMMA's generic loads; (3) shared rows are padded by 16 bytes, so the 8 row addresses of every
// 8x8 ldmatrix fall in 8 different 16-byte bank groups (conflict-free); (4) 3 stages of cp.async copies in flight,
// zero-filled at the edges, with loop-invariant addressing computed once; (5) blocks are rasterised in groups of 8
// block rows so that concurrently running blocks share A and B panels in L2.
// Prediction: 3x over step 10, but well under cuBLAS, which uses Hopper's wgmma (sm_90a; the next chapter):
// mma.sync keeps the tensor pipe under half busy here.
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool pred) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void cp_async16_always(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async16_zfill(unsigned dst, const void* src, bool pred) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(pred ? 16 : 0));
}
// Four 8x8 b16 matrices from shared memory (byte address); lanes 8i..8i+7 give the row addresses of matrix i.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
// D = A(16x16, row) * B(16x8, col) + D, FP16 inputs, FP32 accumulators.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool ALIGNED>
__device__ __forceinline__ void hgemm_mma_body(int M, int N, int K, float alpha, const __half* __restrict__ A,
                                               const __half* __restrict__ B, float beta, float* __restrict__ C,
                                               __half* smem) {
    constexpr int WARPS_N = BN / WN;
    constexpr int NT = (BM / WM) * WARPS_N * 32;
    constexpr int AS = BK + 8, BS = BN + 8;           // padded rows, in halves (+16 bytes)
    constexpr int STAGE = BM * AS + BK * BS;           // halves per stage: A tile [BM][AS], then B tile [BK][BS]
    constexpr int MT = WM / 16, NT8 = WN / 8;          // mma tiles per warp
    static_assert((BM * BK / 8) % NT == 0 && (BK * BN / 8) % NT == 0 && NT8 % 2 == 0 && BK % 16 == 0, "shape");

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;

    // Grouped rasterisation: walk GROUP block rows column by column, so the blocks resident at one time read a
    // few A row panels and B column panels, and re-read them from L2 rather than HBM.
    constexpr int GROUP = 8;
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int bid = blockIdx.x;
    const int group = bid / (GROUP * grid_n), first_m = group * GROUP;
    const int gsize = min(grid_m - first_m, GROUP);
    const int bm = first_m + (bid % (GROUP * grid_n)) % gsize;
    const int bn = (bid % (GROUP * grid_n)) / gsize;
    const int m0 = bm * BM, n0 = bn * BN;

    // Copy descriptors: each thread moves CA 16-byte pieces of the A tile and CB of the B tile per stage; the
    // sources and shared destinations are fixed up to the k offset and the stage, so they are computed once.
    constexpr int CA = BM * BK / 8 / NT, CB = BK * BN / 8 / NT;
    const __half* a_src[CA];
    unsigned a_dst[CA];
    int a_row[CA], a_col[CA];
#pragma unroll
    for (int i = 0; i < CA; ++i) {
        const int idx = tid + i * NT, r = idx / (BK / 8), c = (idx % (BK / 8)) * 8;
        a_row[i] = m0 + r; a_col[i] = c;
        a_src[i] = A + (size_t)min(m0 + r, M - 1) * K + c;
        a_dst[i] = (r * AS + c) * 2;
    }
    const __half* b_src[CB];
    unsigned b_dst[CB];
    int b_row[CB], b_col[CB];
#pragma unroll
    for (int i = 0; i < CB; ++i) {
        const int idx = tid + i * NT, r = idx / (BN / 8), c = (idx % (BN / 8)) * 8;
        b_row[i] = r; b_col[i] = n0 + c;
        b_src[i] = B + (size_t)r * N + min(n0 + c, N - 1);
        b_dst[i] = (BM * AS + r * BS + c) * 2;
    }
    const unsigned smem_base = smem_u32(smem);
    const bool interior = (m0 + BM <= M) && (n0 + BN <= N);
    auto load_stage = [&](int stage, int k0) {
        const unsigned st = smem_base + stage * STAGE * 2;
        if (ALIGNED) {
            if (interior && k0 + BK <= K) {  // block-uniform: inner tiles need no bounds tests
#pragma unroll
                for (int i = 0; i < CA; ++i) cp_async16_always(st + a_dst[i], a_src[i] + k0);
#pragma unroll
                for (int i = 0; i < CB; ++i) cp_async16_always(st + b_dst[i], b_src[i] + (size_t)k0 * N);
            } else {  // zero-fill what lies outside (K % 8 == 0 and N % 8 == 0: pieces are all in or all out)
#pragma unroll
                for (int i = 0; i < CA; ++i)
                    cp_async16_zfill(st + a_dst[i], a_src[i] + k0, a_row[i] < M && k0 + a_col[i] < K);
#pragma unroll
                for (int i = 0; i < CB; ++i)
                    cp_async16_zfill(st + b_dst[i], b_src[i] + (size_t)k0 * N, k0 + b_row[i] < K && b_col[i] < N);
            }
        } else {  // unaligned rows: element-wise loads with bounds checks, plain shared stores
            __half* As = smem + stage * STAGE;
#pragma unroll
            for (int i = 0; i < CA; ++i) {
                __align__(16) __half h[8];
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    h[q] = (a_row[i] < M && k0 + a_col[i] + q < K) ? A[(size_t)a_row[i] * K + k0 + a_col[i] + q]
                                                                    : __float2half(0.0f);
                *reinterpret_cast<uint4*>(As + a_dst[i] / 2) = *reinterpret_cast<uint4*>(h);
            }
#pragma unroll
            for (int i = 0; i < CB; ++i) {
                __align__(16) __half h[8];
#pragma unroll
                for (int q = 0; q < 8; ++q)
                    h[q] = (k0 + b_row[i] < K && b_col[i] + q < N) ? B[(size_t)(k0 + b_row[i]) * N + b_col[i] + q]
                                                                    : __float2half(0.0f);
                *reinterpret_cast<uint4*>(As + b_dst[i] / 2) = *reinterpret_cast<uint4*>(h);
            }
        }
    };

    float acc[MT][NT8][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT8; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

    const int KT = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load_stage(s, s * BK);
        cp_async_commit();
    }
    // Per-lane ldmatrix row addresses (see the PTX fragment layouts): A x4 = rows 0-15 at k 0 and k 8;
    // B x4.trans = k rows 0-7 / 8-15 at n 0 and n 8. Byte offsets inside a stage.
    const unsigned a_frag = ((wm0 + lane % 16) * AS + (lane / 16) * 8) * 2;
    const unsigned b_frag = (BM * AS + ((lane % 8) + ((lane / 8) % 2) * 8) * BS + wn0 + (lane / 16) * 8) * 2;

    int read_stage = 0, write_stage = STAGES - 1;
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        if (kt + STAGES - 1 < KT) load_stage(write_stage, (kt + STAGES - 1) * BK);
        cp_async_commit();
        write_stage = (write_stage + 1 == STAGES) ? 0 : write_stage + 1;
        const unsigned st = smem_base + read_stage * STAGE * 2;
        read_stage = (read_stage + 1 == STAGES) ? 0 : read_stage + 1;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned af[MT][4], bf[NT8 / 2][4];
#pragma unroll
            for (int i = 0; i < MT; ++i) ldmatrix_x4(af[i], st + a_frag + (i * 16 * AS + kk) * 2);
#pragma unroll
            for (int j = 0; j < NT8 / 2; ++j) ldmatrix_x4_trans(bf[j], st + b_frag + (kk * BS + j * 16) * 2);
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT8; ++j) mma_16816(acc[i][j], af[i], bf[j / 2][(j % 2) * 2], bf[j / 2][(j % 2) * 2 + 1]);
        }
    }
    cp_async_wait<0>();

    // Accumulator layout of m16n8: lane holds rows lane/4 and lane/4 + 8, columns 2*(lane%4) and +1.
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m0 + wm0 + i * 16 + lane / 4 + h * 8;
                const int col = n0 + wn0 + j * 8 + (lane % 4) * 2;
                if (row >= M) continue;
                float* c = C + (size_t)row * N + col;
                const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
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

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int MINB>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
hgemm_mma(int M, int N, int K, float alpha, const __half* __restrict__ A, const __half* __restrict__ B, float beta,
          float* __restrict__ C) {
    extern __shared__ __align__(16) __half smem[];  // STAGES * (BM * (BK + 8) + BK * (BN + 8)) halves
    const bool aligned = (K % 8 == 0) && (N % 8 == 0) &&
                         (((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B) |
                            reinterpret_cast<unsigned long long>(C)) & 15) == 0);
    if (aligned)
        hgemm_mma_body<BM, BN, BK, WM, WN, STAGES, true>(M, N, K, alpha, A, B, beta, C, smem);
    else
        hgemm_mma_body<BM, BN, BK, WM, WN, STAGES, false>(M, N, K, alpha, A, B, beta, C, smem);
}

/* @plan
[[launch]]
kernel = "hgemm_mma<256, 128, 64, 64, 32, 3, 1>"
grid = ["cdiv(M, 256) * cdiv(N, 128)"]
block = [512]
shared_bytes = "3 * (256 * (64 + 8) + 64 * (128 + 8)) * 2"
*/

// Step 09 - multi-stage cp.async pipeline.
// Change versus 08: tiles go from global to shared memory with cp.async (LDGSTS), which copies without passing
// through registers, into a ring of STAGES = 4 shared buffers: three tiles are in flight while the fourth is used,
// with one __syncthreads per tile instead of two, and no staging registers. A is still transposed on the way in
// (As[k][m]) by 4-byte copies that consecutive threads issue along k (coalesced reads); B moves in 16-byte copies.
// Out-of-range elements are zero-filled by the copy itself (src-size 0), so ragged edges need no branch in the math.
// The plan: 4 warps of 128 x 32 (16 x 8 outputs per lane, 128 accumulators, as in step 08) per 128 x 128 block, and
// 2 blocks per SM, so one block's barrier wait is covered by the other block's FFMAs.
// Prediction: ~85-90% of cuBLAS; FFMA issue (FFMA is ~85% of the main loop's instructions in SASS) and barrier
// stalls are what remains. Measured: 88.9%, below step 08's register prefetch (92.6%); at 08's own
// 128 x 256 tile this ring reaches 82.7%, and 3 to 6 stages measure the same. Copying A with 4-byte cp.async to
// transpose it costs 4 copies per thread per tile where 08 issues one 16-byte load and 4 shared stores.

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// Copy 4 / 16 bytes global -> shared asynchronously; when pred is false, nothing is read and zeros are written.
__device__ __forceinline__ void cp_async4(void* dst, const void* src, bool pred) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(pred ? 4 : 0));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool pred) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool VEC>
__device__ __forceinline__ void sgemm_cp_async_body(int M, int N, int K, float alpha, const float* __restrict__ A,
                                                    const float* __restrict__ B, float beta, float* __restrict__ C,
                                                    float* smem) {
    constexpr int WARPS_N = BN / WN;
    constexpr int NT = (BM / WM) * WARPS_N * 32;
    constexpr int AS = BM + 4;              // As[k][m], padded
    constexpr int BUF = BK * AS + BK * BN;  // floats per stage
    constexpr int MSUB = WM / 32, NSUB = WN / 16;
    constexpr int TM = MSUB * 4, TN = NSUB * 4;
    static_assert((BM * BK) % NT == 0 && (BK * BN) % (4 * NT) == 0, "tiles must split evenly over the threads");

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const int lm = lane >> 2, ln = lane & 3;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    // Copy descriptors, fixed up to the k offset: computed once. A is copied one float at a time (consecutive
    // threads along k: coalesced reads) and written transposed to As[k][m]; B in 16-byte pieces when aligned.
    constexpr int CA = BM * BK / NT;
    constexpr int WB = VEC ? 4 : 1, CB = BK * BN / WB / NT;
    const float* a_src[CA];
    int a_dst[CA], a_row[CA], a_col[CA];
#pragma unroll
    for (int i = 0; i < CA; ++i) {
        const int idx = tid + i * NT, r = idx / BK, c = idx % BK;
        a_row[i] = m0 + r; a_col[i] = c;
        a_src[i] = A + (size_t)min(m0 + r, M - 1) * K + c;
        a_dst[i] = c * AS + r;
    }
    const float* b_src[CB];
    int b_dst[CB], b_row[CB], b_col[CB];
#pragma unroll
    for (int i = 0; i < CB; ++i) {
        const int idx = tid + i * NT, r = idx / (BN / WB), c = (idx % (BN / WB)) * WB;
        b_row[i] = r; b_col[i] = n0 + c;
        b_src[i] = B + (size_t)r * N + min(n0 + c, N - 1);
        b_dst[i] = BK * AS + r * BN + c;
    }
    const bool interior = (m0 + BM <= M) && (n0 + BN <= N);
    auto load_stage = [&](float* st, int k0) {
        const bool full = interior && k0 + BK <= K;  // block-uniform: inner tiles need no bounds tests
#pragma unroll
        for (int i = 0; i < CA; ++i) cp_async4(st + a_dst[i], a_src[i] + k0, full || (a_row[i] < M && k0 + a_col[i] < K));
#pragma unroll
        for (int i = 0; i < CB; ++i) {
            const bool p = full || (k0 + b_row[i] < K && b_col[i] < N);
            if (VEC) cp_async16(st + b_dst[i], b_src[i] + (size_t)k0 * N, p);
            else cp_async4(st + b_dst[i], b_src[i] + (size_t)k0 * N, p);
        }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    const int KT = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load_stage(smem + s * BUF, s * BK);
        cp_async_commit();  // always commit (maybe an empty group) so the group count stays in step
    }
    int read_stage = 0, write_stage = STAGES - 1;
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<STAGES - 2>();  // tile kt has landed (for this thread) ...
        __syncthreads();              // ... for all threads; and everyone is done with tile kt-1's stage
        if (kt + STAGES - 1 < KT) load_stage(smem + write_stage * BUF, (kt + STAGES - 1) * BK);
        cp_async_commit();
        write_stage = (write_stage + 1 == STAGES) ? 0 : write_stage + 1;
        // This lane's corner of the stage: every shared load below is this pointer plus a compile-time offset.
        const float* Aw = smem + read_stage * BUF + wm0 + lm * 4;
        const float* Bw = smem + read_stage * BUF + BK * AS + wn0 + ln * 4;
        read_stage = (read_stage + 1 == STAGES) ? 0 : read_stage + 1;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float ra[TM], rb[TN];
#pragma unroll
            for (int s = 0; s < MSUB; ++s) {
                const float4 v = *reinterpret_cast<const float4*>(&Aw[k * AS + s * 32]);
                ra[4 * s] = v.x; ra[4 * s + 1] = v.y; ra[4 * s + 2] = v.z; ra[4 * s + 3] = v.w;
            }
#pragma unroll
            for (int s = 0; s < NSUB; ++s) {
                const float4 v = *reinterpret_cast<const float4*>(&Bw[k * BN + s * 16]);
                rb[4 * s] = v.x; rb[4 * s + 1] = v.y; rb[4 * s + 2] = v.z; rb[4 * s + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
        }
    }
    cp_async_wait<0>();

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + wm0 + (i / 4) * 32 + lm * 4 + (i % 4);
        if (row >= M) continue;
        float* c_row = C + (size_t)row * N;
#pragma unroll
        for (int s = 0; s < NSUB; ++s) {
            const int col = n0 + wn0 + s * 16 + ln * 4;
            const float* a = &acc[i][4 * s];
            if (VEC) {
                if (col < N) {
                    float4 c = *reinterpret_cast<float4*>(c_row + col);
                    c.x = alpha * a[0] + beta * c.x;
                    c.y = alpha * a[1] + beta * c.y;
                    c.z = alpha * a[2] + beta * c.z;
                    c.w = alpha * a[3] + beta * c.w;
                    *reinterpret_cast<float4*>(c_row + col) = c;
                }
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    if (col + q < N) c_row[col + q] = alpha * a[q] + beta * c_row[col + q];
            }
        }
    }
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int MINB>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
sgemm_cp_async(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
               float beta, float* __restrict__ C) {
    extern __shared__ __align__(16) float smem[];  // STAGES * (BK * (BM + 4) + BK * BN) floats
    const bool vec = (N % 4 == 0) && (((reinterpret_cast<unsigned long long>(B) |
                                         reinterpret_cast<unsigned long long>(C)) & 15) == 0);
    if (vec)
        sgemm_cp_async_body<BM, BN, BK, WM, WN, STAGES, true>(M, N, K, alpha, A, B, beta, C, smem);
    else
        sgemm_cp_async_body<BM, BN, BK, WM, WN, STAGES, false>(M, N, K, alpha, A, B, beta, C, smem);
}

/* @plan
[[launch]]
kernel = "sgemm_cp_async<128, 128, 8, 128, 32, 4, 2>"
grid = ["cdiv(N, 128)", "cdiv(M, 128)"]
block = [128]
shared_bytes = "4 * (8 * (128 + 4) + 8 * 128) * 4"
*/

// Step 08 - warp tiling, with the next tile's loads in flight during the math.
// Change versus 07: the block tile is cut into warp tiles (the plan: 128 x 256, BK = 8, 8 warps of 128 x 32 in a
// 1 x 8 row), and inside a warp the 32 lanes form an 8 x 4 grid. Each lane's outputs are sub-tiles of 4 x 4 spaced 32
// rows and 16 columns apart (16 x 8 outputs per lane here: 4 x 2 sub-tiles), so for one k the warp reads 8
// consecutive float4 of A and 4 consecutive float4 of B: every shared load is one conflict-free wavefront (as step
// 07's TN = 4 already made them, where 06 read B float4s 32 bytes apart), and each lane does 128 FFMAs per 6 shared
// loads.
// Loop-invariant addressing (global sources, shared destinations, each lane's corner of the tile) is computed once;
// tiles inside the matrices skip bounds tests.
// Loads stay synchronous into one shared buffer (two __syncthreads per tile), but with PREFETCH the global loads of
// tile k + 1 are issued into registers right after the barrier that publishes tile k, and stored to shared memory
// only after tile k's math: their latency hides behind 1024 FFMAs per lane instead of stalling the block. That is
// what lets one block of 8 warps (231 registers, so 1 block per SM) run the large 128 x 256 tile, which reads half
// as many bytes per FLOP from L2 as 128 x 128.
// Measured: without PREFETCH the best plan (128 x 128, 8 warps of 64 x 32, 2 blocks per SM) reaches
// ~80% of cuBLAS and this 128 x 256 plan 61%; with it, 92-93%. Prediction was ~85%.

template <int BM, int BN, int BK, int WM, int WN, bool PREFETCH, bool VEC>
__device__ __forceinline__ void sgemm_warptiling_body(int M, int N, int K, float alpha, const float* __restrict__ A,
                                                      const float* __restrict__ B, float beta,
                                                      float* __restrict__ C, float* smem) {
    constexpr int WARPS_N = BN / WN;
    constexpr int NT = (BM / WM) * WARPS_N * 32;
    constexpr int AS = BM + 4;                  // transposed A tile row (As[k][m]), padded: no store conflicts
    constexpr int MSUB = WM / 32, NSUB = WN / 16;  // 4x4 sub-tiles per lane: lanes are 8 (m) x 4 (n)
    constexpr int TM = MSUB * 4, TN = NSUB * 4;
    constexpr int W = VEC ? 4 : 1;              // floats per global load
    constexpr int CA = BM * BK / W / NT, CB = BK * BN / W / NT;
    static_assert((BM * BK) % (4 * NT) == 0 && (BK * BN) % (4 * NT) == 0, "tiles must split evenly over the threads");

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const int lm = lane >> 2, ln = lane & 3;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    // Load descriptors, fixed up to the k offset: computed once.
    const float* a_src[CA];
    int a_dst[CA], a_row[CA], a_col[CA];
#pragma unroll
    for (int i = 0; i < CA; ++i) {
        const int idx = tid + i * NT, r = idx / (BK / W), c = (idx % (BK / W)) * W;
        a_row[i] = m0 + r; a_col[i] = c;
        a_src[i] = A + (size_t)min(m0 + r, M - 1) * K + c;
        a_dst[i] = c * AS + r;  // element (r, c) of A goes to As[c][r]
    }
    const float* b_src[CB];
    int b_dst[CB], b_row[CB], b_col[CB];
#pragma unroll
    for (int i = 0; i < CB; ++i) {
        const int idx = tid + i * NT, r = idx / (BN / W), c = (idx % (BN / W)) * W;
        b_row[i] = r; b_col[i] = n0 + c;
        b_src[i] = B + (size_t)r * N + min(n0 + c, N - 1);
        b_dst[i] = BK * AS + r * BN + c;
    }
    const bool interior = (m0 + BM <= M) && (n0 + BN <= N);

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    // This lane's corner of the tile: every shared load below is this pointer plus a compile-time offset.
    const float* Aw = smem + wm0 + lm * 4;
    const float* Bw = smem + BK * AS + wn0 + ln * 4;
    // A tile's global values pass through registers (4 floats per load, or 1 on the scalar path) on their way to
    // shared memory. With PREFETCH, the next tile's loads are issued before this tile's math, so their latency is
    // covered by the FFMAs instead of by the other resident block alone.
    constexpr bool PF = PREFETCH && VEC;  // the scalar path (ragged K or N) stays simple
    float va[CA][W], vb[CB][W];
    auto fetch_a = [&](int i, int k0, bool full) {
        const bool p = full || (a_row[i] < M && k0 + a_col[i] < K);
        if (VEC) {
            const float4 v = p ? *reinterpret_cast<const float4*>(a_src[i] + k0) : make_float4(0.f, 0.f, 0.f, 0.f);
            va[i][0] = v.x; va[i][W > 1 ? 1 : 0] = v.y; va[i][W > 2 ? 2 : 0] = v.z; va[i][W > 3 ? 3 : 0] = v.w;
        } else {
            va[i][0] = p ? a_src[i][k0] : 0.0f;
        }
    };
    auto fetch_b = [&](int i, int k0, bool full) {
        const bool p = full || (k0 + b_row[i] < K && b_col[i] < N);
        if (VEC) {
            const float4 v = p ? *reinterpret_cast<const float4*>(b_src[i] + (size_t)k0 * N) : make_float4(0.f, 0.f, 0.f, 0.f);
            vb[i][0] = v.x; vb[i][W > 1 ? 1 : 0] = v.y; vb[i][W > 2 ? 2 : 0] = v.z; vb[i][W > 3 ? 3 : 0] = v.w;
        } else {
            vb[i][0] = p ? b_src[i][(size_t)k0 * N] : 0.0f;
        }
    };
    auto store_a = [&](int i) {
#pragma unroll
        for (int q = 0; q < W; ++q) smem[a_dst[i] + q * AS] = va[i][q];  // element (r, c + q) of A goes to As[c + q][r]
    };
    auto store_b = [&](int i) {
        if (VEC) *reinterpret_cast<float4*>(smem + b_dst[i]) = make_float4(vb[i][0], vb[i][W > 1 ? 1 : 0], vb[i][W > 2 ? 2 : 0], vb[i][W > 3 ? 3 : 0]);
        else smem[b_dst[i]] = vb[i][0];
    };
    // block-uniform: inner tiles need no bounds tests
    auto full_tile = [&](int k0) { return interior && k0 + BK <= K; };
    if (PF) {
#pragma unroll
        for (int i = 0; i < CA; ++i) fetch_a(i, 0, full_tile(0));
#pragma unroll
        for (int i = 0; i < CB; ++i) fetch_b(i, 0, full_tile(0));
    }
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool full = full_tile(k0);
#pragma unroll
        for (int i = 0; i < CA; ++i) {
            if (!PF) fetch_a(i, k0, full);
            store_a(i);
        }
#pragma unroll
        for (int i = 0; i < CB; ++i) {
            if (!PF) fetch_b(i, k0, full);
            store_b(i);
        }
        __syncthreads();
        if (PF && k0 + BK < K) {
            const bool next_full = full_tile(k0 + BK);
#pragma unroll
            for (int i = 0; i < CA; ++i) fetch_a(i, k0 + BK, next_full);
#pragma unroll
            for (int i = 0; i < CB; ++i) fetch_b(i, k0 + BK, next_full);
        }
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
        __syncthreads();
    }

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

template <int BM, int BN, int BK, int WM, int WN, int MINB, bool PREFETCH>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MINB)
sgemm_warptiling(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                 float beta, float* __restrict__ C) {
    __shared__ __align__(16) float smem[BK * (BM + 4) + BK * BN];
    // The same for every thread of the grid, so the branch never diverges.
    const bool vec = (K % 4 == 0) && (N % 4 == 0) &&
                     (((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B) |
                        reinterpret_cast<unsigned long long>(C)) & 15) == 0);
    if (vec)
        sgemm_warptiling_body<BM, BN, BK, WM, WN, PREFETCH, true>(M, N, K, alpha, A, B, beta, C, smem);
    else
        sgemm_warptiling_body<BM, BN, BK, WM, WN, PREFETCH, false>(M, N, K, alpha, A, B, beta, C, smem);
}

/* @plan
[[launch]]
kernel = "sgemm_warptiling<128, 256, 8, 128, 32, 1, true>"
grid = ["cdiv(N, 256)", "cdiv(M, 128)"]
block = [256]
*/

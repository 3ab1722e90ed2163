// Step 07 - autotuned block and thread tiles.
// Change versus 06: the same kernel, but BM, BN, BK (block tile) and TM, TN (thread tile) are chosen by measuring
// every valid combination at 4096^3 on the target GPU (a tuner that times each one and rewrites the plan
// below). The best tile trades registers (TM*TN accumulators), occupancy (threads and shared memory per block),
// the number of loads per FFMA and the wave count over 132 SMs, which is hard to predict by hand.
// Prediction: a few percent to ~10% over 06 (~80% of cuBLAS).
// AUTOTUNE-RESULT: BM=128 BN=128 BK=32 TM=16 TN=4 (256 threads): 3.468 ms, 39.6 TFLOP/s, 78.5% of cuBLAS at 4096^3 on NVIDIA H200, 2026-12-02 (46 of 47 candidates passed)

template <int BM, int BN, int BK, int TM, int TN, bool VEC>
__device__ __forceinline__ void sgemm_autotuned_body(int M, int N, int K, float alpha, const float* __restrict__ A,
                                                      const float* __restrict__ B, float beta,
                                                      float* __restrict__ C, float* As, float* Bs) {
    constexpr int NT = (BM / TM) * (BN / TN);
    constexpr int AS = BM + 4;  // padded row of the transposed A tile (As[k][m])

    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int trow = (tid / (BN / TN)) * TM, tcol = (tid % (BN / TN)) * TN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    float ra[TM], rb[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
        if (VEC) {
#pragma unroll
            for (int idx = tid; idx < BM * BK / 4; idx += NT) {
                const int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                if (m0 + r < M && k0 + c < K) v = *reinterpret_cast<const float4*>(A + (size_t)(m0 + r) * K + k0 + c);
                As[(c + 0) * AS + r] = v.x;
                As[(c + 1) * AS + r] = v.y;
                As[(c + 2) * AS + r] = v.z;
                As[(c + 3) * AS + r] = v.w;
            }
#pragma unroll
            for (int idx = tid; idx < BK * BN / 4; idx += NT) {
                const int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                if (k0 + r < K && n0 + c < N) v = *reinterpret_cast<const float4*>(B + (size_t)(k0 + r) * N + n0 + c);
                *reinterpret_cast<float4*>(&Bs[r * BN + c]) = v;
            }
        } else {
#pragma unroll
            for (int idx = tid; idx < BM * BK; idx += NT) {
                const int r = idx / BK, c = idx % BK;
                As[c * AS + r] = (m0 + r < M && k0 + c < K) ? A[(size_t)(m0 + r) * K + k0 + c] : 0.0f;
            }
#pragma unroll
            for (int idx = tid; idx < BK * BN; idx += NT) {
                const int r = idx / BN, c = idx % BN;
                Bs[r * BN + c] = (k0 + r < K && n0 + c < N) ? B[(size_t)(k0 + r) * N + n0 + c] : 0.0f;
            }
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&As[k * AS + trow + i]);
                ra[i] = v.x; ra[i + 1] = v.y; ra[i + 2] = v.z; ra[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[k * BN + tcol + j]);
                rb[j] = v.x; rb[j + 1] = v.y; rb[j + 2] = v.z; rb[j + 3] = v.w;
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
        const int row = m0 + trow + i;
        if (row >= M) continue;
        float* c_row = C + (size_t)row * N;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = n0 + tcol + j;
            if (VEC) {
                if (col < N) {  // N % 4 == 0: the whole float4 is inside
                    float4 c = *reinterpret_cast<float4*>(c_row + col);
                    c.x = alpha * acc[i][j] + beta * c.x;
                    c.y = alpha * acc[i][j + 1] + beta * c.y;
                    c.z = alpha * acc[i][j + 2] + beta * c.z;
                    c.w = alpha * acc[i][j + 3] + beta * c.w;
                    *reinterpret_cast<float4*>(c_row + col) = c;
                }
            } else {
#pragma unroll
                for (int jj = 0; jj < 4; ++jj)
                    if (col + jj < N) c_row[col + jj] = alpha * acc[i][j + jj] + beta * c_row[col + jj];
            }
        }
    }
}

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_autotuned(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                 float beta, float* __restrict__ C) {
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0 && BN % 4 == 0, "float4 tiles");
    // Declared here, not in the body: each instantiation of the body would get its own copy.
    __shared__ __align__(16) float As[BK * (BM + 4)];
    __shared__ __align__(16) float Bs[BK * BN];
    // The same for every thread of the grid, so the branch never diverges.
    const bool vec = (K % 4 == 0) && (N % 4 == 0) &&
                     (((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B) |
                        reinterpret_cast<unsigned long long>(C)) & 15) == 0);
    if (vec)
        sgemm_autotuned_body<BM, BN, BK, TM, TN, true>(M, N, K, alpha, A, B, beta, C, As, Bs);
    else
        sgemm_autotuned_body<BM, BN, BK, TM, TN, false>(M, N, K, alpha, A, B, beta, C, As, Bs);
}

/* @plan
[[launch]]
kernel = "sgemm_autotuned<128, 128, 32, 16, 4>"
grid = ["cdiv(N, 128)", "cdiv(M, 128)"]
block = [256]
*/

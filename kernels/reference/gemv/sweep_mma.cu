// Sweep template for gemv (kernels/tools/sweep.py; variants in sweep.toml beside it). Derived from step 03
// (03_tensor_cores.cu: mma.sync m16n8k16 with fragments loaded straight from global memory, see its header); the
// defaults are step 03's configuration and take its code path. What the placeholders vary, and why:
// - MT m-tiles (16 rows each) per warp: rows per block 16 * MT (split K) or WARPS * 16 * MT (whole rows). More rows
//   per block re-read x fewer times: at B = 8 each 16-row tile re-reads all of x (128 KB) from L2 against 256 KB of
//   W, so L2-to-SM traffic is 1.5x W's bytes at MT = 1, 1.25x at MT = 2, 1.125x at MT = 4.
// - WARPS per block, U chunks (32 k each) in flight per warp before the mma's: bytes of W in flight per SM.
// - MINB: __launch_bounds__' blocks per SM, a register cap (step 03: 4 blocks of 256 threads, 64 registers, so the
//   512 blocks at N = 8192 are all resident at once).
// - WHOLE: each warp owns its 16 * MT rows over the whole of K (no shared-memory reduction, no barrier) instead of
//   the block's warps splitting K (chunk c to warp c % WARPS, so a block streams 64 * WARPS contiguous bytes per row).
// - W_HINT: the L2::256B prefetch hint on W's loads (on in step 03; header: 77% -> 83% at B = 8 in development).
// - PERSIST: a persistent grid (GRID = SMS * k blocks) whose blocks loop over row tiles, instead of one block per tile.
// The 16-byte path needs K % 8 == 0 and 16-byte aligned W and x (tested once per launch); otherwise the same
// fragments are gathered element by element, as in step 03.
#include <cuda_bf16.h>

constexpr int WARPS = ${WARPS};       // warps per block
constexpr int U = ${U};               // chunks of 32 k in flight per warp
constexpr int MT = ${MT};             // 16-row m-tiles per warp
constexpr int MINB = ${MINB};         // __launch_bounds__ min blocks per SM
constexpr bool WHOLE = ${WHOLE};      // warps own whole rows (else the block's warps split K)
constexpr bool PERSIST = ${PERSIST};  // blocks loop over row tiles (grid stride)
constexpr int THREADS = WARPS * 32;
constexpr int TILE_ROWS = WHOLE ? WARPS * 16 * MT : 16 * MT;  // rows per block per tile

__device__ __forceinline__ uint4 load_once(const void* p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate${W_HINT}.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}
__device__ __forceinline__ unsigned short bf16_bits(const __nv_bfloat16* p) {
    return __bfloat16_as_ushort(*p);
}
// The 8 elements row[k .. k+7], zeros for k past K or a row that does not exist. VEC: k % 8 == 0, row 16-byte aligned.
template <bool VEC, bool STREAM>
__device__ __forceinline__ uint4 piece(const __nv_bfloat16* row, int k, int K, bool row_ok) {
    if constexpr (VEC) {
        if (!row_ok || k >= K) return make_uint4(0, 0, 0, 0);
        return STREAM ? load_once(row + k) : __ldg(reinterpret_cast<const uint4*>(row + k));
    } else {
        unsigned u[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const unsigned lo = row_ok && k + 2 * i < K ? bf16_bits(row + k + 2 * i) : 0u;
            const unsigned hi = row_ok && k + 2 * i + 1 < K ? bf16_bits(row + k + 2 * i + 1) : 0u;
            u[i] = lo | (hi << 16);
        }
        return make_uint4(u[0], u[1], u[2], u[3]);
    }
}
// D += A (16 x 16, row-major) * B (16 x 8, column-major), BF16 in, FP32 accumulate.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                               unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// One tile: rows tile * TILE_ROWS onward. Split K: all warps share the tile's 16 * MT rows, chunk c goes to warp
// c % WARPS, partial sums meet in shared memory. Whole rows: warp w owns rows 16 * MT * w onward of the tile and
// walks all chunks itself, writing y from its fragments. U: chunks in flight (the gather path takes at most 2, so
// that its scalar loads do not set the kernel's register count).
template <bool VEC, int U>
__device__ __forceinline__ void gemv_tile(int tile, int N, int K, int B, const __nv_bfloat16* __restrict__ W,
                                          const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y,
                                          float (*sums)[MT][32][4]) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int row0 = tile * TILE_ROWS + (WHOLE ? warp * 16 * MT : 0);
    const __nv_bfloat16* w_lo[MT];
    const __nv_bfloat16* w_hi[MT];
    bool lo_ok[MT], hi_ok[MT];
#pragma unroll
    for (int m = 0; m < MT; ++m) {
        const int n_lo = row0 + 16 * m + g, n_hi = n_lo + 8;
        lo_ok[m] = n_lo < N;
        hi_ok[m] = n_hi < N;
        w_lo[m] = W + (size_t)(lo_ok[m] ? n_lo : 0) * K;
        w_hi[m] = W + (size_t)(hi_ok[m] ? n_hi : 0) * K;
    }
    const int chunks = (K + 31) / 32;
    const int c_first = WHOLE ? 0 : warp, c_step = WHOLE ? U : WARPS * U, u_step = WHOLE ? 1 : WARPS;
    for (int b0 = 0; b0 < B; b0 += 8) {
        const bool x_ok = b0 + g < B;
        const __nv_bfloat16* xg = x + (size_t)(x_ok ? b0 + g : 0) * K;
        float d[MT][4];
#pragma unroll
        for (int m = 0; m < MT; ++m) d[m][0] = d[m][1] = d[m][2] = d[m][3] = 0.0f;
        for (int c0 = c_first; c0 < chunks; c0 += c_step) {
            uint4 a_lo[U][MT], a_hi[U][MT], bx[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int k = (c0 + u * u_step) * 32 + 8 * t;
#pragma unroll
                for (int m = 0; m < MT; ++m) {
                    a_lo[u][m] = piece<VEC, true>(w_lo[m], k, K, lo_ok[m]);
                    a_hi[u][m] = piece<VEC, true>(w_hi[m], k, K, hi_ok[m]);
                }
                bx[u] = piece<VEC, false>(xg, k, K, x_ok);
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
#pragma unroll
                for (int m = 0; m < MT; ++m) {
                    mma_bf16_16816(d[m], a_lo[u][m].x, a_hi[u][m].x, a_lo[u][m].y, a_hi[u][m].y, bx[u].x, bx[u].y);
                    mma_bf16_16816(d[m], a_lo[u][m].z, a_hi[u][m].z, a_lo[u][m].w, a_hi[u][m].w, bx[u].z, bx[u].w);
                }
            }
        }
        // d[m][0], d[m][1]: row 16m + g, vectors 2t, 2t+1; d[m][2], d[m][3]: row 16m + g + 8.
        if constexpr (WHOLE) {
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int n = row0 + 16 * m + g + (j >= 2 ? 8 : 0);
                    const int b = b0 + 2 * t + (j & 1);
                    if (n < N && b < B) y[(size_t)b * N + n] = __float2bfloat16_rn(d[m][j]);
                }
        } else {  // add the warps' partial sums
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int j = 0; j < 4; ++j) sums[warp][m][lane][j] = d[m][j];
            __syncthreads();
            for (int idx = threadIdx.x; idx < 128 * MT; idx += THREADS) {  // once per thread where THREADS >= 128 MT
                const int m = idx >> 7, l = (idx >> 2) & 31, j = idx & 3;
                float s = 0.0f;
#pragma unroll
                for (int w = 0; w < WARPS; ++w) s += sums[w][m][l][j];
                const int n = row0 + 16 * m + (l >> 2) + (j >= 2 ? 8 : 0);
                const int b = b0 + 2 * (l & 3) + (j & 1);
                if (n < N && b < B) y[(size_t)b * N + n] = __float2bfloat16_rn(s);
                if constexpr (THREADS >= 128 * MT) break;
            }
            __syncthreads();  // sums is reused by the next 8 vectors (or the next tile)
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
gemv_sweep(int N, int K, int B, const __nv_bfloat16* __restrict__ W, const __nv_bfloat16* __restrict__ x,
           __nv_bfloat16* __restrict__ y) {
    __shared__ float sums[WHOLE ? 1 : WARPS][MT][32][4];
    const bool vectorised =
        K % 8 == 0 && ((reinterpret_cast<unsigned long long>(W) | reinterpret_cast<unsigned long long>(x)) & 15) == 0;
    if constexpr (PERSIST) {
        const int tiles = (N + TILE_ROWS - 1) / TILE_ROWS;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {  // block-uniform
            if (vectorised)
                gemv_tile<true, U>(tile, N, K, B, W, x, y, sums);
            else
                gemv_tile<false, (U < 2 ? U : 2)>(tile, N, K, B, W, x, y, sums);
        }
    } else {  // grid = cdiv(N, TILE_ROWS): one tile per block
        if (vectorised)
            gemv_tile<true, U>(blockIdx.x, N, K, B, W, x, y, sums);
        else
            gemv_tile<false, (U < 2 ? U : 2)>(blockIdx.x, N, K, B, W, x, y, sums);
    }
}

/* @plan
[[launch]]
kernel = "gemv_sweep"
grid = ["${GRID}"]
block = ["${WARPS} * 32"]
*/

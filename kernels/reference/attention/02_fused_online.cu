// Step 02 - fused attention with the online softmax (FlashAttention's loop, on CUDA cores)
// Change versus 01: one kernel, and no score ever reaches global memory. A block owns 64 query rows of one
// (batch, head) and walks the keys 64 at a time: the K and V tiles are staged in shared memory (as FP32), the
// 64 x 64 tile of scores is computed in registers (each of the 256 threads a 4 x 4 patch: rows 4 ty .. 4 ty + 3,
// keys tx, tx + 16, tx + 32, tx + 48), and the softmax is made online: every row keeps its running maximum m and
// sum l in FP32 (the 16 threads sharing a row agree on them through shuffles); when a tile raises m, l and the
// row's output accumulator are rescaled by exp(m_old - m_new) before the tile's P = exp(s - m_new) is added, so
// exp never sees a positive argument. P goes through shared memory to the P V product, where each thread
// accumulates 4 rows x head_dim / 16 columns of O in FP32 registers; O is divided by l and rounded to BF16 once,
// at the end. Q is scaled by log2(e) / sqrt(d) when it is staged, so exp is exp2f. Causal: key tiles past the
// Q tile's last row are never loaded (half the work of a long sequence), and the one diagonal tile masks j > i;
// keys past seq are masked as -inf and their V rows staged as zeros, so ragged sequences need no other case.
// The S workspace is not used. head_dim 64 and 128 are two instantiations of one body, picked at run time.
// Plan: grid (cdiv(seq, 64), batch * heads), 256 threads, 115 KB of dynamic shared memory at head_dim 128
// (Q and K tiles padded to head_dim + 1 floats a row, so the 16 key rows a warp reads fall in 16 banks).
// Prediction: the HBM traffic drops from ~20 bytes per score to Q, K, V and O once per block (K and V are read
// cdiv(seq, 64) times, mostly from L2); the bound is now FP32 FMAs fed from shared memory (about one shared load
// per two FMAs): 10-20 TFLOP/s, roughly 10x step 01 and still a few per cent of SDPA's tensor cores.
// Causal about twice as fast as non-causal in time (half the tiles).
// Measured on the H200 through the judge (2026-12-03), head_dim 128, against PyTorch SDPA
// (its fastest backend there: cuDNN): 4 x 16 x 4096 20.46 ms, 26.9 TFLOP/s (causal 10.78 ms, 25.5), 4.0% (4.4%);
// 1 x 8 x 16384 41.04 ms, 26.8 TFLOP/s (causal 22.41 ms, 24.5), 4.1% (4.6%). FP32 FMAs, as predicted far from
// the tensor cores; one block per query row re-reads every key.

#include <cuda_bf16.h>

constexpr int BM = 64;        // query rows per block
constexpr int BN = 64;        // keys per tile
constexpr int THREADS = 256;  // 16 x 16: ty picks 4 rows, tx 4 keys (and head_dim / 16 output columns)
constexpr int ROWS_PER_THREAD = BM / 16;
constexpr int KEYS_PER_THREAD = BN / 16;
constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

// Max and sum over the 16 threads that share a row (lanes tx = 0..15 of the same half-warp).
__device__ __forceinline__ float row_max(float v) {
    for (int offset = 8; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, offset));
    return v;
}
__device__ __forceinline__ float row_sum(float v) {
    for (int offset = 8; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

// rows x D BF16 from global (rows past `valid` as zeros) to FP32 shared memory with row pitch `pitch`, times
// `scale`; two elements (4 bytes) per load: every row starts 4-byte aligned.
template <int D>
__device__ __forceinline__ void stage(float* dst, int pitch, const __nv_bfloat16* src, int valid, float scale) {
    for (int e = threadIdx.x; e < BM * D / 2; e += THREADS) {
        const int r = e / (D / 2), c = 2 * (e % (D / 2));
        float2 pair = make_float2(0.0f, 0.0f);
        if (r < valid) pair = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(src + (size_t)r * D + c));
        dst[r * pitch + c] = pair.x * scale;
        dst[r * pitch + c + 1] = pair.y * scale;
    }
}

template <int D>
__device__ void attention_tile(int seq, int causal, const __nv_bfloat16* Q, const __nv_bfloat16* K,
                               const __nv_bfloat16* V, __nv_bfloat16* O) {
    constexpr int QK_PITCH = D + 1, P_PITCH = BN + 1, COLS = D / 16;
    extern __shared__ float smem[];
    float* q_s = smem;                      // [BM][D + 1]
    float* k_s = q_s + BM * QK_PITCH;       // [BN][D + 1]
    float* v_s = k_s + BN * QK_PITCH;       // [BN][D]
    float* p_s = v_s + BN * D;              // [BM][BN + 1]
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int q0 = blockIdx.x * BM;
    const size_t head_offset = (size_t)blockIdx.y * seq * D;
    const float log2e = 1.4426950408889634f;
    stage<D>(q_s, QK_PITCH, Q + head_offset + (size_t)q0 * D, seq - q0, log2e * rsqrtf((float)D));

    float m[ROWS_PER_THREAD], l[ROWS_PER_THREAD], acc[ROWS_PER_THREAD][COLS];
#pragma unroll
    for (int a = 0; a < ROWS_PER_THREAD; ++a) {
        m[a] = neg_inf();
        l[a] = 0.0f;
#pragma unroll
        for (int t = 0; t < COLS; ++t) acc[a][t] = 0.0f;
    }
    // Causal: no key past the block's last query row matters.
    const int kv_end = causal ? min(seq, q0 + BM) : seq;
    for (int k0 = 0; k0 < kv_end; k0 += BN) {
        __syncthreads();  // the previous tile's K, V and P are no longer read
        stage<D>(k_s, QK_PITCH, K + head_offset + (size_t)k0 * D, seq - k0, 1.0f);
        stage<D>(v_s, D, V + head_offset + (size_t)k0 * D, seq - k0, 1.0f);
        __syncthreads();

        float s[ROWS_PER_THREAD][KEYS_PER_THREAD] = {};
        for (int c = 0; c < D; ++c) {
            float qv[ROWS_PER_THREAD], kv[KEYS_PER_THREAD];
#pragma unroll
            for (int a = 0; a < ROWS_PER_THREAD; ++a) qv[a] = q_s[(4 * ty + a) * QK_PITCH + c];
#pragma unroll
            for (int b = 0; b < KEYS_PER_THREAD; ++b) kv[b] = k_s[(tx + 16 * b) * QK_PITCH + c];
#pragma unroll
            for (int a = 0; a < ROWS_PER_THREAD; ++a)
#pragma unroll
                for (int b = 0; b < KEYS_PER_THREAD; ++b) s[a][b] = fmaf(qv[a], kv[b], s[a][b]);
        }

#pragma unroll
        for (int a = 0; a < ROWS_PER_THREAD; ++a) {
            const int i = q0 + 4 * ty + a;
            float tile_max = neg_inf();
#pragma unroll
            for (int b = 0; b < KEYS_PER_THREAD; ++b) {
                const int j = k0 + tx + 16 * b;
                if (j >= seq || (causal && j > i)) s[a][b] = neg_inf();
                tile_max = fmaxf(tile_max, s[a][b]);
            }
            const float m_new = fmaxf(m[a], row_max(tile_max));
            // A row with every key so far masked keeps m = -inf; shifting by 0 then keeps exp2f(-inf) = 0
            // instead of exp2f(-inf - -inf) = NaN.
            const float shift = m_new == neg_inf() ? 0.0f : m_new;
            const float alpha = exp2f(m[a] - shift);
            float tile_sum = 0.0f;
#pragma unroll
            for (int b = 0; b < KEYS_PER_THREAD; ++b) {
                const float p = exp2f(s[a][b] - shift);
                tile_sum += p;
                p_s[(4 * ty + a) * P_PITCH + tx + 16 * b] = p;
            }
            l[a] = l[a] * alpha + row_sum(tile_sum);
            m[a] = m_new;
#pragma unroll
            for (int t = 0; t < COLS; ++t) acc[a][t] *= alpha;
        }
        __syncthreads();  // P complete

        for (int j = 0; j < BN; ++j) {
            float pv[ROWS_PER_THREAD];
#pragma unroll
            for (int a = 0; a < ROWS_PER_THREAD; ++a) pv[a] = p_s[(4 * ty + a) * P_PITCH + j];
#pragma unroll
            for (int t = 0; t < COLS; ++t) {
                const float vv = v_s[j * D + tx + 16 * t];
#pragma unroll
                for (int a = 0; a < ROWS_PER_THREAD; ++a) acc[a][t] = fmaf(pv[a], vv, acc[a][t]);
            }
        }
    }

#pragma unroll
    for (int a = 0; a < ROWS_PER_THREAD; ++a) {
        const int i = q0 + 4 * ty + a;
        if (i >= seq) continue;
        const float inv = 1.0f / l[a];  // l >= 1: the row's maximum contributes exp2f(0)
#pragma unroll
        for (int t = 0; t < COLS; ++t) {
            O[head_offset + (size_t)i * D + tx + 16 * t] = __float2bfloat16_rn(acc[a][t] * inv);
        }
    }
}

// Grid (cdiv(seq, BM), batch * heads).
extern "C" __global__ void __launch_bounds__(THREADS)
    attention_fused(int batch, int heads, int seq, int head_dim, int causal, const __nv_bfloat16* Q,
                    const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O, float* S) {
    if (head_dim == 64) {
        attention_tile<64>(seq, causal, Q, K, V, O);
    } else {
        attention_tile<128>(seq, causal, Q, K, V, O);
    }
}

/* @plan
[[launch]]
kernel = "attention_fused"
grid = ["cdiv(seq, 64)", "batch * heads"]
block = [256]
shared_bytes = "4 * (64 * (2 * (head_dim + 1) + head_dim) + 64 * 65)"
*/

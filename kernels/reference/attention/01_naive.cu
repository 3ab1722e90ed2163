// Step 01 - naive attention: three kernels, every score written to memory
// What it does: the textbook formula, one stage per kernel, each stage's result through global memory.
// (1) scores: S = Q K^T / sqrt(d) for every (batch, head), FP32, into the workspace S ([batch*heads, seq, seq]);
// a 16 x 16 block computes a 16 x 16 tile of S, one score per thread, from the 16 query rows and 16 key rows
// staged in shared memory (as FP32); under the causal mask the entries j > i are written as -inf. (2) softmax:
// one 256-thread block per row of S: the row's maximum, the sum of exp(s - max) in FP32, then P = exp(s - max)
// / sum written over S in place. (3) weighted sum: O = P V, a block of head_dim threads per 16 query rows, one
// output column per thread, P and V staged in shared memory 32 keys at a time; O rounded to BF16 once.
// Masked entries carry P = 0 through stage 3, so the causal half of S is read and multiplied for nothing.
// Plan: three launches, in order, all with the problem's arguments; S (batch * heads * seq^2 floats, up to
// 8 GiB at the benchmarks) is the workspace the judge hands every plan.
// Prediction: bound by the scores' traffic and by FP32 CUDA-core dot products: S is written once, read twice
// and written again by the softmax, read once by the weighted sum (20 bytes per score: 5.4 GB per head at
// seq 16384), and each stage-1 and stage-3 FMA costs a shared-memory load or two. A few TFLOP/s, a few per cent
// of SDPA; causal no faster than non-causal (the masked half is still computed).
// Measured on the H200 through the judge (2026-12-03), head_dim 128: 62.0 ms at
// 4 x 16 x 4096 and 126.7 ms at 1 x 8 x 16384, causal or not (all of S is computed and written, then masked):
// 8.9 / 8.7 TFLOP/s non-causal, 1.3% of PyTorch SDPA (cuDNN). The 4 GiB and 8 GiB of scores, written and read
// twice, take most of that time.

#include <cuda_bf16.h>

constexpr int TILE = 16;      // stage 1: a TILE x TILE tile of S per block, one score per thread
constexpr int MAX_D = 128;    // head_dim is 64 or 128
constexpr int ROWS = 16;      // stage 3: query rows per block
constexpr int KEYS = 32;      // stage 3: keys staged per step

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

// Grid (cdiv(seq, TILE), cdiv(seq, TILE), batch * heads): x over key tiles, y over query tiles, z over heads.
extern "C" __global__ void attention_scores(int batch, int heads, int seq, int head_dim, int causal,
                                            const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                            const __nv_bfloat16* V, __nv_bfloat16* O, float* S) {
    __shared__ float q_tile[TILE][MAX_D + 1];  // +1: threads of a warp read different rows, another bank each
    __shared__ float k_tile[TILE][MAX_D + 1];
    const size_t head = blockIdx.z;
    const int q0 = blockIdx.y * TILE, k0 = blockIdx.x * TILE;
    const __nv_bfloat16* q = Q + head * seq * head_dim;
    const __nv_bfloat16* k = K + head * seq * head_dim;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    // Stage both tiles, zeros past the last row (their scores are never stored).
    for (int e = tid; e < TILE * head_dim; e += TILE * TILE) {
        const int r = e / head_dim, c = e % head_dim;
        q_tile[r][c] = q0 + r < seq ? __bfloat162float(q[(size_t)(q0 + r) * head_dim + c]) : 0.0f;
        k_tile[r][c] = k0 + r < seq ? __bfloat162float(k[(size_t)(k0 + r) * head_dim + c]) : 0.0f;
    }
    __syncthreads();
    const int i = q0 + threadIdx.y, j = k0 + threadIdx.x;
    if (i >= seq || j >= seq) return;
    float dot = 0.0f;
    for (int c = 0; c < head_dim; ++c) dot = fmaf(q_tile[threadIdx.y][c], k_tile[threadIdx.x][c], dot);
    const float scale = rsqrtf((float)head_dim);
    S[(head * seq + i) * seq + j] = causal && j > i ? neg_inf() : dot * scale;
}

template <bool MAX>
__device__ float block_reduce(float v) {
    __shared__ float warp_vals[32];
    __shared__ float result;
    for (int offset = 16; offset > 0; offset /= 2) {
        const float other = __shfl_xor_sync(0xffffffffu, v, offset);
        v = MAX ? fmaxf(v, other) : v + other;
    }
    if (threadIdx.x % 32 == 0) warp_vals[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = warp_vals[0];
        for (int w = 1; w < blockDim.x / 32; ++w) r = MAX ? fmaxf(r, warp_vals[w]) : r + warp_vals[w];
        result = r;
    }
    __syncthreads();
    return result;
}

// Grid (batch * heads * seq): one block per row of S. The diagonal is never masked, so every row has a finite
// maximum, and exp(-inf - max) = 0 for the masked entries.
extern "C" __global__ void attention_softmax(int batch, int heads, int seq, int head_dim, int causal,
                                             const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                             const __nv_bfloat16* V, __nv_bfloat16* O, float* S) {
    float* row = S + (size_t)blockIdx.x * seq;
    float m = neg_inf();
    for (int c = threadIdx.x; c < seq; c += blockDim.x) m = fmaxf(m, row[c]);
    m = block_reduce<true>(m);
    float sum = 0.0f;
    for (int c = threadIdx.x; c < seq; c += blockDim.x) sum += expf(row[c] - m);
    sum = block_reduce<false>(sum);
    const float inv = 1.0f / sum;
    for (int c = threadIdx.x; c < seq; c += blockDim.x) row[c] = expf(row[c] - m) * inv;
}

// Grid (cdiv(seq, ROWS), batch * heads), block (head_dim): thread c owns output column c of ROWS query rows.
extern "C" __global__ void attention_weighted_sum(int batch, int heads, int seq, int head_dim, int causal,
                                                  const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                                  const __nv_bfloat16* V, __nv_bfloat16* O, float* S) {
    __shared__ float p_tile[ROWS][KEYS];
    __shared__ float v_tile[KEYS][MAX_D];
    const size_t head = blockIdx.y;
    const int q0 = blockIdx.x * ROWS, c = threadIdx.x;
    const float* p = S + head * seq * seq;
    const __nv_bfloat16* v = V + head * seq * head_dim;
    float acc[ROWS] = {};
    for (int k0 = 0; k0 < seq; k0 += KEYS) {
        // Zeros past the edges: a row past seq or a key past seq adds nothing.
        for (int e = c; e < ROWS * KEYS; e += head_dim) {
            const int r = e / KEYS, j = e % KEYS;
            p_tile[r][j] = q0 + r < seq && k0 + j < seq ? p[(size_t)(q0 + r) * seq + k0 + j] : 0.0f;
        }
        for (int j = 0; j < KEYS; ++j) {
            v_tile[j][c] = k0 + j < seq ? __bfloat162float(v[(size_t)(k0 + j) * head_dim + c]) : 0.0f;
        }
        __syncthreads();
        for (int j = 0; j < KEYS; ++j) {
            const float vj = v_tile[j][c];
            for (int r = 0; r < ROWS; ++r) acc[r] = fmaf(p_tile[r][j], vj, acc[r]);  // p_tile[r][j]: a broadcast
        }
        __syncthreads();
    }
    for (int r = 0; r < ROWS && q0 + r < seq; ++r) {
        O[(head * seq + q0 + r) * head_dim + c] = __float2bfloat16_rn(acc[r]);
    }
}

/* @plan
[[launch]]
kernel = "attention_scores"
grid = ["cdiv(seq, 16)", "cdiv(seq, 16)", "batch * heads"]
block = [16, 16]

[[launch]]
kernel = "attention_softmax"
grid = ["batch * heads * seq"]
block = [256]

[[launch]]
kernel = "attention_weighted_sum"
grid = ["cdiv(seq, 16)", "batch * heads"]
block = ["head_dim"]
*/

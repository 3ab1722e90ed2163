// Expected: wrong_answer for attention. The key loop of a causal kernel, kept when causal is 0: keys are taken
// in blocks of 64 and the blocks after the query's own block are skipped whatever the mask says (as if every run
// were causal), the diagonal mask applied only when causal is 1. Right at every causal shape and at non-causal
// shapes of 64 keys or fewer (seq 1 and 17); non-causal rows of longer sequences miss most of their keys.
#include <cuda_bf16.h>

constexpr int MAX_PER_LANE = 4;  // head_dim <= 128 = 4 * 32; loops run to this constant, so q and acc stay in registers

extern "C" __global__ void attention_noncausal_skips_blocks(int batch, int heads, int seq, int head_dim, int causal,
                                          const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                          const __nv_bfloat16* V, __nv_bfloat16* O, float* S) {
    const int warps = blockDim.x / 32, lane = threadIdx.x % 32;
    const size_t row = (size_t)blockIdx.x * warps + threadIdx.x / 32;  // over batch * heads * seq
    if (row >= (size_t)batch * heads * seq) return;
    const size_t head = row / seq;
    const int i = (int)(row % seq), per_lane = head_dim / 32;
    const __nv_bfloat16* k = K + head * seq * head_dim;
    const __nv_bfloat16* v = V + head * seq * head_dim;
    const float scale = rsqrtf((float)head_dim);
    float q[MAX_PER_LANE], acc[MAX_PER_LANE] = {};
#pragma unroll
    for (int t = 0; t < MAX_PER_LANE; ++t) {
        if (t < per_lane) q[t] = __bfloat162float(Q[row * head_dim + lane + 32 * t]) * scale;
    }
    float m = __int_as_float(0xff800000), l = 0.0f;  // -inf, 0: no key seen yet
    const int keys = causal ? i + 1 : min(seq, (i / 64 + 1) * 64);  // blocks past i's skipped
    for (int j = 0; j < keys; ++j) {
        float dot = 0.0f;
#pragma unroll
        for (int t = 0; t < MAX_PER_LANE; ++t) {
            if (t < per_lane) dot += q[t] * __bfloat162float(k[(size_t)j * head_dim + lane + 32 * t]);
        }
        for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
        if (dot > m) {  // exp(-inf) = 0 on the first key
            const float shrink = expf(m - dot);
            l *= shrink;
#pragma unroll
            for (int t = 0; t < MAX_PER_LANE; ++t) acc[t] *= shrink;
            m = dot;
        }
        const float p = expf(dot - m);
        l += p;
#pragma unroll
        for (int t = 0; t < MAX_PER_LANE; ++t) {
            if (t < per_lane) acc[t] += p * __bfloat162float(v[(size_t)j * head_dim + lane + 32 * t]);
        }
    }
#pragma unroll
    for (int t = 0; t < MAX_PER_LANE; ++t) {
        if (t < per_lane) O[row * head_dim + lane + 32 * t] = __float2bfloat16_rn(acc[t] / l);
    }
}

/* @plan
[[launch]]
kernel = "attention_noncausal_skips_blocks"
grid = ["cdiv(batch * heads * seq, 8)"]
block = [256]
*/

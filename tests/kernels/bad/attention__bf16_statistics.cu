// Expected: wrong_answer for attention. The example's kernel with its softmax statistics kept in BF16: the
// running maximum and the running sum are rounded to BF16 after every update (the output accumulator stays FP32).
// Once the sum is a few hundred times a typical term, adding the next exp rounds back to the same BF16 value (8
// significant bits), so the sum stops growing and long rows come out several times too large.
#include <cuda_bf16.h>

constexpr int MAX_PER_LANE = 4;  // head_dim <= 128 = 4 * 32; loops run to this constant, so q and acc stay in registers

extern "C" __global__ void attention_bf16_statistics(int batch, int heads, int seq, int head_dim, int causal,
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
    const int keys = causal ? i + 1 : seq;
    for (int j = 0; j < keys; ++j) {
        float dot = 0.0f;
#pragma unroll
        for (int t = 0; t < MAX_PER_LANE; ++t) {
            if (t < per_lane) dot += q[t] * __bfloat162float(k[(size_t)j * head_dim + lane + 32 * t]);
        }
        for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
        if (dot > m) {  // exp(-inf) = 0 on the first key
            const float shrink = expf(m - dot);
            l = __bfloat162float(__float2bfloat16_rn(l * shrink));
#pragma unroll
            for (int t = 0; t < MAX_PER_LANE; ++t) acc[t] *= shrink;
            m = __bfloat162float(__float2bfloat16_rn(dot));
        }
        const float p = expf(dot - m);
        l = __bfloat162float(__float2bfloat16_rn(l + p));  // the sum kept in BF16
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
kernel = "attention_bf16_statistics"
grid = ["cdiv(batch * heads * seq, 8)"]
block = [256]
*/

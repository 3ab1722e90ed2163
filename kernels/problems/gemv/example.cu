// One warp per output element y[b][n]: the 32 lanes walk row n of W and vector b of x together, lane l taking
// k = l, l + 32, ... (a warp reads 64 consecutive bytes of W per step: coalesced), and add their FP32 partial
// sums with shuffles. 8 warps per block.
#include <cuda_bf16.h>

extern "C" __global__ void gemv_warp(int N, int K, int B, const __nv_bfloat16* W, const __nv_bfloat16* x,
                                     __nv_bfloat16* y) {
    const long long out = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (out >= (long long)N * B) return;  // whole warps leave together: the shuffles below stay full-warp
    const int n = (int)(out % N), b = (int)(out / N), lane = threadIdx.x % 32;
    const __nv_bfloat16* w = W + (size_t)n * K;
    const __nv_bfloat16* v = x + (size_t)b * K;
    float acc = 0.0f;
    for (int k = lane; k < K; k += 32) acc = fmaf(__bfloat162float(w[k]), __bfloat162float(v[k]), acc);
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    if (lane == 0) y[(size_t)b * N + n] = __float2bfloat16_rn(acc);
}

/* @plan
[[launch]]
kernel = "gemv_warp"
grid = ["cdiv(N * B, 8)"]
block = [256]
*/

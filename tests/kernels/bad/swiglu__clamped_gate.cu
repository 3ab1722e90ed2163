// Expected: wrong_answer for swiglu. One thread per element, silu computed in FP32 on the gate clamped to
// [-8, 8] ("silu is linear or zero out there anyway"): exact inside, wrong outside, where silu(g) is g (or 0) to
// far better than BF16's precision but the clamp gives about 8 (or -0.0027). The old gates lay in [-6, 6), so the
// clamp never acted and the kernel passed; now gates reach +-10 to +-100: silu(100) comes out as 7.997.
#include <cuda_bf16.h>

__global__ void swiglu_clamped(int tokens, int inter, const __nv_bfloat16* gate, const __nv_bfloat16* up,
                               __nv_bfloat16* out) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)tokens * inter) return;
    const float g = fminf(fmaxf(__bfloat162float(gate[i]), -8.0f), 8.0f);  // BUG: the tails cut off
    const float u = __bfloat162float(up[i]);
    out[i] = __float2bfloat16_rn(g / (1.0f + expf(-g)) * u);
}

/* @plan
[[launch]]
kernel = "swiglu_clamped"
grid = ["cdiv(tokens * inter, 256)"]
block = [256]
*/

// One thread per element: gate and up are separate arrays of the same shape, so the index is flat. Consecutive
// threads touch consecutive elements, so every access coalesces.
#include <cuda_bf16.h>

extern "C" __global__ void swiglu(int tokens, int inter, const __nv_bfloat16* gate, const __nv_bfloat16* up,
                                  __nv_bfloat16* out) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)tokens * inter) return;
    const float g = __bfloat162float(gate[i]);
    out[i] = __float2bfloat16_rn(g / (1.0f + expf(-g)) * __bfloat162float(up[i]));
}

/* @plan
[[launch]]
kernel = "swiglu"
grid = ["cdiv(tokens * inter, 256)"]
block = [256]
*/

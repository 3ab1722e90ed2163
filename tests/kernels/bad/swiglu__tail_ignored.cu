// Expected: wrong_answer for swiglu. One thread per pair of elements (as a __nv_bfloat162 path would), and with an
// odd element count (1 x 1, 17 x 4097, 129 x 8191) the last element is never written: it stays NaN.
#include <cuda_bf16.h>

extern "C" __global__ void swiglu_pairs(int tokens, int inter, const __nv_bfloat16* gate, const __nv_bfloat16* up,
                                        __nv_bfloat16* out) {
    const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * p + 1 >= (size_t)tokens * inter) return;  // a last, unpaired element is dropped
    for (int e = 0; e < 2; ++e) {
        const size_t i = 2 * p + e;
        const float g = __bfloat162float(gate[i]);
        out[i] = __float2bfloat16_rn(g / (1.0f + expf(-g)) * __bfloat162float(up[i]));
    }
}

/* @plan
[[launch]]
kernel = "swiglu_pairs"
grid = ["cdiv(tokens * inter, 512)"]
block = [256]
*/

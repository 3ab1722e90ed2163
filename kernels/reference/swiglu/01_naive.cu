// Step 01 - naive SwiGLU: one thread per element.
// Change: none, this is the starting point. Thread i reads gate[i] and up[i] and writes out[i]; gate and up are
// separate arrays of the same shape, so the [tokens x inter] layout does not matter and the index is flat.
// Consecutive threads touch consecutive elements, so every access coalesces already; what is left on the table
// is width: each load instruction moves 2 bytes per thread (64 per warp), and each thread has just two of them in
// flight, so the memory system sees few, small requests. silu(g) = g / (1 + exp(-g)) uses the precise expf and
// division. Prediction: about half of the copy bandwidth.
// Measured on the H200 through the judge (2026-12-03): 8192 x 14336: 0.363 ms, 1941 GB/s,
//  45.9% of the copy roofline, 78.8% of the baseline.
#include <cuda_bf16.h>

__global__ void swiglu_naive(int tokens, int inter, const __nv_bfloat16* gate, const __nv_bfloat16* up,
                             __nv_bfloat16* out) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)tokens * inter) return;
    const float g = __bfloat162float(gate[i]);
    const float u = __bfloat162float(up[i]);
    out[i] = __float2bfloat16_rn(g / (1.0f + expf(-g)) * u);
}

/* @plan
[[launch]]
kernel = "swiglu_naive"
grid = ["cdiv(tokens * inter, 256)"]
block = [256]
*/

// Expected: runtime_error for swiglu (CUDA's "misaligned address"). Each thread loads 8 elements of gate and 8 of
// up with one 16-byte uint4 load each, without checking that gate and up are 16-byte aligned; the elements past
// the last whole group of 8 are handled one by one, correctly, and out is written element by element. The contract
// promises 2 bytes only. The old judge's arrays were always at least 16-byte aligned and the kernel passed; now
// every test shape also runs with the arrays at an address that is a multiple of 2 and not of 4, and the first
// uint4 load faults (3 x 1000 and larger).
#include <cuda_bf16.h>

__device__ float silu_times(__nv_bfloat16 gate, __nv_bfloat16 up) {
    const float g = __bfloat162float(gate);
    return g / (1.0f + expf(-g)) * __bfloat162float(up);
}

__global__ void swiglu_uint4(int tokens, int inter, const __nv_bfloat16* gate, const __nv_bfloat16* up,
                             __nv_bfloat16* out) {
    const size_t total = (size_t)tokens * inter, groups = total / 8;
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < groups) {
        // BUG: gate and up are promised 2-byte alignment only
        const uint4 gv = reinterpret_cast<const uint4*>(gate)[i];
        const uint4 uv = reinterpret_cast<const uint4*>(up)[i];
        const __nv_bfloat16* g = reinterpret_cast<const __nv_bfloat16*>(&gv);
        const __nv_bfloat16* u = reinterpret_cast<const __nv_bfloat16*>(&uv);
        for (int e = 0; e < 8; ++e) out[8 * i + e] = __float2bfloat16_rn(silu_times(g[e], u[e]));
    }
    if (i < total % 8) {  // the tail, right
        const size_t t = 8 * groups + i;
        out[t] = __float2bfloat16_rn(silu_times(gate[t], up[t]));
    }
}

/* @plan
[[launch]]
kernel = "swiglu_uint4"
grid = ["cdiv(cdiv(tokens * inter, 8), 256)"]
block = [256]
*/

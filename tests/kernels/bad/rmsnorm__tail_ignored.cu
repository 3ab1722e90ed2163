// Expected: wrong_answer for rmsnorm. Each thread handles groups of 8 consecutive elements (as a 16-byte vector
// path would) and the hidden % 8 elements past the last whole group are neither summed nor written: they stay
// NaN at hidden = 1, 4097 and 8191. (Scalar loads: the fault is the missing tail, not the alignment.)
#include <cuda_bf16.h>

extern "C" __global__ void rmsnorm_groups_of_8(int rows, int hidden, float eps, const __nv_bfloat16* x,
                                               const __nv_bfloat16* w, __nv_bfloat16* y) {
    __shared__ float warp_sums[8];
    __shared__ float inv_rms;
    const __nv_bfloat16* xr = x + (size_t)blockIdx.x * hidden;
    __nv_bfloat16* yr = y + (size_t)blockIdx.x * hidden;
    const int groups = hidden / 8;
    float s = 0.0f;
    for (int g = threadIdx.x; g < groups; g += 256)
        for (int e = 0; e < 8; ++e) {
            const float v = __bfloat162float(xr[8 * g + e]);
            s = fmaf(v, v, s);
        }
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int i = 0; i < 8; ++i) total += warp_sums[i];
        inv_rms = rsqrtf(total / (float)hidden + eps);
    }
    __syncthreads();
    for (int g = threadIdx.x; g < groups; g += 256)
        for (int e = 0; e < 8; ++e) {
            const int c = 8 * g + e;
            yr[c] = __float2bfloat16_rn(__bfloat162float(xr[c]) * inv_rms * __bfloat162float(w[c]));
        }
}

/* @plan
[[launch]]
kernel = "rmsnorm_groups_of_8"
grid = ["rows"]
block = [256]
*/

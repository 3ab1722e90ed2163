// One block of 256 threads per row: the threads sum the squares of a strided slice of the row in FP32 (a
// warp reads 32 consecutive elements), the block adds the 256 sums (warp shuffles, then the 8 warps'
// through shared memory), and a second pass writes the scaled row, rounding once to BF16.
#include <cuda_bf16.h>

extern "C" __global__ void rmsnorm_rows(int rows, int hidden, float eps, const __nv_bfloat16* x,
                                        const __nv_bfloat16* w, __nv_bfloat16* y) {
    __shared__ float warp_sums[32];
    __shared__ float inv_rms;
    const __nv_bfloat16* xr = x + (size_t)blockIdx.x * hidden;
    __nv_bfloat16* yr = y + (size_t)blockIdx.x * hidden;
    float s = 0.0f;
    for (int c = threadIdx.x; c < hidden; c += blockDim.x) {
        const float v = __bfloat162float(xr[c]);
        s = fmaf(v, v, s);
    }
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int i = 0; i < blockDim.x / 32; ++i) total += warp_sums[i];
        inv_rms = rsqrtf(total / (float)hidden + eps);
    }
    __syncthreads();
    const float r = inv_rms;
    for (int c = threadIdx.x; c < hidden; c += blockDim.x)
        yr[c] = __float2bfloat16_rn(__bfloat162float(xr[c]) * r * __bfloat162float(w[c]));
}

/* @plan
[[launch]]
kernel = "rmsnorm_rows"
grid = ["rows"]
block = [256]
*/

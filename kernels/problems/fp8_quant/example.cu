// One block of 256 threads per row: the threads take the maximum of |x| over a strided slice of the row (a
// warp reads 32 consecutive elements), the block combines the 256 maxima (warp shuffles, then the 8 warps'
// through shared memory), thread 0 writes the scale, and a second pass writes the codes: an IEEE division
// (NVRTC's default), then the satfinite round-to-nearest-even conversion.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

extern "C" __global__ void fp8_quant_rows(int rows, int cols, const __nv_bfloat16* x, __nv_fp8_e4m3* q,
                                          float* scales) {
    __shared__ float warp_max[32];
    __shared__ float scale;
    const __nv_bfloat16* xr = x + (size_t)blockIdx.x * cols;
    __nv_fp8_e4m3* qr = q + (size_t)blockIdx.x * cols;
    float amax = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) amax = fmaxf(amax, fabsf(__bfloat162float(xr[c])));
    for (int offset = 16; offset > 0; offset /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = amax;
    __syncthreads();
    if (threadIdx.x == 0) {
        float m = 0.0f;
        for (int w = 0; w < blockDim.x / 32; ++w) m = fmaxf(m, warp_max[w]);
        scale = fmaxf(m, 1e-12f) / 448.0f;
        scales[blockIdx.x] = scale;
    }
    __syncthreads();
    const float s = scale;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        qr[c].__x = __nv_cvt_float_to_fp8(__bfloat162float(xr[c]) / s, __NV_SATFINITE, __NV_E4M3);
}

/* @plan
[[launch]]
kernel = "fp8_quant_rows"
grid = ["rows"]
block = [256]
*/

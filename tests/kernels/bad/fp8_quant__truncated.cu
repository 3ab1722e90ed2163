// Expected: wrong_answer for fp8_quant. The scale and the division are right, but the code is made by cutting the
// FP32 value's mantissa to E4M3's 3 bits (rounding toward zero) instead of rounding to nearest even: about half the
// codes are one step too small in magnitude, the exact ties included.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

__device__ unsigned char e4m3_truncate(float v) {
    const unsigned int bits = __float_as_uint(v);
    const unsigned char sign = (unsigned char)((bits >> 24) & 0x80u);
    const float a = fminf(fabsf(v), 448.0f);
    unsigned int code;
    if (a < 0.015625f) {  // below 2^-6: E4M3's subnormals, steps of 2^-9
        code = (unsigned int)(a * 512.0f);  // the conversion to an integer truncates
    } else {
        const unsigned int abits = __float_as_uint(a);
        code = (((abits >> 23) - 120u) << 3) | ((abits >> 20) & 7u);  // rebias 127 -> 7, keep 3 mantissa bits
    }
    return (unsigned char)(code | sign);
}

extern "C" __global__ void fp8_quant_truncated(int rows, int cols, const __nv_bfloat16* x, __nv_fp8_e4m3* q,
                                               float* scales) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const __nv_bfloat16* xr = x + (size_t)r * cols;
    float amax = 0.0f;
    for (int c = 0; c < cols; ++c) amax = fmaxf(amax, fabsf(__bfloat162float(xr[c])));
    const float scale = fmaxf(amax, 1e-12f) / 448.0f;
    scales[r] = scale;
    for (int c = 0; c < cols; ++c) q[(size_t)r * cols + c].__x = e4m3_truncate(__bfloat162float(xr[c]) / scale);
}

/* @plan
[[launch]]
kernel = "fp8_quant_truncated"
grid = ["cdiv(rows, 128)"]
block = [128]
*/

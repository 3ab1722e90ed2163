// Expected: wrong_answer for rmsnorm. One thread per row reads the row 8 elements at a time with scalar loads and
// reads the last partial group whole, past the end of the row, "masking" the extra elements by multiplying their
// squares by 0 instead of not loading them. Inside x the extra elements are the next row's (finite: v * v * 0 = 0),
// and past the end of x the old guard bands read -2.9e-16 (also finite), so every row came out right and the old
// judge passed it. The last row of x now reads the guard band's +max BF16 value (3.4e38), whose square is +inf,
// and inf * 0 is NaN: the last row's sum of squares, and all its outputs, are NaN whenever hidden % 8 != 0
// (1 x 1, 17 x 4097, 129 x 8191).
#include <cuda_bf16.h>

__global__ void rmsnorm_groups_of_8(int rows, int hidden, float eps, const __nv_bfloat16* x, const __nv_bfloat16* w,
                                    __nv_bfloat16* y) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const __nv_bfloat16* xr = x + (size_t)r * hidden;
    __nv_bfloat16* yr = y + (size_t)r * hidden;
    float sum_sq = 0.0f;
    for (int c0 = 0; c0 < hidden; c0 += 8) {
        for (int i = 0; i < 8; ++i) {  // BUG: the last group is read whole, past the end of the row
            const float v = __bfloat162float(xr[c0 + i]);
            const float keep = c0 + i < hidden ? 1.0f : 0.0f;
            sum_sq += v * v * keep;
        }
    }
    const float inv_rms = rsqrtf(sum_sq / (float)hidden + eps);
    for (int c = 0; c < hidden; ++c)
        yr[c] = __float2bfloat16_rn(__bfloat162float(xr[c]) * inv_rms * __bfloat162float(w[c]));
}

/* @plan
[[launch]]
kernel = "rmsnorm_groups_of_8"
grid = ["cdiv(rows, 128)"]
block = [128]
*/

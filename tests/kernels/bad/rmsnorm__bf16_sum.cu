// Expected: wrong_answer for rmsnorm. The sum of squares is accumulated in BF16 (8 significant bits): once the
// running sum is large, each new square is rounded away, so mean(x^2) comes out far too small on long rows and
// every output of the row is scaled wrongly.
#include <cuda_bf16.h>

extern "C" __global__ void rmsnorm_bf16_sum(int rows, int hidden, float eps, const __nv_bfloat16* x,
                                            const __nv_bfloat16* w, __nv_bfloat16* y) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const __nv_bfloat16* xr = x + (size_t)r * hidden;
    __nv_bfloat16* yr = y + (size_t)r * hidden;
    __nv_bfloat16 sum_sq = __float2bfloat16_rn(0.0f);
    for (int c = 0; c < hidden; ++c) sum_sq = __hfma(xr[c], xr[c], sum_sq);
    const float inv_rms = rsqrtf(__bfloat162float(sum_sq) / (float)hidden + eps);
    for (int c = 0; c < hidden; ++c)
        yr[c] = __float2bfloat16_rn(__bfloat162float(xr[c]) * inv_rms * __bfloat162float(w[c]));
}

/* @plan
[[launch]]
kernel = "rmsnorm_bf16_sum"
grid = ["cdiv(rows, 128)"]
block = [128]
*/

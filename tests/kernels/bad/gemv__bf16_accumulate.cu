// Expected: wrong_answer for gemv. One thread per output, the dot product accumulated in BF16 (__hfma on
// __nv_bfloat16): every partial sum is rounded to 8 significant bits, an error growing like sqrt(K) that the
// tolerance (16 * 2^-24 * sqrt(K) + 2^-8) does not allow.
#include <cuda_bf16.h>

extern "C" __global__ void gemv_bf16_acc(int N, int K, int B, const __nv_bfloat16* W, const __nv_bfloat16* x,
                                         __nv_bfloat16* y) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * B) return;
    const int n = (int)(i % N), b = (int)(i / N);
    __nv_bfloat16 acc = __float2bfloat16_rn(0.0f);
    for (int k = 0; k < K; ++k) acc = __hfma(W[(size_t)n * K + k], x[(size_t)b * K + k], acc);
    y[(size_t)b * N + n] = acc;
}

/* @plan
[[launch]]
kernel = "gemv_bf16_acc"
grid = ["cdiv(N * B, 128)"]
block = [128]
*/

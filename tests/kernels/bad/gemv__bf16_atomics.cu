// Expected: wrong_answer for gemv. Launch 1 zeroes y; launch 2 splits each dot product's K into 4 chunks, one
// thread per (output, chunk), each chunk's FP32 dot product added into y with atomicAdd on __nv_bfloat16: every
// partial sum is rounded to BF16 on the way in and every addition rounds again, up to 7 BF16 roundings where the
// contract allows one. The old judge measured the norm of the error over all of y against 2^-8 + 16 * 2^-24 *
// sqrt(K) and it passed (about 0.3%); now every element must lie within half a BF16 unit of the exact value plus
// the FP32 accumulation allowance, and the extra roundings move many elements past it.
#include <cuda_bf16.h>

#define CHUNKS 4

__global__ void gemv_zero(int N, int K, int B, const __nv_bfloat16* W, const __nv_bfloat16* x, __nv_bfloat16* y) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (long long)N * B) y[i] = __float2bfloat16_rn(0.0f);
}

__global__ void gemv_split_k_bf16_atomics(int N, int K, int B, const __nv_bfloat16* W, const __nv_bfloat16* x,
                                          __nv_bfloat16* y) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)N * B * CHUNKS) return;
    const int chunk = (int)(i % CHUNKS);
    const long long o = i / CHUNKS;
    const int n = (int)(o % N), b = (int)(o / N);
    const int len = (K + CHUNKS - 1) / CHUNKS, k0 = chunk * len, k1 = min(K, k0 + len);
    const __nv_bfloat16* w = W + (size_t)n * K;
    const __nv_bfloat16* v = x + (size_t)b * K;
    float acc = 0.0f;
    for (int k = k0; k < k1; ++k) acc = fmaf(__bfloat162float(w[k]), __bfloat162float(v[k]), acc);
    atomicAdd(y + (size_t)b * N + n, __float2bfloat16_rn(acc));  // BUG: partial sums added in BF16
}

/* @plan
[[launch]]
kernel = "gemv_zero"
grid = ["cdiv(N * B, 256)"]
block = [256]

[[launch]]
kernel = "gemv_split_k_bf16_atomics"
grid = ["cdiv(N * B * 4, 256)"]
block = [256]
*/

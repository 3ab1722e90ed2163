// Expected: wrong_answer, "the kernel modified its input A". Skips the product: zeroes A in place, which
// makes alpha * A * B + beta * C equal to beta * C, and writes that. A judge that computed the reference
// from the buffers after the launch unchecked, or checked A against a device-side copy that a kernel can
// overwrite just as well, would accept it; the judge checks A against a fingerprint held on the host, and
// computes the reference only from inputs that match their fingerprints.
extern "C" __global__ void sgemm_tamper_inputs(int M, int N, int K, float alpha, const float* A, const float* B,
                                               float beta, float* C) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
    if (row >= M) return;
    float* a = const_cast<float*>(A);
    for (int k = col; k < K; k += gridDim.x * blockDim.x) a[(size_t)row * K + k] = 0.f;
    if (col < N) C[(size_t)row * N + col] = beta * C[(size_t)row * N + col];
}

/* @plan
[[launch]]
kernel = "sgemm_tamper_inputs"
grid = ["cdiv(N, 128)", "M"]
block = [128]
*/

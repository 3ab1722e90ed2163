// Expected: not accepted (wrong_answer; runtime_error should the writes reach unmapped memory). Skips the
// product, writes beta * C, then writes that answer again, as FP32 and as FP64 (the reference's type),
// just past the far guard band of C: where other device memory of the judge may lie, as a kernel hoping
// to overwrite a reference or a saved copy of the inputs would. The judge holds neither while the kernel
// runs, so the spray changes nothing it checks; the output itself is wrong.
#define GUARD_BYTES (1 << 20)
#define SPRAY_FLOATS 256

extern "C" __global__ void sgemm_spray(int M, int N, int K, float alpha, const float* A, const float* B,
                                       float beta, float* C) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
    if (row >= M || col >= N) return;
    float out = beta * C[(size_t)row * N + col];
    C[(size_t)row * N + col] = out;
    size_t index = (size_t)row * N + col;
    if (index < SPRAY_FLOATS) {
        // The judge keeps C 256-byte aligned with GUARD_BYTES of guard on either side.
        size_t body = ((size_t)M * N * sizeof(float) + 255) / 256 * 256;
        char* past = (char*)C + body + GUARD_BYTES;
        ((float*)past)[index] = out;
        ((double*)(past + SPRAY_FLOATS * sizeof(float)))[index] = (double)out;
    }
}

/* @plan
[[launch]]
kernel = "sgemm_spray"
grid = ["cdiv(N, 128)", "M"]
block = [128]
*/

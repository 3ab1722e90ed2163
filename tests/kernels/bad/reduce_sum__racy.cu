// Expected: wrong_answer for reduce_sum. Each block sums its 128 elements correctly, but then adds its sum to
// out[0] with a plain read-modify-write instead of atomicAdd: blocks on different SMs read the same old value and
// overwrite each other's additions, so at N = 1048579 (8193 blocks) whole block sums are lost.
__global__ void zero_out(int N, const float* x, float* out, float* workspace) { out[0] = 0.0f; }

__global__ void add_blocks_racily(int N, const float* x, float* out, float* workspace) {
    __shared__ float partial[128];
    const long long i = (long long)blockIdx.x * 128 + threadIdx.x;
    partial[threadIdx.x] = i < N ? x[i] : 0.0f;
    __syncthreads();
    for (int half = 64; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] += partial[0];  // the race: load, add, store, unguarded
}

/* @plan
[[launch]]
kernel = "zero_out"
grid = [1]
block = [1]

[[launch]]
kernel = "add_blocks_racily"
grid = ["cdiv(N, 128)"]
block = [128]
*/

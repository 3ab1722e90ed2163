// Expected: wrong_answer for transpose. Only whole 32 x 32 tiles are transposed: a block whose tile reaches past
// the matrix's edge returns at once, so at every ragged shape the last tile row and column stay NaN.
extern "C" __global__ void transpose_full_tiles(int M, int N, const float* in, float* out) {
    __shared__ float tile[32][33];
    const int i0 = blockIdx.y * 32, j0 = blockIdx.x * 32;
    if (i0 + 32 > M || j0 + 32 > N) return;
    for (int r = threadIdx.y; r < 32; r += 8) tile[r][threadIdx.x] = in[(size_t)(i0 + r) * N + j0 + threadIdx.x];
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += 8) out[(size_t)(j0 + r) * M + i0 + threadIdx.x] = tile[threadIdx.x][r];
}

/* @plan
[[launch]]
kernel = "transpose_full_tiles"
grid = ["cdiv(N, 32)", "cdiv(M, 32)"]
block = [32, 8]
*/

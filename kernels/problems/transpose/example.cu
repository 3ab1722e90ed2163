// A 32 x 32 tile through shared memory: a block reads 32 rows of `in` along their length (coalesced), and
// writes 32 rows of `out` along theirs (coalesced too), the turn happening in shared memory. The +1 column of
// padding puts a tile's column in 32 different banks. Edges are checked on both sides, so any M, N work.
extern "C" __global__ void transpose_tiled(int M, int N, const float* in, float* out) {
    __shared__ float tile[32][32 + 1];
    const int i0 = blockIdx.y * 32, j0 = blockIdx.x * 32;
    for (int r = threadIdx.y; r < 32; r += 8) {
        const int i = i0 + r, j = j0 + threadIdx.x;
        if (i < M && j < N) tile[r][threadIdx.x] = in[(size_t)i * N + j];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += 8) {
        const int j = j0 + r, i = i0 + threadIdx.x;  // row j of out, column i
        if (j < N && i < M) out[(size_t)j * M + i] = tile[threadIdx.x][r];
    }
}

/* @plan
[[launch]]
kernel = "transpose_tiled"
grid = ["cdiv(N, 32)", "cdiv(M, 32)"]
block = [32, 8]
*/

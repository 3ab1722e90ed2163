// Step 02 - shared-memory tiles: coalesced reads and coalesced writes
// Change versus 01: a block moves a 32 x 32 tile. Its 32 x 8 threads read the tile row by row (a warp reads 32
// consecutive floats of one input row: one 128-byte line) into shared memory, synchronise, then read it back
// column by column and write it row by row to the output (a warp writes 32 consecutive floats of one output row):
// both global directions are now coalesced, and the transposition happens in shared memory, where any access
// pattern costs only bank conflicts. Without padding, column c of a 32 x 32 float tile sits in bank c for every
// row, so the 32 lanes reading one column would all hit the same bank (a 32-way conflict, 32 serialised
// transactions); one extra float per row (stride 33) moves row r's element to bank (r + c) % 32, and a column
// spreads over all 32 banks. Each thread moves 4 elements (rows ty, ty + 8, ...), so 4 independent loads are in
// flight per thread before the barrier. Prediction: 70-85% of the copy bandwidth; what is left is bytes in
// flight (16 per thread) and the block-wide barrier between the read and the write phase.
// Measured on the H200 through the judge (2026-12-03): 8192 x 8192: 0.167 ms, 3206 GB/s, 75.9%
//  of the copy roofline, 85.1% of the baseline.

template <int TILE, int ROWS>
__global__ void __launch_bounds__(TILE * ROWS)
transpose_smem(int M, int N, const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float tile[TILE][TILE + 1];  // +1: a column of the tile spans all 32 banks

    const int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;  // the tile's corner in `in`
    const int tx = threadIdx.x, ty = threadIdx.y;

#pragma unroll
    for (int r = ty; r < TILE; r += ROWS) {
        const int i = i0 + r, j = j0 + tx;
        if (i < M && j < N) tile[r][tx] = in[(size_t)i * N + j];
    }
    __syncthreads();
    // out is N x M: output row j0 + r holds input column j0 + r; lane tx writes its element i0 + tx.
#pragma unroll
    for (int r = ty; r < TILE; r += ROWS) {
        const int j = j0 + r, i = i0 + tx;
        if (j < N && i < M) out[(size_t)j * M + i] = tile[tx][r];
    }
}

/* @plan
[[launch]]
kernel = "transpose_smem<32, 8>"
grid = ["cdiv(N, 32)", "cdiv(M, 32)"]
block = [32, 8]
*/

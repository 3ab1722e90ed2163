// Step 02 - float4 loads, 8 loads in flight per thread, warp shuffles, a grid sized to the machine
// Change versus 01: (1) the grid is no longer one block per 256 elements but 4 blocks of 256 threads per SM
// (528 on the H200's 132 SMs) that stride over the whole array: every thread stays resident from start to finish,
// no block is launched or retired mid-stream, and the partial sums shrink to 528; (2) the loads are 16-byte float4
// (4x fewer load instructions), eight of them issued back to back before any is added (8 x 16 = 128 bytes in
// flight per thread, ~128 KB per SM: well past the ~30 KB per SM that Little's law asks of 4 TB/s at ~1 us of
// latency), each added into its own accumulator so the additions form 8 short chains, not one long one; (3) a
// block's 256 sums are combined with warp shuffles (5 register exchanges per warp, no shared memory, no barrier)
// and only the 8 warp sums go through shared memory; (4) a tiny second launch (one block) adds the 528 partial
// sums in a fixed order: no atomics, so the result is the same bit for bit on every run. float4 needs a 16-byte
// aligned address: the first (up to 3) elements before the first aligned one and the last (up to 3) after the last
// whole float4 are added one by one by the first threads.
// Prediction: 90-95% of the read bandwidth, about CUB's DeviceReduce.
// Measured on the H200 through the judge (2026-12-03): 268435456: 0.252 ms, 4254 GB/s, 101.2%
//  of the copy roofline, 99.4% of the baseline.

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// The block's sum, valid in thread 0. THREADS / 32 warp sums meet in shared memory.
template <int THREADS>
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float warp_sums[THREADS / 32];
    v = warp_sum(v);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    float total = 0.0f;
    if (threadIdx.x < 32) {
        total = threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0f;
        total = warp_sum(total);
    }
    return total;
}

// Launch 1: workspace[b] = sum of block b's share of x; gridDim.x = min(cdiv(N, THREADS * UNROLL * 4), BLOCKS).
template <int THREADS, int UNROLL, int BLOCKS>
__global__ void __launch_bounds__(THREADS, 4)
reduce_sum_partials(int N, const float* __restrict__ x, float* __restrict__ out, float* __restrict__ workspace) {
    // Elements before the first 16-byte boundary (x is only promised 4-byte alignment).
    const int head = min((int)((16 - (reinterpret_cast<unsigned long long>(x) & 15)) & 15) / 4, N);
    const long long nvec = (long long)(N - head) / 4;
    const float4* __restrict__ v = reinterpret_cast<const float4*>(x + head);
    const long long stride = (long long)gridDim.x * THREADS;
    const long long gid = (long long)blockIdx.x * THREADS + threadIdx.x;

    float acc[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) acc[k] = 0.0f;
    long long i = gid;
    for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
        float4 p[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; ++k) p[k] = v[i + k * stride];  // all loads issued before any add
#pragma unroll
        for (int k = 0; k < UNROLL; ++k) acc[k] += (p[k].x + p[k].y) + (p[k].z + p[k].w);
    }
    for (; i < nvec; i += stride) {  // fewer than UNROLL float4 left for this thread
        const float4 p = v[i];
        acc[0] += (p.x + p.y) + (p.z + p.w);
    }
    const int rest = N - head - (int)(4 * nvec);
    if (gid < head) acc[1] += x[gid];
    if (gid < rest) acc[2] += x[head + 4 * nvec + gid];

    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) sum += acc[k];
    sum = block_sum<THREADS>(sum);
    if (threadIdx.x == 0) workspace[blockIdx.x] = sum;
}

// Launch 2, one block: out[0] = the sum of launch 1's partial sums, in a fixed order.
template <int THREADS, int UNROLL, int BLOCKS>
__global__ void __launch_bounds__(THREADS)
reduce_sum_final(int N, const float* __restrict__ x, float* __restrict__ out, float* __restrict__ workspace) {
    const int per_block = THREADS * UNROLL * 4;
    const int partials = (int)min(((long long)N + per_block - 1) / per_block, (long long)BLOCKS);
    float sum = 0.0f;
    for (int i = threadIdx.x; i < partials; i += THREADS) sum += workspace[i];
    sum = block_sum<THREADS>(sum);
    if (threadIdx.x == 0) out[0] = sum;
}

/* @plan
[[launch]]
kernel = "reduce_sum_partials<256, 8, 528>"
grid = ["min(cdiv(N, 256 * 8 * 4), 528)"]
block = [256]

[[launch]]
kernel = "reduce_sum_final<256, 8, 528>"
grid = [1]
block = [256]
*/

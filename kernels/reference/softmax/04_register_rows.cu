// Step 04 - the row (or part) in registers, one exponential per element, block size fitted to the row
// Change versus 03: (1) every thread loads all of its elements at once, 8 float4 (32 floats) in registers, so a
// block has its whole row (or cluster part) in flight from its first instruction, and nothing goes through shared
// memory. (2) One exponential per element: a thread finds its own maximum m_t, replaces each of its values v by
// e = exp(v - m_t) (kept in the register v was in) and sums them into s_t; the block and the cluster merge the
// (m_t, s_t) pairs into the row's (M, S) in one combined reduction, and the output is e * (exp(m_t - M) / S), one
// multiply per element and one exponential per thread. Step 03 takes two expf per element plus the online
// rescaling branches; here __expf (ex2.approx: 2 instructions), which the statement allows. (3) The block size
// follows the row: 32 threads per 1024 floats (4096 columns: 128 threads, 1 row per block, 8 blocks per SM at
// 60 registers: 128 KB in flight per SM), so the SM holds many small independent rows, as step 02 does, instead of blocks
// of 256 threads of which a short row uses a few. (4) Rows over 16384 floats are split over a cluster of 8 blocks
// as in step 03 (the (M, S) pairs are exchanged in distributed shared memory, mapa + ld.shared::cluster), with
// 32 threads per 1024 floats of the part: at 32 x 131072, 256 blocks of 512 threads, 2 per SM, each with its 64 KB
// part in flight at once (16 MB over the GPU: all of x), where step 03 had 16 KB per block in flight and read
// its part in 4 rounds. A cluster part over 32768 floats (cols > 262144) is taken in chunks of 32768: statistics
// over the chunks, then x is read again for the output (a second read, from L2 where it fits).
// The merge is the same tree in every warp and every block of a cluster: all of them get the same bits of (M, S).
// Unaligned rows (cols % 4 != 0, or x, y not 16-byte aligned) load and store the same slots as scalars.
// Prediction: 4096 x 4096 at 82-88% of the copy bandwidth (the same bytes in flight per SM as step 02, a third of
// its instructions); 32 x 131072 at 55-65% (the whole input in flight at once; launch and the cluster barriers
// remain, on 8 microseconds of traffic).
// Measured on the H200 through the judge (2026-12-03): 4096 x 4096: 0.038 ms, 3568 GB/s, 84.2%
//  of the copy roofline, 152.4% of the baseline; 32 x 131072: 0.018 ms, 1886 GB/s, 44.5% of the copy roofline, 261.0%
//  of the baseline.

constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr int CLUSTER = 8;       // blocks per split row (portable cluster size)
constexpr int ROW_MAX = 16384;   // longer rows are split over a cluster (the plan uses the same threshold)

// (max, sum of exp(x - max)) of a set of elements; (-inf, 0) for none.
struct Stats {
    float m, s;
};

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

__device__ __forceinline__ Stats combine(Stats a, Stats b) {
    const float m = fmaxf(a.m, b.m);
    if (m == neg_inf()) return {m, 0.0f};  // both empty: exp(-inf - -inf) would be NaN
    return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}

__device__ __forceinline__ Stats warp_combine(Stats st) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const Stats other = {__shfl_xor_sync(FULL_MASK, st.m, offset), __shfl_xor_sync(FULL_MASK, st.s, offset)};
        st = combine(st, other);
    }
    return st;
}

// The block's statistics, the same bits in every thread: each warp merges by shuffles; then every warp reads the
// warps' results (lane w takes warp w) and merges them with the same shuffle tree.
__device__ __forceinline__ Stats block_stats(Stats st) {
    __shared__ Stats warp_stats[32];
    const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
    st = warp_combine(st);
    if (lane == 0) warp_stats[threadIdx.x / 32] = st;
    __syncthreads();
    return warp_combine(lane < warps ? warp_stats[lane] : Stats{neg_inf(), 0.0f});
}

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

// Slot k of thread t holds float4 number k * blockDim.x + t of the chunk starting at `in` (coalesced across the
// block); elements at or past `n` read as -inf, whose exponential is 0.
template <int V>
__device__ __forceinline__ void load_chunk(float4 (&v)[V], const float* __restrict__ in, int n, bool vec) {
    if (vec) {
        const float4* src = reinterpret_cast<const float4*>(in);
        const int n4 = n / 4;  // n is a multiple of 4 when vec
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int i = k * blockDim.x + threadIdx.x;
            v[k] = i < n4 ? src[i] : make_float4(neg_inf(), neg_inf(), neg_inf(), neg_inf());
        }
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int e = 4 * (k * blockDim.x + threadIdx.x);
            v[k].x = e < n ? in[e] : neg_inf();
            v[k].y = e + 1 < n ? in[e + 1] : neg_inf();
            v[k].z = e + 2 < n ? in[e + 2] : neg_inf();
            v[k].w = e + 3 < n ? in[e + 3] : neg_inf();
        }
    }
}

template <int V>
__device__ __forceinline__ void store_chunk(const float4 (&v)[V], float* __restrict__ out, int n, bool vec) {
    if (vec) {
        float4* dst = reinterpret_cast<float4*>(out);
        const int n4 = n / 4;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int i = k * blockDim.x + threadIdx.x;
            if (i < n4) dst[i] = v[k];
        }
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int e = 4 * (k * blockDim.x + threadIdx.x);
            if (e < n) out[e] = v[k].x;
            if (e + 1 < n) out[e + 1] = v[k].y;
            if (e + 2 < n) out[e + 2] = v[k].z;
            if (e + 3 < n) out[e + 3] = v[k].w;
        }
    }
}

// In place: v becomes exp(v - m_t) (0 for padding); returns (m_t, sum). m_t is -inf only when the thread holds
// no element, and then every e is 0 (the shift is taken as 0 so that -inf - -inf never happens).
template <int V>
__device__ __forceinline__ Stats exp_in_place(float4 (&v)[V]) {
    float m = neg_inf();
#pragma unroll
    for (int k = 0; k < V; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
    const float shift = m == neg_inf() ? 0.0f : m;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < V; ++k) {
        v[k].x = __expf(v[k].x - shift);
        v[k].y = __expf(v[k].y - shift);
        v[k].z = __expf(v[k].z - shift);
        v[k].w = __expf(v[k].w - shift);
        s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
    return {m, s};
}

template <int V>
__device__ __forceinline__ void scale_in_place(float4 (&v)[V], float f) {
#pragma unroll
    for (int k = 0; k < V; ++k) {
        v[k].x *= f;
        v[k].y *= f;
        v[k].z *= f;
        v[k].w *= f;
    }
}

// ---- thread-block cluster (PTX) ------------------------------------------------------------------------------

__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// Release: this block's earlier shared-memory writes become visible to the cluster; acquire: the other blocks'
// writes before their arrive are visible after the wait. Every thread of every block of the cluster takes part.
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// `local` is the address of a __shared__ variable; read the same variable in the block of cluster rank `rank`.
__device__ __forceinline__ Stats load_from_block(const Stats* local, unsigned rank) {
    const unsigned addr = (unsigned)__cvta_generic_to_shared(local);
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    Stats st;
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(st.m), "=f"(st.s) : "r"(remote) : "memory");
    return st;
}

// grid = (8, G), block = 32 threads per 32 * 4 * V floats of a row (row mode) or of a part (split mode), 1024 at most.
// Row mode (cols <= ROW_MAX): G = cdiv(rows, 8), block (bx, by) takes row 8 * by + bx alone, in one chunk.
// Split mode: G = rows, cluster y takes row y, block rank r takes part r (a multiple of 4 floats long, so parts
// stay 16-byte aligned), in chunks of 4 * V * blockDim.x floats.
// V float4 per thread (4 * V floats in registers); at most MAX_THREADS threads (the register cap: 64 at 1024).
template <int V, int MAX_THREADS>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(MAX_THREADS)
softmax_registers(int rows, int cols, const float* __restrict__ x, float* __restrict__ y) {
    __shared__ Stats part_stats;
    const bool vec = cols % 4 == 0 && aligned16(x) && aligned16(y);
    float4 v[V];

    if (cols <= ROW_MAX) {  // row mode: the same for the whole grid, so no block of a cluster splits
        const int row = blockIdx.y * CLUSTER + blockIdx.x;
        if (row >= rows) return;
        const float* in = x + (size_t)row * cols;
        float* out = y + (size_t)row * cols;
        load_chunk(v, in, cols, vec);
        const Stats mine = exp_in_place(v);
        const Stats all = block_stats(mine);
        if (mine.m != neg_inf()) {  // a thread with no element has nothing to write
            scale_in_place(v, __expf(mine.m - all.m) * (1.0f / all.s));
            store_chunk(v, out, cols, vec);
        }
        return;
    }

    const int row = blockIdx.y;
    const int part = (cols + CLUSTER * 4 - 1) / (CLUSTER * 4) * 4;
    const unsigned rank = cluster_rank();
    const int begin = min((int)rank * part, cols), end = min(begin + part, cols);
    const int chunk = 4 * V * blockDim.x;
    const float* in = x + (size_t)row * cols + begin;
    float* out = y + (size_t)row * cols + begin;

    // Statistics of the part, chunk by chunk; with one chunk (parts up to 32768 floats) v keeps its exponentials.
    Stats mine = {neg_inf(), 0.0f}, last = mine;
    for (int c = 0; c < end - begin; c += chunk) {
        load_chunk(v, in + c, min(chunk, end - begin - c), vec);
        last = exp_in_place(v);
        mine = combine(mine, last);
    }
    const Stats block = block_stats(mine);
    if (threadIdx.x == 0) part_stats = block;
    cluster_arrive();
    cluster_wait();
    // Lanes 0..7 of each warp fetch one block's pair each; the shuffle tree merges them (same order everywhere).
    const int lane = threadIdx.x % 32;
    const Stats all = warp_combine(lane < CLUSTER ? load_from_block(&part_stats, lane) : Stats{neg_inf(), 0.0f});
    cluster_arrive();  // done reading the other blocks' shared memory

    const float inv = 1.0f / all.s;
    if (end - begin <= chunk) {
        if (last.m != neg_inf()) {
            scale_in_place(v, __expf(last.m - all.m) * inv);
            store_chunk(v, out, end - begin, vec);
        }
    } else {
        for (int c = 0; c < end - begin; c += chunk) {
            const int n = min(chunk, end - begin - c);
            load_chunk(v, in + c, n, vec);
#pragma unroll
            for (int k = 0; k < V; ++k) {
                v[k].x = __expf(v[k].x - all.m) * inv;
                v[k].y = __expf(v[k].y - all.m) * inv;
                v[k].z = __expf(v[k].z - all.m) * inv;
                v[k].w = __expf(v[k].w - all.m) * inv;
            }
            store_chunk(v, out + c, n, vec);
        }
    }
    cluster_wait();  // nobody exits while its part_stats may still be read
}

/* @plan
[[launch]]
kernel = "softmax_registers<8, 1024>"
grid = [8, "min(1, cols // 16385) * rows + (1 - min(1, cols // 16385)) * cdiv(rows, 8)"]
block = ["32 * ((1 - min(1, cols // 16385)) * cdiv(cols, 1024) + min(1, cols // 16385) * min(32, cdiv(cdiv(cols, 32) * 4, 1024)))"]
*/

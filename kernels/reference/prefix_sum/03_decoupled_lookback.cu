// Step 03 - single pass: decoupled look-back across tiles of 8192 elements
// Change versus 02: x is read once. Each block scans its tile as in step 02 and gets the tile's prefix from the
// tiles before it while it runs, through a status word per tile in the workspace: (flag, value) packed in 64 bits,
// so one store publishes both and a reader never sees a flag without its value. As soon as a block knows its
// tile's total it publishes (AGGREGATE, total); warp 0 then looks back at the 32 tiles before it at once (one
// status word per lane): it waits while any of them is still EMPTY, adds the values from the nearest tile that
// already has (PREFIX, inclusive prefix) back to its own, or, if none has one yet, adds all 32 aggregates and looks
// at the next 32. It then publishes (PREFIX, prefix + total), which cuts later look-backs short. A block never
// waits for the whole chain before it, only for its predecessors to have summed their own tiles, so the serial
// part is a few L2 round trips per tile, hidden behind the other resident blocks' loads.
// Blocks do not start in blockIdx order on every GPU, and a block that spins waiting for a tile whose block has
// not started could hold the SM that block needs; so the tile a block scans is not blockIdx.x but a ticket taken
// from a counter in the workspace (atomicAdd) when it starts: every lower tile belongs to a block already running.
// That guarantee costs one atomic round trip before a block's first load (measured: ~2% of the run against using
// blockIdx.x, which the hardware happens to dispatch in order).
// Tiles are twice step 02's: 8 int4 (128 bytes) in flight per thread, and half as many tickets, status words and
// look-backs (4096-element tiles measured ~12% slower). The workspace is garbage at launch: a first, tiny launch
// zeroes the counter and the status words (8 bytes per tile: 256 KB at N = 2^28). Status words are read and
// written with ld/st.relaxed.gpu (PTX): coherent at L2, never served from a stale L1 line, single 64-bit accesses.
// Traffic: 8 bytes per element, the minimum. Prediction: 85-95% of the copy bandwidth, about CUB's single-pass
// DeviceScan (whose design this is: Merrill and Garland, 2016).
// Measured on the H200 through the judge (2026-12-03): 268435456: 0.720 ms, 2981 GB/s, 70.4%
//  of the copy roofline, 115.0% of the baseline.

constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ __forceinline__ int warp_inclusive_scan(int v) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int left = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += left;
    }
    return v;
}

__device__ __forceinline__ int warp_sum(int v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

// A tile is WARPS sub-tiles of 32 lanes x V int4. Element e of lane l's k-th int4, in its warp's sub-tile, is at
// sub-tile offset 4 * (32 * k + l) + e. With `vec` (whole tile inside, x and y 16-byte aligned) the loads are
// int4; otherwise scalar, with zeros past N.
template <int V>
__device__ __forceinline__ void load_sub_tile(int4 (&d)[V], const int* __restrict__ x, long long start, int N,
                                              bool vec) {
    const int lane = threadIdx.x % 32;
    if (vec) {
        const int4* src = reinterpret_cast<const int4*>(x + start) + lane;
#pragma unroll
        for (int k = 0; k < V; ++k) d[k] = src[32 * k];
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const long long e = start + 4 * (32 * k + lane);
            d[k].x = e < N ? x[e] : 0;
            d[k].y = e + 1 < N ? x[e + 1] : 0;
            d[k].z = e + 2 < N ? x[e + 2] : 0;
            d[k].w = e + 3 < N ? x[e + 3] : 0;
        }
    }
}

template <int V>
__device__ __forceinline__ void store_sub_tile(const int4 (&d)[V], int* __restrict__ y, long long start, int N,
                                               bool vec) {
    const int lane = threadIdx.x % 32;
    if (vec) {
        int4* dst = reinterpret_cast<int4*>(y + start) + lane;
#pragma unroll
        for (int k = 0; k < V; ++k) dst[32 * k] = d[k];
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const long long e = start + 4 * (32 * k + lane);
            if (e < N) y[e] = d[k].x;
            if (e + 1 < N) y[e + 1] = d[k].y;
            if (e + 2 < N) y[e + 2] = d[k].z;
            if (e + 3 < N) y[e + 3] = d[k].w;
        }
    }
}

// In place: d becomes the inclusive scan of the warp's sub-tile. Returns the sub-tile's total (all lanes).
template <int V>
__device__ __forceinline__ int warp_scan_sub_tile(int4 (&d)[V]) {
    int carry = 0;
#pragma unroll
    for (int k = 0; k < V; ++k) {
        d[k].y += d[k].x;
        d[k].z += d[k].y;
        d[k].w += d[k].z;
        const int inclusive = warp_inclusive_scan(d[k].w);
        const int before = carry + inclusive - d[k].w;  // everything left of this lane's 4 values
        d[k].x += before;
        d[k].y += before;
        d[k].z += before;
        d[k].w += before;
        carry += __shfl_sync(FULL_MASK, inclusive, 31);
    }
    return carry;
}

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

// ---- tile status words ------------------------------------------------------------------------------------

constexpr unsigned long long STATUS_EMPTY = 0, STATUS_AGGREGATE = 1, STATUS_PREFIX = 2;

__device__ __forceinline__ unsigned long long pack_status(unsigned long long flag, int value) {
    return (flag << 32) | (unsigned)value;
}

__device__ __forceinline__ unsigned long long load_status(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_status(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// workspace[0] is the ticket counter; the status words start at the first 8-byte boundary after it.
__device__ __forceinline__ unsigned long long* status_words(int* workspace) {
    const unsigned long long p = reinterpret_cast<unsigned long long>(workspace + 1);
    return reinterpret_cast<unsigned long long*>((p + 7) & ~7ull);
}

// Launch 1: counter = 0, every tile's status EMPTY.
template <int TILE>
__global__ void scan_lookback_init(int N, const int* __restrict__ x, int* __restrict__ y, int* __restrict__ workspace) {
    const int tiles = (int)(((long long)N + TILE - 1) / TILE);
    unsigned long long* status = status_words(workspace);
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < tiles; t += gridDim.x * blockDim.x)
        status[t] = pack_status(STATUS_EMPTY, 0);
    if (blockIdx.x == 0 && threadIdx.x == 0) workspace[0] = 0;
}

// Warp 0 only: the sum of all tiles before `tile`. Lane l watches tile base - l.
__device__ int look_back(const unsigned long long* status, int tile) {
    const int lane = threadIdx.x % 32;
    int exclusive = 0;
    for (int base = tile - 1;; base -= 32) {
        const int t = base - lane;
        unsigned long long word = pack_status(STATUS_PREFIX, 0);  // before tile 0: a prefix of 0
        if (t >= 0) {
            do {
                word = load_status(status + t);
            } while ((word >> 32) == STATUS_EMPTY);
        }
        const int value = (int)(unsigned)word;
        const unsigned prefixes = __ballot_sync(FULL_MASK, (word >> 32) == STATUS_PREFIX);
        if (prefixes) {  // the nearest tile with a prefix ends the walk: add it and the aggregates after it
            const int nearest = __ffs(prefixes) - 1;
            exclusive += warp_sum(lane <= nearest ? value : 0);
            return exclusive;
        }
        exclusive += warp_sum(value);
    }
}

// Launch 2: one tile per block, its number taken from the ticket counter.
template <int THREADS, int V>
__global__ void __launch_bounds__(THREADS)
scan_lookback(int N, const int* __restrict__ x, int* __restrict__ y, int* __restrict__ workspace) {
    constexpr int SUB = 32 * 4 * V, TILE = THREADS / 32 * SUB;
    __shared__ int warp_totals[THREADS / 32];
    __shared__ int tile_ticket, tile_prefix;
    if (threadIdx.x == 0) tile_ticket = (int)atomicAdd(reinterpret_cast<unsigned*>(workspace), 1u);
    __syncthreads();
    const int tile = tile_ticket, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long tile_start = (long long)tile * TILE, start = tile_start + warp * SUB;
    const bool vec = tile_start + TILE <= N && aligned16(x) && aligned16(y);

    int4 d[V];
    load_sub_tile<V>(d, x, start, N, vec);
    const int total = warp_scan_sub_tile<V>(d);
    if (lane == 0) warp_totals[warp] = total;
    __syncthreads();
    int before = 0, tile_total = 0;  // warps before this one; the whole tile
    for (int w = 0; w < THREADS / 32; ++w) {
        before += w < warp ? warp_totals[w] : 0;
        tile_total += warp_totals[w];
    }

    if (warp == 0) {
        unsigned long long* status = status_words(workspace);
        int prefix = 0;
        if (tile == 0) {
            if (lane == 0) store_status(status, pack_status(STATUS_PREFIX, tile_total));
        } else {
            if (lane == 0) store_status(status + tile, pack_status(STATUS_AGGREGATE, tile_total));
            prefix = look_back(status, tile);
            if (lane == 0) store_status(status + tile, pack_status(STATUS_PREFIX, prefix + tile_total));
        }
        if (lane == 0) tile_prefix = prefix;
    }
    __syncthreads();

    const int offset = tile_prefix + before;
#pragma unroll
    for (int k = 0; k < V; ++k) {
        d[k].x += offset;
        d[k].y += offset;
        d[k].z += offset;
        d[k].w += offset;
    }
    store_sub_tile<V>(d, y, start, N, vec);
}

/* @plan
[[launch]]
kernel = "scan_lookback_init<8192>"
grid = ["cdiv(N, 8192 * 256)"]
block = [256]

[[launch]]
kernel = "scan_lookback<256, 8>"
grid = ["cdiv(N, 8192)"]
block = [256]
*/

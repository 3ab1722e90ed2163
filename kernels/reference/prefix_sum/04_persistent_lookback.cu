// Step 04 - decoupled look-back with persistent blocks: the next tile's loads in flight during this tile's look-back
// Change versus 03: in step 03 a block loads its tile, scans it, and then waits: for the look-back (a few L2 round
// trips), for the barrier after it, and for its stores, with nothing loading; each SM leans on its other 3 blocks,
// and a new block pays a ticket atomic before its first load. Here the grid is persistent (min(tiles, 4 x SMS)
// blocks of 256 threads, all resident) and each block works through a stream of tiles from the ticket counter:
// it holds two tickets ahead, and it issues the loads of its next tile before it scans the current one, so
// every block always has a tile in flight, through its scan, its look-back and its stores. The ticket after the
// next one is taken by a thread of warp 1 while warp 0 looks back, so its atomic round trip is hidden as well.
// The two tiles cost 2 x 4 int4 registers, so tiles are 4096 ints (256 threads x 4 int4; step 03's 8192-int tiles
// would need 64 data registers); __launch_bounds__(256, 4) (MIN_BLOCKS = 4) keeps 4 blocks (64 KB of loads in flight) per SM.
// Forward progress: a block waits only on lower tiles; the lowest tile not yet done is always the current tile of
// its block (a block's next and later tickets are above its current one), and every tile below it is done, so
// that block finishes its look-back, whatever the other blocks do.
// Shared memory: the tickets alternate between two slots, written after the scan's barrier and read after the
// look-back's barrier; a slot is written again two tiles later, after every thread has read it. The warp totals
// and the tile prefix need one slot each (written between two barriers that every reader has passed).
// Unchanged from 03: the status words (flag, value) in 64 bits with ld/st.relaxed.gpu, the warp-0 look-back over
// 32 tiles at once, the first launch zeroing the counter and the status words, the scalar path for a tile that is
// not whole or for x or y not 16-byte aligned.
// Prediction: 78-85% of the copy bandwidth at 2^28 (0.62-0.68 ms).
// Measured: not yet.

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

// Launch 2: a persistent block scans tiles in ticket order, loading tile n + 1 while it finishes tile n.
template <int THREADS, int V, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
scan_persistent(int N, const int* __restrict__ x, int* __restrict__ y, int* __restrict__ workspace) {
    static_assert(THREADS >= 64, "warp 1 takes the tickets");
    constexpr int SUB = 32 * 4 * V, TILE = THREADS / 32 * SUB;
    __shared__ int warp_totals[THREADS / 32];
    __shared__ int tickets[2], tile_prefix;
    unsigned* counter = reinterpret_cast<unsigned*>(workspace);
    unsigned long long* status = status_words(workspace);
    const int tiles = (int)(((long long)N + TILE - 1) / TILE);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const bool aligned = aligned16(x) && aligned16(y);
    if (threadIdx.x == 0) {
        tickets[0] = (int)atomicAdd(counter, 1u);
        tickets[1] = (int)atomicAdd(counter, 1u);  // the same thread's two atomics: increasing tickets
    }
    __syncthreads();
    int tile = tickets[0], next = tickets[1];

    int4 d[V];
    if (tile < tiles) {
        const long long tile_start = (long long)tile * TILE;
        load_sub_tile<V>(d, x, tile_start + warp * SUB, N, aligned && tile_start + TILE <= N);
    }
    for (int it = 0; tile < tiles; ++it) {
        // The next tile's loads go out before anything waits on this tile.
        int4 nd[V];
        if (next < tiles) {
            const long long next_start = (long long)next * TILE;
            load_sub_tile<V>(nd, x, next_start + warp * SUB, N, aligned && next_start + TILE <= N);
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) nd[k] = make_int4(0, 0, 0, 0);
        }
        const long long tile_start = (long long)tile * TILE, start = tile_start + warp * SUB;
        const bool vec = aligned && tile_start + TILE <= N;

        const int total = warp_scan_sub_tile<V>(d);
        if (lane == 0) warp_totals[warp] = total;
        __syncthreads();
        int before = 0, tile_total = 0;  // warps before this one; the whole tile
        for (int w = 0; w < THREADS / 32; ++w) {
            before += w < warp ? warp_totals[w] : 0;
            tile_total += warp_totals[w];
        }
        if (threadIdx.x == 32) tickets[it & 1] = (int)atomicAdd(counter, 1u);  // the tile after `next`
        if (warp == 0) {
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
#pragma unroll
        for (int k = 0; k < V; ++k) d[k] = nd[k];
        tile = next;
        next = tickets[it & 1];
    }
}

/* @plan
[[launch]]
kernel = "scan_lookback_init<4096>"
grid = ["cdiv(N, 4096 * 256)"]
block = [256]

[[launch]]
kernel = "scan_persistent<256, 4, 4>"
grid = ["min(cdiv(N, 4096), 4 * SMS)"]
block = [256]
*/

// Sweep template (kernels/tools/sweep.py, with sweep.toml beside it): rung 03's single-pass decoupled look-back,
// with each of its choices made a placeholder so that one device call judges them side by side. With the
// defaults of sweep.toml (variant "baseline_rung") the code path is rung 03's: 256 threads x 8 int4 per thread
// (8192-int tiles), tile number from an atomic ticket, status words packed (flag, value) in 64 bits and polled by
// a whole warp, one lane per predecessor, each lane spinning on its own word, plain loads and stores (its cubin's
// .text is byte for byte rung 03's under NVRTC 12.9).
//
// The knobs and why each might pay (rung 03 reaches 70.8% of the copy bandwidth; 32768 tiles over 528 resident
// blocks in 0.72 ms is ~11 us per block for 32 KB of x: latency between its loads and its stores, not bandwidth):
//   THREADS, V        tile = THREADS x 4V ints. Larger tiles halve tickets, status words and look-backs per byte;
//                     smaller ones (CUB's sm_90 tuning for 4-byte sums is 128 threads x 24 items) keep more
//                     blocks resident, so more of them are loading while others wait on their look-back.
//   MINB              __launch_bounds__' minimum blocks per SM (0: none stated, as rung 03): caps the registers
//                     so that more blocks fit.
//   TICKET            1: tile = atomicAdd ticket (rung 03: every lower tile belongs to a block already running);
//                     0: tile = blockIdx.x, which saves one L2 round trip before a block's first load and relies
//                     on the hardware dispatching blocks in index order (it does on NVIDIA GPUs, and CUB's
//                     single-pass scan relies on the same).
//   EARLY_AGG         1: a block publishes its aggregate after a plain sum of its values (adds and one warp
//                     reduction), and the warps scan their sub-tiles while warp 0 looks back; 0 (rung 03): the
//                     aggregate waits for the V shuffle scans. Successors wait on that aggregate, so this cuts the
//                     serial part of every look-back chain.
//   POLL, SLEEP_NS,   0 (rung 03): each lane spins on its own word. 1: the warp polls together and, while any of
//   FIRST_SLEEP_NS    its 32 words is still EMPTY, sleeps SLEEP_NS before reloading the empty ones (CUB's delay
//                     constructors), after a first sleep of FIRST_SLEEP_NS once the aggregate is out: fewer
//                     status loads queue at L2 beside the data.
//   LOAD_HINT         0: plain ld.global.v4; 1: ld.global.nc.L1::no_allocate.L2::256B (x is read-only for the
//                     whole launch; skip L1, fetch whole 256-byte L2 lines: fewer DRAM requests per byte).
//   STORE_HINT        0: plain st.global.v4; 1: st.global.cs (streaming: y is never read again).
//
// Edge cases as rung 03: tiles that reach past N, or x / y not 16-byte aligned (the judge's misaligned round puts
// them at 4 mod 8), take the scalar path with zeros past N; the workspace (garbage at launch) is reset by the
// first launch. int32 adds wrap around, as the contract's full-range inputs need (the reference wraps too).

constexpr int CFG_TICKET = ${TICKET};
constexpr int CFG_EARLY_AGG = ${EARLY_AGG};
constexpr int CFG_POLL = ${POLL};
constexpr unsigned CFG_SLEEP_NS = ${SLEEP_NS};
constexpr unsigned CFG_FIRST_SLEEP_NS = ${FIRST_SLEEP_NS};
constexpr int CFG_LOAD_HINT = ${LOAD_HINT};
constexpr int CFG_STORE_HINT = ${STORE_HINT};
constexpr int CFG_TILE = ${THREADS} * 4 * ${V};

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

__device__ __forceinline__ int4 load_vec(const int4* p) {
    if constexpr (CFG_LOAD_HINT == 1) {
        int4 v;
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
            : "l"(p));
        return v;
    } else {
        return *p;
    }
}

__device__ __forceinline__ void store_vec(int4* p, const int4& v) {
    if constexpr (CFG_STORE_HINT == 1) {
        asm volatile("st.global.cs.v4.s32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
    } else {
        *p = v;
    }
}

// A tile is WARPS sub-tiles of 32 lanes x V int4. Element e of lane l's k-th int4, in its warp's sub-tile, is at
// sub-tile offset 4 * (32 * k + l) + e: every load instruction of a warp reads 512 contiguous bytes. With `vec`
// (whole tile inside, x and y 16-byte aligned) the loads are int4; otherwise scalar, with zeros past N.
template <int V>
__device__ __forceinline__ void load_sub_tile(int4 (&d)[V], const int* __restrict__ x, long long start, int N,
                                              bool vec) {
    const int lane = threadIdx.x % 32;
    if (vec) {
        const int4* src = reinterpret_cast<const int4*>(x + start) + lane;
#pragma unroll
        for (int k = 0; k < V; ++k) d[k] = load_vec(src + 32 * k);
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
        for (int k = 0; k < V; ++k) store_vec(dst + 32 * k, d[k]);
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

// The sub-tile's total without scanning it (EARLY_AGG): independent adds, then one warp reduction.
template <int V>
__device__ __forceinline__ int warp_sub_tile_total(const int4 (&d)[V]) {
    int s = 0;
#pragma unroll
    for (int k = 0; k < V; ++k) s += (d[k].x + d[k].y) + (d[k].z + d[k].w);
    return warp_sum(s);
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

// One lane's status word of tile t once it is no longer EMPTY (before tile 0: a prefix of 0).
__device__ __forceinline__ unsigned long long wait_status(const unsigned long long* status, int t) {
    unsigned long long word = pack_status(STATUS_PREFIX, 0);
    if constexpr (CFG_POLL == 0) {
        if (t >= 0) {
            do {
                word = load_status(status + t);
            } while ((word >> 32) == STATUS_EMPTY);
        }
    } else {
        if (t >= 0) word = load_status(status + t);
        while (__any_sync(FULL_MASK, (word >> 32) == STATUS_EMPTY)) {
            if constexpr (CFG_SLEEP_NS > 0) __nanosleep(CFG_SLEEP_NS);
            if (t >= 0 && (word >> 32) == STATUS_EMPTY) word = load_status(status + t);
        }
    }
    return word;
}

// Warp 0 only: the sum of all tiles before `tile`. Lane l watches tile base - l.
__device__ int look_back(const unsigned long long* status, int tile) {
    const int lane = threadIdx.x % 32;
    int exclusive = 0;
    if constexpr (CFG_FIRST_SLEEP_NS > 0) __nanosleep(CFG_FIRST_SLEEP_NS);
    for (int base = tile - 1;; base -= 32) {
        const unsigned long long word = wait_status(status, base - lane);
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

// Launch 2: one tile per block.
// MINB 0: __launch_bounds__(THREADS) alone, as rung 03 (ptxas gives it 64 registers: 4 blocks of 256 per SM; a
// stated minimum of 1 block changes its heuristics to 69 registers and 3 blocks).
#if ${MINB} > 0
#define SCAN_LAUNCH_BOUNDS(threads) __launch_bounds__(threads, ${MINB})
#else
#define SCAN_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
#endif
template <int THREADS, int V>
__global__ void SCAN_LAUNCH_BOUNDS(THREADS)
scan_lookback(int N, const int* __restrict__ x, int* __restrict__ y, int* __restrict__ workspace) {
    constexpr int SUB = 32 * 4 * V, TILE = THREADS / 32 * SUB;
    static_assert(TILE == CFG_TILE, "the plan's tile is the kernel's");
    __shared__ int warp_totals[THREADS / 32];
    __shared__ int tile_ticket, tile_prefix;
    int tile;
    if constexpr (CFG_TICKET) {
        if (threadIdx.x == 0) tile_ticket = (int)atomicAdd(reinterpret_cast<unsigned*>(workspace), 1u);
        __syncthreads();
        tile = tile_ticket;
    } else {
        tile = blockIdx.x;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long tile_start = (long long)tile * TILE, start = tile_start + warp * SUB;
    const bool vec = tile_start + TILE <= N && aligned16(x) && aligned16(y);

    int4 d[V];
    load_sub_tile<V>(d, x, start, N, vec);
    const int total = CFG_EARLY_AGG ? warp_sub_tile_total<V>(d) : warp_scan_sub_tile<V>(d);
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
    if constexpr (CFG_EARLY_AGG) warp_scan_sub_tile<V>(d);  // the other warps scan while warp 0 looks back
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

// ---- round 3: persistent blocks that load their next tile while they finish this one ---------------------------
// KERNEL = "scan_prefetch". Rung 03's block loads its tile, then waits: for its predecessors' totals, its scans and
// its stores, with none of its own loads in flight (the header's estimate: ~11 us per 32 KB tile, latency rather
// than bandwidth). Here a block loops over tiles: it takes the ticket of its next tile before it looks back on
// the current one and, once the ticket is known (at the barrier after the warp totals, which it already had),
// issues that tile's loads into a second set of registers; they are in flight through the current tile's
// look-back, scan and stores, and the next iteration finds them (mostly) landed. The loop is written twice, the
// register sets' roles swapped, so that nothing is copied from one set to the other (a copy would wait for the
// loads). With PREFETCH 0 the same persistent loop loads each tile at the start of its own iteration: what the
// persistence alone is worth.
// Deadlock: a block takes tickets in increasing order and holds at most two, the current and the next; the
// smallest unfinished ticket belongs to a running block whose earlier ticket, if any, is finished, and every tile
// before it has published its prefix, so its look-back ends. So any grid works; GRID resident blocks at most
// (MAX_BLOCKS = SMS x blocks per SM) makes every block persistent; rung 03's kernel takes MAX_BLOCKS = N, a grid
// of one block per tile. Shared state across iterations: warp_totals is rewritten
// only after the barrier that ends the readers' use of it (B below), tile_prefix by warp 0 only after barrier A of
// the next iteration, which every reader reaches after its last read; next_ticket likewise.
// scan_one_tile repeats scan_lookback's per-tile body rather than sharing it: with the body in a function of its own
// (the prefetch passed as a callback) rung 03's path compiled to different machine code (8 instructions fewer,
// scheduled otherwise; nvcc 13.0), and baseline_rung must stay rung 03's exact code to be its measurement.
template <int THREADS, int V>
__device__ __forceinline__ bool scan_one_tile(int4 (&cur)[V], int4 (&nxt)[V], int& tile, int tiles, int N,
                                              const int* __restrict__ x, int* __restrict__ y, int* workspace,
                                              int* warp_totals, int& next_ticket, int& tile_prefix) {
    constexpr int SUB = 32 * 4 * V, TILE = THREADS / 32 * SUB;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const bool aligned = aligned16(x) && aligned16(y);
    const long long tile_start = (long long)tile * TILE, start = tile_start + warp * SUB;
    const bool vec = tile_start + TILE <= N && aligned;
    if (threadIdx.x == 0) next_ticket = (int)atomicAdd(reinterpret_cast<unsigned*>(workspace), 1u);
    if constexpr (!${PREFETCH}) load_sub_tile<V>(cur, x, start, N, vec);

    const int total = CFG_EARLY_AGG ? warp_sub_tile_total<V>(cur) : warp_scan_sub_tile<V>(cur);
    if (lane == 0) warp_totals[warp] = total;
    __syncthreads();  // A: the warp totals and the next ticket
    const int next = next_ticket;
    if constexpr (${PREFETCH}) {
        if (next < tiles) {
            const long long next_start = (long long)next * TILE;
            load_sub_tile<V>(nxt, x, next_start + warp * SUB, N, next_start + TILE <= N && aligned);
        }
    }
    int before = 0, tile_total = 0;
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
    if constexpr (CFG_EARLY_AGG) warp_scan_sub_tile<V>(cur);
    __syncthreads();  // B: the tile's prefix
    const int offset = tile_prefix + before;
#pragma unroll
    for (int k = 0; k < V; ++k) {
        cur[k].x += offset;
        cur[k].y += offset;
        cur[k].z += offset;
        cur[k].w += offset;
    }
    store_sub_tile<V>(cur, y, start, N, vec);
    tile = next;
    return next < tiles;
}

template <int THREADS, int V>
__global__ void SCAN_LAUNCH_BOUNDS(THREADS)
scan_prefetch(int N, const int* __restrict__ x, int* __restrict__ y, int* __restrict__ workspace) {
    constexpr int SUB = 32 * 4 * V, TILE = THREADS / 32 * SUB;
    static_assert(TILE == CFG_TILE, "the plan's tile is the kernel's");
    __shared__ int warp_totals[THREADS / 32];
    __shared__ int next_ticket, tile_prefix;
    const int tiles = (int)(((long long)N + TILE - 1) / TILE);
    if (threadIdx.x == 0) next_ticket = (int)atomicAdd(reinterpret_cast<unsigned*>(workspace), 1u);
    __syncthreads();
    int tile = next_ticket;
    __syncthreads();  // every thread has read it before the first iteration takes the next one
    if (tile >= tiles) return;
    int4 a[V], b[V];
    if constexpr (${PREFETCH}) {
        const long long tile_start = (long long)tile * TILE;
        const bool vec = tile_start + TILE <= N && aligned16(x) && aligned16(y);
        load_sub_tile<V>(a, x, tile_start + threadIdx.x / 32 * SUB, N, vec);
    }
    for (;;) {
        if (!scan_one_tile<THREADS, V>(a, b, tile, tiles, N, x, y, workspace, warp_totals, next_ticket, tile_prefix))
            break;
        if (!scan_one_tile<THREADS, V>(b, a, tile, tiles, N, x, y, workspace, warp_totals, next_ticket, tile_prefix))
            break;
    }
}

/* @plan
[[launch]]
kernel = "scan_lookback_init<${TILE}>"
grid = ["cdiv(N, ${TILE} * 256)"]
block = [256]

[[launch]]
kernel = "${KERNEL}<${THREADS}, ${V}>"
grid = ["min(cdiv(N, ${TILE}), ${MAX_BLOCKS})"]
block = [${THREADS}]
*/

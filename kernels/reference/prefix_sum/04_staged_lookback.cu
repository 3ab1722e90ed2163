// Step 04 - decoupled look-back with the tile staged in shared memory by cp.async: more bytes in flight per SM
// Change versus 03: in step 03 a tile lives in registers (8 int4 per thread), so the registers bound how many tiles
// an SM holds (4 blocks of 256 threads: 128 KB of loads in flight per SM), and a block that has its data but waits
// for its look-back, or is storing, holds those registers without loading anything. Step 02 (x read twice, no
// waiting between blocks) moved 12 bytes per element at ~94% of the copy bandwidth; step 03 moves 8 at ~72%: the
// difference is time when too few loads are in flight while blocks wait. Here the tile is copied global -> shared by
// cp.async.cg (16 bytes per instruction, straight to shared memory through L2, no registers held while in flight),
// and a thread then scans its own slots in place, one int4 at a time: 32 registers instead of ~64, so the limit
// per SM becomes shared memory: 6 blocks x 32 KB (8192-int tiles, as step 03) = 192 KB of loads in flight per SM,
// 1.5x step 03, and the warps of 6 blocks to cover the look-back waits. The scan works on shared memory: pass 1
// reads each int4, scans it across the warp (the carry of step 03), and writes it back; after the look-back pass 2
// reads it again, adds the block's offset and stores it to y (shared-memory traffic: 3 x 32 KB per tile, far under
// the SM's shared bandwidth). A thread touches only the slots it copied itself, so cp.async.wait_all (which makes
// a thread's own copies visible to it) needs no block barrier. Tickets, status words (flag and value in 64 bits),
// the warp-wide look-back over 32 predecessors and the first zeroing launch are step 03's.
// Tiles that are ragged (the last one) or pointers not 16-byte aligned take a scalar path into the same slots.
// Traffic: 8 bytes per element, the minimum. Prediction: 80-88% of the copy bandwidth at N = 2^28, about
// 0.60-0.65 ms, a little faster than CUB's in-place scan.
// Measured on the H200 through the judge: not yet (needs the H200).

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


// ---- cp.async (sm_80+) --------------------------------------------------------------------------------------

__device__ __forceinline__ void copy_async_16(int4* smem_dst, const int4* gmem_src) {
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem_dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(gmem_src) : "memory");
}

__device__ __forceinline__ void copy_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// A tile is THREADS / 32 sub-tiles of 32 lanes x V int4, as in step 03: lane l of warp w owns the shared slots
// w * 32 * V + 32 * k + l (k < V), which hold tile elements 4 * slot .. 4 * slot + 3.

// Launch 2: one tile per block, its number taken from the ticket counter; the tile in dynamic shared memory
// (16 * THREADS * V bytes).
template <int THREADS, int V>
__global__ void __launch_bounds__(THREADS)
scan_staged(int N, const int* __restrict__ x, int* __restrict__ y, int* __restrict__ workspace) {
    constexpr int TILE = THREADS * V * 4;
    extern __shared__ int4 tile_data[];
    __shared__ int warp_totals[THREADS / 32];
    __shared__ int tile_ticket, tile_prefix;
    if (threadIdx.x == 0) tile_ticket = (int)atomicAdd(reinterpret_cast<unsigned*>(workspace), 1u);
    __syncthreads();
    const int tile = tile_ticket, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long tile_start = (long long)tile * TILE;
    const bool vec = tile_start + TILE <= N && aligned16(x) && aligned16(y);
    int4* mine = tile_data + warp * 32 * V + lane;  // slot k of this thread: mine[32 * k]
    const long long first = tile_start + 4 * (warp * 32 * V + lane);  // element of slot 0; slot k: + 128 * k

    if (vec) {
        const int4* src = reinterpret_cast<const int4*>(x + first);
#pragma unroll
        for (int k = 0; k < V; ++k) copy_async_16(mine + 32 * k, src + 32 * k);
        asm volatile("cp.async.commit_group;" ::: "memory");
        copy_async_wait_all();
    } else {
#pragma unroll 4
        for (int k = 0; k < V; ++k) {
            const long long e = first + 128 * k;
            int4 d;
            d.x = e < N ? x[e] : 0;
            d.y = e + 1 < N ? x[e + 1] : 0;
            d.z = e + 2 < N ? x[e + 2] : 0;
            d.w = e + 3 < N ? x[e + 3] : 0;
            mine[32 * k] = d;
        }
    }

    // Pass 1: the warp's sub-tile scanned in place (prefixes within the sub-tile).
    int carry = 0;
#pragma unroll 4
    for (int k = 0; k < V; ++k) {
        int4 d = mine[32 * k];
        d.y += d.x;
        d.z += d.y;
        d.w += d.z;
        const int inclusive = warp_inclusive_scan(d.w);
        const int before = carry + inclusive - d.w;  // everything left of this lane's 4 values
        d.x += before;
        d.y += before;
        d.z += before;
        d.w += before;
        mine[32 * k] = d;
        carry += __shfl_sync(FULL_MASK, inclusive, 31);
    }
    if (lane == 0) warp_totals[warp] = carry;
    __syncthreads();
    int before = 0, tile_total = 0;  // warps before this one; the whole tile
#pragma unroll
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

    // Pass 2: add the offset of everything before this warp's sub-tile, store.
    const int offset = tile_prefix + before;
    if (vec) {
        int4* dst = reinterpret_cast<int4*>(y + first);
#pragma unroll
        for (int k = 0; k < V; ++k) {
            int4 d = mine[32 * k];
            d.x += offset;
            d.y += offset;
            d.z += offset;
            d.w += offset;
            dst[32 * k] = d;
        }
    } else {
#pragma unroll 4
        for (int k = 0; k < V; ++k) {
            const long long e = first + 128 * k;
            const int4 d = mine[32 * k];
            if (e < N) y[e] = d.x + offset;
            if (e + 1 < N) y[e + 1] = d.y + offset;
            if (e + 2 < N) y[e + 2] = d.z + offset;
            if (e + 3 < N) y[e + 3] = d.w + offset;
        }
    }
}

/* @plan
[[launch]]
kernel = "scan_lookback_init<8192>"
grid = ["cdiv(N, 8192 * 256)"]
block = [256]

[[launch]]
kernel = "scan_staged<256, 8>"
grid = ["cdiv(N, 8192)"]
block = [256]
shared_bytes = "32768"
*/

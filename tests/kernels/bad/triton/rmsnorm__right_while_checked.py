"""Counts its launches and stops working once the checks should be over (the CUDA set's
sgemm_wrong_in_one_timed_round.cu, the other way round): a correct RMSNorm for its first CHECKED launches (the four
test shapes, each run twice), then a kernel that returns at once, leaving y as the judge poisoned it, and would time
as fast as a launch can be. Every timed round is checked, so the first one fails with y never written.

The count must outlive a launch: as in softmax__replay_by_address.py, a PTX `.global` declared in inline assembly
holds it (Triton has no global variables; a workspace is refilled with garbage before every launch, and rmsnorm has
none). Every program reads the count first; the one that finishes last adds one to it."""

import triton
import triton.language as tl

CHECKED = tl.constexpr(8)


@triton.jit
def counters(anchor):
    # [0] launches so far, [1] programs of this launch finished. One asm statement per kernel, so one array.
    return tl.inline_asm_elementwise(
        """
        {
        .global .align 8 .b8 launch_counters[8];
        cvta.global.u64 $0, launch_counters;
        }
        """,
        "=l,r",
        [anchor],
        dtype=tl.int64,
        is_pure=False,
        pack=1,
    )


@triton.jit
def rmsnorm_counted(rows, hidden, eps, x, w, y, CHUNK: tl.constexpr):
    launches = counters(rows).to(tl.pointer_type(tl.int32))
    finished = launches + 1
    launched_before = tl.load(launches, volatile=True)
    if launched_before < CHECKED:
        # A correct RMSNorm: FP32 sum of squares over CHUNK-wide pieces, one rounding to BF16.
        row = tl.program_id(0).to(tl.int64)
        lanes = tl.arange(0, CHUNK)
        squares = tl.zeros([CHUNK], tl.float32)
        for start in range(0, hidden, CHUNK):
            v = tl.load(x + row * hidden + start + lanes, mask=start + lanes < hidden, other=0.0).to(tl.float32)
            squares += v * v
        r = tl.math.div_rn(1.0, tl.sqrt_rn(tl.math.div_rn(tl.sum(squares, 0), hidden.to(tl.float32)) + eps))
        for start in range(0, hidden, CHUNK):
            inside = start + lanes < hidden
            v = tl.load(x + row * hidden + start + lanes, mask=inside, other=0.0).to(tl.float32)
            g = tl.load(w + start + lanes, mask=inside, other=0.0).to(tl.float32)
            tl.store(y + row * hidden + start + lanes, (v * r * g).to(tl.bfloat16), mask=inside)
    # The last program to finish counts the launch. The barrier: every warp of this program has read the count
    # before one thread's atomic tells the others; the atomic orders the other programs' reads before the store.
    tl.debug_barrier()
    if tl.atomic_add(finished, 1) == rows - 1:
        tl.store(finished, 0)
        tl.store(launches, launched_before + 1)


PLAN = """
[[launch]]
kernel = "rmsnorm_counted"
grid = ["rows"]
num_warps = 8
constexprs = { CHUNK = 2048 }
"""

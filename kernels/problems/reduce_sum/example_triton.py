"""Sum of a vector with Triton, in two launches and no atomics (the order of the additions is fixed, so the result
is deterministic). First: at most 1024 programs, each walking x with a grid-wide stride, BLOCK elements at a time
(each lane keeps its own FP32 running sum, so no chain is long), adding its lanes with a tree at the end and
writing its partial sum to workspace[program]. Second: one program adds those partial sums the same way and
writes out[0]. The workspace needs no zeroing: the second launch reads only what the first wrote.

To make it faster, first give each program more elements in flight per step (several BLOCKs, or more warps),
so that enough loads are outstanding to saturate memory."""

import triton
import triton.language as tl

# The first launch's program count is min(cdiv(N, BLOCK), MAX_PROGRAMS); the plan's grid says the same.
MAX_PROGRAMS = tl.constexpr(1024)


@triton.jit
def partial_sums(N, x, out, workspace, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    stride = tl.num_programs(0) * BLOCK
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(tl.program_id(0) * BLOCK, N, stride):
        acc += tl.load(x + start + lanes, mask=start + lanes < N, other=0.0)
    tl.store(workspace + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def final_sum(N, x, out, workspace, BLOCK: tl.constexpr):
    programs = tl.minimum(tl.cdiv(N, BLOCK), MAX_PROGRAMS)
    lanes = tl.arange(0, MAX_PROGRAMS)
    partial = tl.load(workspace + lanes, mask=lanes < programs, other=0.0)
    tl.store(out, tl.sum(partial, axis=0))


PLAN = """
[[launch]]
kernel = "partial_sums"
grid = ["min(cdiv(N, 1024), 1024)"]
num_warps = 4
constexprs = { BLOCK = 1024 }

[[launch]]
kernel = "final_sum"
grid = [1]
num_warps = 4
constexprs = { BLOCK = 1024 }
"""

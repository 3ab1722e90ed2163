"""Inclusive prefix sum of int32 with Triton, in three launches. 1: each program scans its own BLOCK elements with
tl.cumsum, writes those block-local prefixes to y and its block's total to workspace[program]. 2: one program
scans the block totals in place, BLOCK at a time, carrying the running total from one chunk to the next. 3: every
element of block b > 0 gets the total of blocks 0..b-1, workspace[b - 1], added. Lanes past N load 0 and add
nothing. int32 addition wraps around modulo 2^32 in Triton, as the contract's sums do.

To make it faster, first fuse the three passes into one (a decoupled look-back: each block waits for its
predecessor's running total, published in the workspace with a flag), so that x is read and y written once."""

import triton
import triton.language as tl


@triton.jit
def scan_blocks(N, x, y, workspace, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    values = tl.load(x + offsets, mask=mask, other=0)
    tl.store(y + offsets, tl.cumsum(values, axis=0), mask=mask)
    tl.store(workspace + tl.program_id(0), tl.sum(values, axis=0))


@triton.jit
def scan_totals(N, x, y, workspace, BLOCK: tl.constexpr):
    blocks = tl.cdiv(N, BLOCK)
    lanes = tl.arange(0, BLOCK)
    carry = 0  # the total of the chunks before this one
    for start in range(0, blocks, BLOCK):
        mask = start + lanes < blocks
        totals = tl.load(workspace + start + lanes, mask=mask, other=0)
        tl.store(workspace + start + lanes, tl.cumsum(totals, axis=0) + carry, mask=mask)
        carry += tl.sum(totals, axis=0)


@triton.jit
def scan_add(N, x, y, workspace, BLOCK: tl.constexpr):
    block = tl.program_id(0)
    if block > 0:
        offsets = block * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < N
        before = tl.load(workspace + block - 1)
        tl.store(y + offsets, tl.load(y + offsets, mask=mask) + before, mask=mask)


PLAN = """
[[launch]]
kernel = "scan_blocks"
grid = ["cdiv(N, 1024)"]
num_warps = 4
constexprs = { BLOCK = 1024 }

[[launch]]
kernel = "scan_totals"
grid = [1]
num_warps = 4
constexprs = { BLOCK = 1024 }

[[launch]]
kernel = "scan_add"
grid = ["cdiv(N, 1024)"]
num_warps = 4
constexprs = { BLOCK = 1024 }
"""

"""Attention rung 05 (kernels/drafts/attention/05_tail_split.cu) on the CPU: the index maths of its schedule and
of its combine, mirrored here from block_segments and attention_tail_combine, at every test and benchmark shape
of the attention problem and several multiprocessor counts, on the grids of the file's own plan; and the combine's
merge of partial (m, l, O) results, in the kernel's base-2 convention, against an unsplit float64 softmax. The
kernels themselves need the GPU."""

import math
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from kernels import problems
from kernels.plan import extract_plan, resolve

PROBLEM = problems.load("attention")
SOURCE = Path(__file__).resolve().parents[2] / "kernels/drafts/attention/05_tail_split.cu"
BM = BN = 128  # query rows of a unit, keys of a tile (BM, BN in the .cu)
COMBINE_ROWS_PER_BLOCK = 8  # COMBINE_WARPS: a warp per row
SMS_COUNTS = (132, 114, 7, 3, 1)  # the H200's and H100 SXM's, the H100 PCIe's, and small ones that split the tests
SHAPES = [s.sizes for s in PROBLEM.tests + PROBLEM.benchmarks]
# Beyond the problem's shapes: L = T (R = SMS - 1 > T: every tail block runs a whole unit, the combine nothing),
# and R = 1 with L = 1 (one unit split over T blocks).
EXTRA = [
    ({"batch": 1, "heads": 3, "seq": 200, "head_dim": 64, "causal": 0}, 7),
    ({"batch": 3, "heads": 5, "seq": 300, "head_dim": 64, "causal": 0}, 11),
]
CASES = [(sizes, sms) for sizes in SHAPES for sms in SMS_COUNTS] + EXTRA


def cdiv(a, b):
    return -(-a // b)


class Segment(NamedTuple):
    unit: int
    q0: int
    head: int
    batch: int
    t_begin: int
    t_end: int
    slot: int  # -1: the whole unit (O written); otherwise the workspace slot


def tail_split_allowed(batch, heads, seq, head_dim, sms):
    return batch * heads * seq * seq >= 2 * sms * BM * (head_dim + 2)


def unit_segment(unit, q_tiles, heads, seq, causal, t_begin, t_end, slot):
    q_block = q_tiles - 1 - unit % q_tiles if causal else unit % q_tiles
    q0, bh = q_block * BM, unit // q_tiles
    if t_end < 0:
        t_end = cdiv(min(seq, q0 + BM) if causal else seq, BN)
    return Segment(unit, q0, bh % heads, bh // heads, t_begin, t_end, slot)


def block_segments(sizes, sms, grid_y, bx, by):
    """block_segments() of the .cu: block (bx, by)'s segments on grid [sms, grid_y]."""
    batch, heads, seq, head_dim, causal = (sizes[k] for k in ("batch", "heads", "seq", "head_dim", "causal"))
    q_tiles = cdiv(seq, BM)
    units = q_tiles * batch * heads
    rem = units % sms
    if not causal and rem > 0 and by == grid_y - 1 and tail_split_allowed(batch, heads, seq, head_dim, sms):
        T, total = q_tiles, rem * q_tiles
        length = cdiv(total, sms)
        begin, end = bx * length, min(bx * length + length, total)
        if begin >= end:
            return []
        r = begin // T
        first = units - rem + r
        t0, t1 = begin - r * T, min(T, end - r * T)
        segments = [unit_segment(first, q_tiles, heads, seq, 0, t0, t1, -1 if (t0, t1) == (0, T) else 2 * bx)]
        if end > (r + 1) * T:
            t2 = end - (r + 1) * T
            segments.append(unit_segment(first + 1, q_tiles, heads, seq, 0, 0, t2, -1 if t2 == T else 2 * bx + 1))
        return segments
    lin = by * sms + bx
    return [unit_segment(lin, q_tiles, heads, seq, causal, 0, -1, -1)] if lin < units else []


def combine_slots(sizes, sms, r):
    """attention_tail_combine of the .cu for block x = r: the unit it merges and the slots it reads (None: exits)."""
    batch, heads, seq, head_dim, causal = (sizes[k] for k in ("batch", "heads", "seq", "head_dim", "causal"))
    if causal:
        return None
    q_tiles = cdiv(seq, BM)
    units = q_tiles * batch * heads
    rem = units % sms
    if rem == 0 or r >= rem or not tail_split_allowed(batch, heads, seq, head_dim, sms):
        return None
    T = q_tiles
    length = cdiv(rem * T, sms)
    c0, c1 = r * T // length, ((r + 1) * T - 1) // length
    if c0 == c1:
        return None
    return units - rem + r, [2 * c + (0 if c * length // T == r else 1) for c in range(c0, c1 + 1)]


def test_the_constants_mirror_the_kernel():
    text = SOURCE.read_text()
    assert f"constexpr int BM = {BM};" in text and f"constexpr int BN = {BN};" in text
    assert f"constexpr int COMBINE_WARPS = {COMBINE_ROWS_PER_BLOCK};" in text
    assert "2 * sms * BM * (head_dim + 2)" in text  # tail_split_allowed


def plan_grids(sizes, sms):
    launches = [resolve(launch, sizes, "sm_90a", PROBLEM, sms) for launch in extract_plan(SOURCE.read_text())]
    assert [launch.kernel for launch in launches] == ["attention_wgmma_kernel<3, true>", "attention_tail_combine"]
    return launches


def unit_tiles(sizes, unit):
    """Key tiles of a unit: all of them, or up to the diagonal (causal)."""
    return unit_segment(unit, cdiv(sizes["seq"], BM), sizes["heads"], sizes["seq"], sizes["causal"], 0, -1, -1).t_end


@pytest.mark.parametrize(
    ("sizes", "sms"), CASES, ids=["x".join(str(v) for v in s.values()) + f"-sms{sms}" for s, sms in CASES]
)
def test_schedule_covers_every_tile_once_and_the_combine_reads_what_was_written(sizes, sms):
    attention, combine = plan_grids(sizes, sms)
    q_tiles = cdiv(sizes["seq"], BM)
    units = q_tiles * sizes["batch"] * sizes["heads"]
    # The kernels learn SMS from gridDim.x; the attention kernel's last row is grid row cdiv(units, SMS) - 1.
    assert attention.grid == (sms, cdiv(units, sms), 1)
    assert combine.grid == ((1 if sizes["causal"] else sms), combine.grid[1], 1)
    assert combine.block == (COMBINE_ROWS_PER_BLOCK * 32, 1, 1)
    assert combine.grid[1] * COMBINE_ROWS_PER_BLOCK == BM

    covered = np.zeros((units, q_tiles), dtype=int)
    partial = defaultdict(set)  # unit -> the slots written for it
    slots = set()
    tail_tiles = []
    split = False
    for by in range(attention.grid[1]):
        for bx in range(sms):
            segments = block_segments(sizes, sms, attention.grid[1], bx, by)
            assert len(segments) <= 2
            for k, s in enumerate(segments):
                full = unit_tiles(sizes, s.unit)
                assert 0 <= s.t_begin < s.t_end <= full
                covered[s.unit, s.t_begin : s.t_end] += 1
                assert (s.slot == -1) == (s.t_begin == 0 and s.t_end == full)
                if s.slot >= 0:
                    assert s.slot == 2 * bx + k and s.slot not in slots
                    slots.add(s.slot)
                    partial[s.unit].add(s.slot)
                    split = True
            if len(segments) == 2:  # the end of one unit, then the start of the next
                assert segments[0].t_end == q_tiles and segments[1].t_begin == 0
                assert segments[1].unit == segments[0].unit + 1
            if by == attention.grid[1] - 1 and split:
                tail_tiles.append(sum(s.t_end - s.t_begin for s in segments))
    expected = np.array([[int(t < unit_tiles(sizes, u)) for t in range(q_tiles)] for u in range(units)])
    assert np.array_equal(covered, expected)

    if slots:  # the partial results fit in the workspace
        assert max(slots) < 2 * sms
        assert (max(slots) + 1) * BM * (sizes["head_dim"] + 2) <= PROBLEM.workspace_count("S", sizes)
    if split:  # the tail's blocks share its tiles evenly: none runs more than L
        rem = units % sms
        assert max(tail_tiles) == cdiv(rem * q_tiles, sms) <= q_tiles
    merged = {}
    for r in range(combine.grid[0]):
        read = combine_slots(sizes, sms, r)
        if read is not None:
            merged[read[0]] = read[1]
    assert {u: set(s) for u, s in merged.items()} == dict(partial)
    assert all(len(s) == len(set(s)) for s in merged.values())


def test_the_model_splits_where_the_brief_says():
    """seq 4097 non-causal at head_dim 128 splits on the H200 (33 units, all in the tail); the small tests do not
    (their workspace is too small), and the benchmarks' non-causal shapes do."""
    split = {
        tuple(s.values()): any(
            seg.slot >= 0
            for bx in range(132)
            for seg in block_segments(s, 132, cdiv(cdiv(s["seq"], BM) * s["batch"] * s["heads"], 132), bx, 0)
        )
        for s in SHAPES
        if cdiv(s["seq"], BM) * s["batch"] * s["heads"] <= 132
    }
    assert split == {
        (1, 1, 1, 64, 0): False,
        (2, 2, 1, 128, 1): False,
        (2, 3, 17, 64, 1): False,
        (1, 2, 17, 128, 0): False,
        (1, 2, 1000, 128, 1): False,
        (2, 1, 1000, 64, 0): False,
        (1, 2, 4097, 64, 1): False,
        (1, 1, 4097, 128, 0): True,
    }
    for sizes in PROBLEM.benchmarks:
        s = sizes.sizes
        units = cdiv(s["seq"], BM) * s["batch"] * s["heads"]
        last = cdiv(units, 132) - 1
        tail = [seg for bx in range(132) for seg in block_segments(s, 132, last + 1, bx, last)]
        assert any(seg.slot >= 0 for seg in tail) == (s["causal"] == 0)


def partial_result(x, v, tiles):
    """One segment as the kernel keeps it, tile by tile in FP32: x = raw scores * log2(e) / sqrt(d) of one row's
    keys; m = max x, l = sum 2^(x - m), O = sum 2^(x - m) V (P's BF16 rounding left out: the merge is tested)."""
    m, total, o = np.float32(-np.inf), np.float32(0), np.zeros(v.shape[1], np.float32)
    for keys in tiles:
        m_new = max(m, x[keys].max())
        alpha = np.exp2(m - m_new)
        p = np.exp2(x[keys] - m_new)
        total, o, m = total * alpha + p.sum(dtype=np.float32), o * alpha + p @ v[keys], m_new
    return m, total, o


def merge(parts):
    """The combine: m = max m_c, w_c = 2^(m_c - m), O = sum w_c O_c / sum w_c l_c."""
    m = max(p[0] for p in parts)
    w = [np.exp2(p[0] - m) for p in parts]
    o = sum(wc * p[2] for wc, p in zip(w, parts, strict=True))
    return o / sum(wc * p[1] for wc, p in zip(w, parts, strict=True))


@pytest.mark.parametrize(
    ("sizes", "sms"),
    [
        ({"batch": 1, "heads": 1, "seq": 4097, "head_dim": 128, "causal": 0}, 132),
        ({"batch": 2, "heads": 1, "seq": 1000, "head_dim": 64, "causal": 0}, 7),
        ({"batch": 1, "heads": 2, "seq": 17, "head_dim": 128, "causal": 0}, 132),  # no split: S too small
        ({"batch": 1, "heads": 8, "seq": 16384, "head_dim": 128, "causal": 0}, 132),
    ],
)
def test_merge_of_the_tail_partition_equals_the_unsplit_softmax(sizes, sms):
    """Each split unit's segments as the schedule cuts them, merged as the combine does, for a few rows with large
    logits (scores up to about 200: without the shifts 2^x overflows FP32)."""
    rng = np.random.default_rng(5)
    seq, d = sizes["seq"], sizes["head_dim"]
    q_tiles = cdiv(seq, BM)
    grid_y = cdiv(q_tiles * sizes["batch"] * sizes["heads"], sms)
    by_unit = defaultdict(dict)  # unit -> slot -> its tiles
    for bx in range(sms):
        for s in block_segments(sizes, sms, grid_y, bx, grid_y - 1):
            if s.slot >= 0:
                by_unit[s.unit][s.slot] = range(s.t_begin, s.t_end)
    checked = 0
    for r in range(sms):
        read = combine_slots(sizes, sms, r)
        if read is None or checked >= 3:
            continue
        unit, slots = read
        assert set(slots) == set(by_unit[unit])
        for _ in range(2):  # rows of the unit
            s = rng.standard_normal(seq) * rng.choice([1.0, 60.0]) * math.sqrt(d)  # raw dot products
            s[rng.integers(seq)] = 200.0 * math.sqrt(d)  # one very large logit
            v = rng.standard_normal((seq, d)).astype(np.float32)
            x = (s * (math.log2(math.e) / math.sqrt(d))).astype(np.float32)
            parts = []
            for slot in slots:
                tiles = [np.arange(t * BN, min(seq, t * BN + BN)) for t in by_unit[unit][slot]]
                parts.append(partial_result(x, v, tiles))
            scaled = s / math.sqrt(d)
            weights = np.exp(scaled - scaled.max())
            reference = weights @ v.astype(np.float64) / weights.sum()
            np.testing.assert_allclose(merge(parts), reference, rtol=2e-5, atol=2e-5 * np.abs(reference).max())
        checked += 1
    assert checked == (0 if by_unit == {} else min(3, len(by_unit)))

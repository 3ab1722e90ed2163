"""Autotune step 07: judge every candidate tile of `sgemm_autotuned` and write the fastest into 07_autotuned.cu.

Runs on the GPU, through the judge library (the same compile, checks and timing as `python -m kernels bench`):

    python kernels/reference/autotune.py [--write] [--rounds 5]

Search space: block tile BM x BN of at least 128 x 128 outputs (BM, BN in 64/128/256), BK in 8/16/32, thread
tile TM x TN of 64 or 128 accumulators, 128 or 256 threads, at most 48 KB of static shared memory. Every candidate
is compiled on the CPU (in parallel), then judged on one warm GPU worker: all six test shapes must pass, and the
4096^3 benchmark is timed for a few rounds interleaved with cuBLAS (a screen, shorter than a full bench). The table
lists every candidate, fastest first; with --write the winner's template arguments, grid and block replace the
plan in 07_autotuned.cu and its AUTOTUNE-RESULT comment records the measurement.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime
import itertools
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the repository root, for `import kernels`

from kernels import compiler  # noqa: E402
from kernels.judge import GpuJudge, JudgeOptions  # noqa: E402

FILE = os.path.join(HERE, "07_autotuned.cu")


def candidates() -> list[tuple[int, int, int, int, int]]:
    out = []
    for bm, bn, bk, tm, tn in itertools.product([64, 128, 256], [64, 128, 256], [8, 16, 32], [4, 8, 16], [4, 8, 16]):
        threads = (bm // tm) * (bn // tn)
        if threads not in (128, 256) or tm * tn not in (64, 128) or bm * bn < 128 * 128:
            continue
        if bk * (bm + 4 + bn) * 4 > 48 * 1024:  # static shared memory limit
            continue
        if (bm * bk) % (4 * threads) or (bk * bn) % (4 * threads):  # float4 loads split evenly over threads
            continue
        out.append((bm, bn, bk, tm, tn))
    return out


def plan_block(c) -> str:
    bm, bn, bk, tm, tn = c
    return (
        f'/* @plan\n[[launch]]\nkernel = "sgemm_autotuned<{bm}, {bn}, {bk}, {tm}, {tn}>"\n'
        f'grid = ["cdiv(N, {bn})", "cdiv(M, {bm})"]\nblock = [{(bm // tm) * (bn // tn)}]\n*/'
    )


def with_plan(source: str, c) -> str:
    return re.sub(r"/\* @plan.*?\*/", plan_block(c), source, flags=re.S)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="write the winner into 07_autotuned.cu")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per candidate (interleaved with cuBLAS)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N candidates (debugging)")
    args = ap.parse_args()
    with open(FILE) as f:
        source = f.read()
    cands = candidates()[: args.limit or None]
    with cf.ThreadPoolExecutor(max_workers=os.cpu_count()) as ex:  # each compile runs in its own sandboxed process
        compiled = list(ex.map(lambda c: compiler.compile_submission(with_plan(source, c), "sgemm"), cands))
    print(f"compiled {sum(c.ok for c in compiled)}/{len(cands)} candidates", flush=True)

    rows, telemetry = [], None
    # A fresh input seed per candidate, as for `bench`. (A fixed seed, 20261202, once failed every candidate at
    # M = N = K = 1, where alpha*A*B + beta*C can cancel and one element's rounding exceeds the tolerance.)
    options = JudgeOptions(seed=None, time_budget_s=0.2, min_rounds=args.rounds, max_rounds=args.rounds)
    with GpuJudge(warm=True) as judge:
        for c, comp in zip(cands, compiled, strict=True):
            if not comp.ok:
                rows.append((c, None, f"{comp.verdict.value}: {comp.message[:80]}"))
                continue
            r = judge.judge(comp, options)
            regs = comp.kernels[0].registers if comp.kernels else -1
            if r.passed and r.benchmarks:
                rows.append((c, r.benchmarks[0], f"{regs} regs"))
            else:
                rows.append((c, None, f"{r.verdict.value}: {r.message[:80]}"))
            telemetry = r.telemetry
    ok = sorted([r for r in rows if r[1] is not None], key=lambda r: r[1].candidate.median_ms)
    gpu = getattr(telemetry, "gpu_name", "GPU") if telemetry else "GPU"
    print(
        f"\n{'BM':>4} {'BN':>4} {'BK':>3} {'TM':>3} {'TN':>3} {'thr':>4} {'ms':>8} {'TFLOP/s':>8} {'%cuBLAS':>8}  info"
    )
    for c, b, info in ok + [r for r in rows if r[1] is None]:
        bm, bn, bk, tm, tn = c
        t = (
            f"{b.candidate.median_ms:8.3f} {b.tflops:8.1f} {b.pct_of_baseline:8.1f}"
            if b
            else f"{'-':>8} {'-':>8} {'-':>8}"
        )
        print(f"{bm:4d} {bn:4d} {bk:3d} {tm:3d} {tn:3d} {(bm // tm) * (bn // tn):4d} {t}  {info}")
    if not ok:
        print("no candidate passed")
        return 1
    c, b, _ = ok[0]
    print(
        f"\nbest: sgemm_autotuned<{', '.join(map(str, c))}>: {b.candidate.median_ms:.3f} ms, "
        f"{b.pct_of_baseline:.1f}% of cuBLAS ({b.baseline.median_ms:.3f} ms) on {gpu}"
    )
    if args.write:
        with open(FILE) as f:
            src = with_plan(f.read(), c)
        bm, bn, bk, tm, tn = c
        line = (
            f"// AUTOTUNE-RESULT: BM={bm} BN={bn} BK={bk} TM={tm} TN={tn} ({(bm // tm) * (bn // tn)} threads): "
            f"{b.candidate.median_ms:.3f} ms, {b.tflops:.1f} TFLOP/s, {b.pct_of_baseline:.1f}% of cuBLAS at 4096^3 "
            f"on {gpu}, {datetime.date.today().isoformat()} ({len(ok)} of {len(cands)} candidates passed)"
        )
        src = re.sub(r"// AUTOTUNE-RESULT:.*", line, src)
        with open(FILE, "w") as f:
            f.write(src)
        print("wrote", FILE)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The GPU pool's own rate, without the site: one GpuJudge judging the same compiled submission back to back, as a
GPU worker does with a full queue, for several sizes of the pool of warm spares (kernels/sandbox.py). No Django,
Celery or database: it isolates what the pool changes (the wait for a set-up child between jobs) from the rest of
the pipeline that bench/judge_load.py measures.

    python3 bench/pool_rate.py [--problem sgemm] [--jobs 30] [--spares 1,2,4]
    python3 bench/pool_rate.py --problem all --jobs 8 --spares 4 --settle-s 3   # every example: capacity rows

Prints, per problem's example and pool size: jobs per minute (first job's start to last job's end) and GPU-seconds
a job, the per-job wall time, setup wait and wait of its timed launches for spares' setup steps (the device lock;
p50 and mean), where a job's and a spare's setup's time goes, and the median over jobs of the kernel's timed
median with its spread, so that a pool that disturbed the timing would show. Every job must be accepted. Without
the site, a job's GPU-seconds leave out the worker's own time around the judge (its claim, record and broker:
judge_load's "idle between jobs", about 30 ms).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from kernels import compiler, problems
from kernels.judge import GpuJudge, JudgeOptions
from kernels.payloads import SetupAnswer
from kernels.results import Verdict

PROBLEMS = Path(__file__).resolve().parents[1] / "kernels" / "problems"


def run(compiled, jobs: int, spares: int, kept: SetupAnswer | None, settle_s: float) -> dict:
    options = JudgeOptions()
    walls, waits, lock_waits, medians, setups, rounds = [], [], [], [], [], []
    stages: dict[str, list[float]] = {}
    with GpuJudge(spares=spares) as judge:
        judge.kept = kept  # the first pool size's measuring setup, handed on as a worker hands it to its children
        judge.judge(compiled, options)  # a first child that measures the ceilings is not part of the rate
        time.sleep(settle_s)  # the pool fills and sets up, as it would while a worker waits for its next message
        begin = time.perf_counter()
        for _ in range(jobs):
            result = judge.judge(compiled, options)
            if result.verdict is not Verdict.ACCEPTED:
                raise SystemExit(f"job not accepted: {result.verdict.value}: {result.message}")
            walls.append(result.wall_time_ms)
            waits.append(result.setup_wait_ms)
            lock_waits.append(result.lock_wait_ms)
            for stage, ms in result.stage_ms.items():
                stages.setdefault(stage, []).append(ms)
            medians.append(result.benchmarks[0].candidate.median_ms)
            rounds.append([_rounds(bench) for bench in result.benchmarks])
            answer = judge.worker.setup_value
            setup = answer.setup_ms if isinstance(answer, SetupAnswer) else None
            if setup and setup not in setups:
                setups.append(setup)
                for why in answer.skipped:
                    print(f"  a spare's setup skipped {why}", flush=True)
        elapsed = time.perf_counter() - begin
        kept = judge.kept
    return {
        "spares": spares,
        "jobs_per_min": 60 * jobs / elapsed,
        "wall_ms_p50": statistics.median(walls),
        "wait_ms_p50": statistics.median(waits),
        "wait_ms_mean": statistics.fmean(waits),
        "lock_wait_ms_p50": statistics.median(lock_waits),
        "lock_wait_ms_mean": statistics.fmean(lock_waits),
        "stage_ms_p50": {stage: statistics.median(ms) for stage, ms in stages.items()},
        "setup_ms_p50": {key: statistics.median(s[key] for s in setups) for key in setups[0]} if setups else {},
        "kernel_ms": statistics.median(medians),
        "kernel_spread_pct": 100 * (max(medians) - min(medians)) / statistics.median(medians),
        "rounds": rounds,  # per benchmark shape, per job: checked rounds / baseline launches, medians' errors
        "kept": kept,
    }


def _rounds(bench) -> str:
    """ "checked rounds / the baseline's timed launches (median rel. std. errors, %)" at one shape."""
    c, b = bench.candidate, bench.baseline
    return f"{c.samples}/{b.samples} ({100 * c.median_rel_std_err:.2f}/{100 * b.median_rel_std_err:.2f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="sgemm", help="problems whose example is judged, comma-separated, or all")
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--spares", default="1,2,4", help="pool sizes to measure, comma-separated")
    parser.add_argument("--settle-s", type=float, default=10.0, help="pause for the pool to set up before timing")
    args = parser.parse_args()
    names = problems.available() if args.problem == "all" else args.problem.split(",")
    print(
        "| problem | spares | jobs/min | GPU-s a job | job wall p50 ms | setup wait p50 / mean | "
        "lock wait p50 / mean | kernel ms |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    kept = None  # the ceilings, measured by the first judge and handed on to the others
    for problem in names:
        compiled = compiler.compile_submission((PROBLEMS / problem / "example.cu").read_text(), problem)
        if not compiled.ok:
            raise SystemExit(f"{problem}: {compiled.message}")
        for spares in (int(s) for s in args.spares.split(",")):
            r = run(compiled, args.jobs, spares, kept, args.settle_s)
            kept = r.pop("kept")
            print(
                f"| {problem} | {r['spares']} | {r['jobs_per_min']:.1f} | "
                f"{60 / r['jobs_per_min']:.3f} | {r['wall_ms_p50']:.0f} | "
                f"{r['wait_ms_p50']:.0f} / {r['wait_ms_mean']:.0f} | {r['lock_wait_ms_p50']:.0f} / "
                f"{r['lock_wait_ms_mean']:.0f} | {r['kernel_ms']:.3f} (spread {r['kernel_spread_pct']:.1f}%) |",
                flush=True,
            )
            stages = ", ".join(f"{k} {v:.0f}" for k, v in r["stage_ms_p50"].items())
            setup = ", ".join(f"{k} {v:.0f}" for k, v in r["setup_ms_p50"].items())
            print(f"  job stages p50 ms: {stages}; a spare's setup p50 ms: {setup or '-'}", flush=True)
            print(f"  per benchmark shape, per job: checked rounds / baseline launches: {r['rounds']}", flush=True)


if __name__ == "__main__":
    main()

"""A CPU stand-in for the GPU job (`kernels.runner:judge_job`), run by the judge's real sandbox.

Point the worker at it with SUBMISSIONS_JUDGE_JOB=tests.submissions.standin_judge:judge_job and
SUBMISSIONS_JUDGE_WARM_UP=tests.submissions.standin_judge:warm_up. It runs in the sandboxed child of a
real `kernels.GpuJudge`, receives the real job (a `kernels.payloads.GpuJob`: the cubin and plan NVRTC produced)
and answers with a JudgeResult built from it: the kernels' resources as compiled, every test shape "checked" and
the benchmark shapes "timed" with figures that say they come from the stand-in (gpu_name "CPU stand-in", and a
gpu_uuid made from CUDA_VISIBLE_DEVICES).

Misbehaviour is chosen by a marker in a kernel's name (the job carries names, not the source):
`standin_hang` never answers (the judge's timeout kills the child), `standin_crash` aborts the child,
`standin_slow` answers after STANDIN_SLOW_S seconds (default 4: long enough to kill a worker mid-job),
`standin_wrong` fails a test shape. STANDIN_JOB_S makes every job take that long (bench/judge_load.py's smoke
test: a GPU queue that fills up, as on a real GPU).
"""

from __future__ import annotations

import hashlib
import os
import time

from kernels import problems
from kernels.payloads import GpuJob
from kernels.results import BenchResult, JudgeResult, KernelResources, ShapeCheck, Telemetry, TimingStats, Verdict

GPU_NAME = "CPU stand-in"


def standin_uuid() -> str:
    """A made-up device UUID naming the GPU this process was given (CUDA_VISIBLE_DEVICES), as a real child
    reports the UUID of the one device it sees: tests check that a job records the GPU its worker owns."""
    return f"GPU-standin-{os.environ.get('CUDA_VISIBLE_DEVICES', 'none')}"


def warm_up(_payload=None) -> None:
    """Nothing to warm: no CUDA here."""


def _timing(median_ms: float) -> TimingStats:
    return TimingStats(
        samples=10,
        median_ms=median_ms,
        q25_ms=median_ms * 0.99,
        q75_ms=median_ms * 1.01,
        min_ms=median_ms * 0.98,
        mean_ms=median_ms,
        rel_std_err=0.002,
    )


def judge_job(job: GpuJob) -> JudgeResult:
    names = " ".join(launch["kernel"] for launch in job.plan).lower()
    if "standin_hang" in names:
        while True:
            time.sleep(1)
    if "standin_crash" in names:
        os.abort()
    if "standin_slow" in names:
        time.sleep(float(os.environ.get("STANDIN_SLOW_S", "4")))
    time.sleep(float(os.environ.get("STANDIN_JOB_S", "0")))
    problem = problems.load(job.problem)
    seed = job.options.seed
    result = JudgeResult(
        verdict=Verdict.ACCEPTED,
        message="",
        problem=problem.name,
        seed=seed,
        kernels=[KernelResources.from_dict(k) for k in job.kernels],
    )
    for shape in problem.tests:
        result.checks.append(
            ShapeCheck(
                sizes=dict(shape.sizes),
                passed=True,
                rel_err=0.0,
                tolerance=problem.tolerance(shape.sizes),
                message="CPU stand-in: not run on a GPU",
            )
        )
    if "standin_wrong" in names:
        result.checks[0].passed, result.checks[0].rel_err, result.checks[0].message = (
            False,
            1.0,
            "CPU stand-in: wrong on purpose",
        )
        result.verdict, result.message = (
            Verdict.WRONG_ANSWER,
            f"wrong at 1 of {len(result.checks)} test shapes (stand-in)",
        )
        return result
    # Deterministic per cubin, so that two different kernels get different (made-up) figures.
    digest = int(hashlib.sha256(str(job.cubin).encode()).hexdigest()[:8], 16)
    pct = 5.0 + digest % 90
    for shape in problem.benchmarks:
        flops, nbytes = problem.flops(shape.sizes), problem.bytes_moved(shape.sizes)
        baseline_ms = flops / 50e12 * 1e3
        candidate_ms = baseline_ms * 100 / pct
        tflops = flops / (candidate_ms * 1e-3) / 1e12
        result.benchmarks.append(
            BenchResult(
                sizes=dict(shape.sizes),
                candidate=_timing(candidate_ms),
                baseline=_timing(baseline_ms),
                baseline_name=problem.baseline_name,
                pct_of_baseline=pct,
                tflops=tflops,
                gbps=nbytes / (candidate_ms * 1e-3) / 1e9,
                baseline_tflops=flops / (baseline_ms * 1e-3) / 1e12,
                roofline_tflops=60.0,
                pct_of_roofline=100 * tflops / 60.0,
                rounds_checked=11,
                max_rel_err=0.0,
                flops=flops,
                bytes_moved=nbytes,
            )
        )
    result.telemetry = Telemetry(
        gpu_name=GPU_NAME, gpu_uuid=standin_uuid(), compute_capability="9.0", sm_count=132, nvrtc_version="stand-in"
    )
    result.message = f"correct at all {len(result.checks)} test shapes (CPU stand-in); {pct:.1f}% of baseline (made up)"
    return result

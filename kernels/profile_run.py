"""One profile of an accepted submission, from the GPU worker's side (issue 43).

`profile_compiled` chooses the shape, runs the profile child (kernels/profile_child.py) and turns its answer into
the profile document (kernels/profile.py) with the report's bytes beside it. It never raises for what the kernel
or the node does: no ncu, counters refused, a replay that hangs or crashes, an export that fails: each is a
document with a status and a reason, and the judgement it follows is untouched.

The shape: the largest benchmark shape whose replays fit the profiling budget. ncu replays each profiled launch
once per pass its sections need (`REPLAY_PASSES`, an upper estimate for the sections of kernels/profile.py), so a
launch costs about that many times its judged median; a kernel too slow for the budget at the benchmark shapes is
profiled at the largest test shape, and the document says so (`smaller_shape`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kernels import problems, profile_child, profile_findings, profile_report, sandbox
from kernels import profile as profile_mod
from kernels.results import CompileResult, JudgeResult

REPLAY_PASSES = 60
PROFILE_BUDGET_S = 10.0  # GPU-seconds of replayed launches a profile may spend (the setting PROFILE_BUDGET_S)
# ncu's start, the target's CUDA context and inputs, and the exports, on top of the replays.
FIXED_TIMEOUT_S = 90.0
CHILD_CODE = ("kernels.profile_child", "kernels.profile_target")


@dataclass
class ProfileRun:
    document: profile_mod.Profile
    report: bytes | None = None  # the .ncu-rep, where one was made


def choose_shape(problem: problems.Problem, judged: JudgeResult, budget_s: float) -> tuple[dict[str, int], bool]:
    """(sizes, smaller): the largest benchmark shape whose estimated replay time fits `budget_s`, else the
    largest test shape (smaller = True)."""
    timed = sorted(judged.benchmarks, key=lambda b: problem.bytes_moved(b.sizes), reverse=True)
    for bench in timed:
        if bench.candidate.median_ms * 1e-3 * REPLAY_PASSES <= budget_s:
            return dict(bench.sizes), False
    largest_test = max(problem.tests, key=lambda shape: problem.bytes_moved(shape.sizes))
    return dict(largest_test.sizes), True


def kernel_regex(compiled: CompileResult) -> str:
    """The reader's kernels as ncu names them with `--kernel-name-base mangled`: their symbols, exactly."""
    if compiled.language == "triton":
        symbols = {k.symbol for k in compiled.triton_kernels}
    else:
        symbols = set(compiled.lowered_names.values())
    return "^(" + "|".join(sorted(symbols)) + ")$"


def profile_compiled(
    compiled: CompileResult,
    judged: JudgeResult,
    *,
    ncu_setting: str = "",
    budget_s: float = PROFILE_BUDGET_S,
    seed: int = 0,
) -> ProfileRun:
    """Profile one accepted submission (the caller holds the device alone: the GPU worker's device lock)."""
    problem = problems.load(compiled.problem)
    gpu_name = judged.telemetry.gpu_name if judged.telemetry else ""
    ncu = profile_mod.find_ncu(ncu_setting)
    if ncu is None:
        return ProfileRun(profile_mod.profile_no_ncu(ncu_setting or "ncu on PATH", gpu_name=gpu_name))
    if profile_mod.counters_for_admins_only():
        return ProfileRun(profile_mod.profile_counters_for_admins(gpu_name=gpu_name))
    if profile_mod.worker_is_root():  # the child's open /proc (confine.Access.descendants_proc): safe for others only
        return ProfileRun(profile_mod.profile_as_root(gpu_name=gpu_name))
    sizes, smaller = choose_shape(problem, judged, budget_s)
    timeout_s = FIXED_TIMEOUT_S + budget_s * 2
    job = profile_child.ProfileJob(
        compiled=compiled.to_dict(),
        sizes=sizes,
        seed=seed,
        ncu=ncu,
        kernel_regex=kernel_regex(compiled),
        launch_count=len(compiled.plan),
        metrics=tuple(profile_findings.load().metrics.values()),
        timeout_s=timeout_s,
    )
    begin = time.perf_counter()
    outcome = sandbox.run_once(
        "kernels.profile_child:profile_job",
        job,
        timeout_s + 30,
        access=profile_child.profile_access(ncu, CHILD_CODE),
        plain_answers=True,
    )
    spent = time.perf_counter() - begin
    common = {"gpu_name": gpu_name, "sizes": sizes, "gpu_seconds": round(spent, 2)}
    if outcome.status is not sandbox.Status.OK:
        reason = f"the profile child ended without an answer ({outcome.status.value}{_died(outcome)})"
        return ProfileRun(profile_mod.Profile(status=profile_mod.Status.FAILED.value, reason=reason, **common))
    answer = outcome.value
    if not isinstance(answer, dict) or not answer.get("ok"):
        output = answer.get("output", "") if isinstance(answer, dict) else ""
        code = answer.get("returncode", -1) if isinstance(answer, dict) else -1
        return ProfileRun(profile_mod.from_ncu_failure(code if isinstance(code, int) else -1, str(output), **common))
    try:
        document = profile_report.document_of(answer, **common)
    except profile_report.ExportError as exc:
        return ProfileRun(profile_mod.Profile(status=profile_mod.Status.FAILED.value, reason=str(exc), **common))
    if smaller:
        document.status = profile_mod.Status.SMALLER_SHAPE.value
        document.reason = (
            f"profiled at a test shape: at the benchmark shapes its replays would take over {budget_s:g} GPU-seconds"
        )
    report = answer.get("report")
    return ProfileRun(document, report if isinstance(report, bytes) else None)


def _died(outcome: sandbox.Outcome) -> str:
    return f": {outcome.died_of}" if outcome.status is sandbox.Status.CRASHED else ""

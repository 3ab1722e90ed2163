"""On the GPU node: an accepted submission profiled by Nsight Compute in the profile child, inside the sandbox
(issue 43: kernels/profile_run.py), for a CUDA and a Triton submission.

Run on the H200:  python3 -m pytest tests/kernels/test_gpu_profile.py -m gpu -p no:django --confcutdir=tests/kernels
Skipped where the node has no ncu (the document then says so: tests/kernels/test_profile_run.py covers that on the CPU).
"""

import pytest

from kernels import compiler, problems, profile_findings
from kernels import profile as profile_mod
from kernels.judge import JudgeOptions
from kernels.results import Verdict
from kernels.tools.ladder import REFERENCE_DIR, arch_of

from .conftest import compile_triton_source, read

pytestmark = pytest.mark.gpu

QUICK_BENCH = JudgeOptions(time_budget_s=0.5, min_rounds=3, timeout_s=120)


@pytest.fixture(scope="module")
def ncu():
    found = profile_mod.find_ncu()
    if found is None:
        pytest.skip("no ncu on this node")
    if profile_mod.worker_is_root():  # profiles are off for a root worker, by design (test_profile_run.py)
        pytest.skip("running as root: run as an unprivileged user, as a GPU worker does")
    return found


def judged(gpu_judge, compiled):
    assert compiled.ok, compiled.log
    result = gpu_judge.judge(compiled, QUICK_BENCH)
    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)
    return result


def assert_profiled(run, problem_name):
    document = run.document
    assert document.status == profile_mod.Status.PROFILED.value, (document.status, document.reason)
    assert document.ncu_version and document.gpu_seconds and document.gpu_seconds < 60
    metrics = document.metrics
    rules = profile_findings.load()
    # Every metric a rule reads came back from the sandboxed run (the CPU tests hold the same for the recorded one).
    assert not set(rules.metrics.values()) - set(metrics), sorted(set(rules.metrics.values()) - set(metrics))
    assert metrics["gpu__time_duration.sum"] > 0 and metrics["dram__bytes_read.sum"] > 0
    # The source view maps samples to the reader's own lines, and the hot loop's SASS is there.
    assert document.source_lines and all(line.line > 0 for line in document.source_lines)
    assert sum(line.share for line in document.source_lines) == pytest.approx(100, abs=1.5)
    assert document.sass_hot_loop.strip()
    # The report is a real Nsight Compute file, kept for the reader to download.
    assert run.report and len(run.report) > 10_000
    profile_findings.findings(metrics, problem=problems.load(problem_name), sizes=document.sizes)  # reads cleanly


def test_a_cuda_rung_is_profiled_in_the_sandbox(gpu_judge, ncu):
    path = REFERENCE_DIR / "05_blocktile_2d.cu"
    compiled = compiler.compile_submission(read(path), "sgemm")
    result = judged(gpu_judge, compiled)
    run = gpu_judge.profile(compiled, result, ncu_setting=ncu)
    assert_profiled(run, "sgemm")
    assert run.document.sizes == dict(max(result.benchmarks, key=lambda b: b.sizes["M"]).sizes)


def test_a_triton_rung_is_profiled_in_the_sandbox(gpu_judge, ncu):
    path = REFERENCE_DIR / "softmax" / "triton_01_rows.py"
    compiled = compile_triton_source(read(path), "softmax", arch_of(path))
    result = judged(gpu_judge, compiled)
    run = gpu_judge.profile(compiled, result, ncu_setting=ncu)
    assert_profiled(run, "softmax")


def test_a_judgement_after_a_profile_is_unchanged(gpu_judge, ncu):
    """A profile never changes what the next job measures: the worker's next judgement of the same kernel
    agrees with the one before the profile (ncu's replays leave no clock or cache state behind that matters)."""
    compiled = compiler.compile_submission(read(REFERENCE_DIR / "06_vectorized.cu"), "sgemm")
    before = judged(gpu_judge, compiled)
    gpu_judge.profile(compiled, before, ncu_setting=ncu)
    after = judged(gpu_judge, compiled)
    for a, b in zip(before.benchmarks, after.benchmarks, strict=True):
        assert b.candidate.median_ms == pytest.approx(a.candidate.median_ms, rel=0.05)

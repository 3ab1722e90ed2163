"""A profile from the GPU worker's side (issue 43, kernels/profile_run.py), on the CPU: the shape it chooses, and
what a node without ncu or without counter permission gives: a document that says so, never an exception. The
permission case runs the real profile child in its sandbox with a stand-in for NVIDIA's ncu that answers as ncu
does when the driver refuses counters."""

from __future__ import annotations

import stat

import pytest

from kernels import compiler, confine, problems, profile_run
from kernels.results import BenchResult, JudgeResult, TimingStats, Verdict

from .conftest import read

SGEMM = problems.load("sgemm")


def timing(median_ms: float) -> TimingStats:
    return TimingStats(3, median_ms, median_ms, median_ms, median_ms, median_ms, 0.001)


def judged_at(medians_ms: dict[int, float]) -> JudgeResult:
    """An accepted sgemm result timed at square shapes n -> median."""
    result = JudgeResult(Verdict.ACCEPTED, "", "sgemm", seed=7)
    for n, median in medians_ms.items():
        sizes = {"M": n, "N": n, "K": n}
        result.benchmarks.append(
            BenchResult(sizes, timing(median), timing(1.0), "cuBLAS", 50, 1, 1, 1, 1, 50, 3, 0, 1, 1)
        )
    return result


@pytest.fixture
def unprivileged(monkeypatch):
    """This test process may run as root (CI does); the worker it stands for does not (the Dockerfile's user)."""
    from kernels import profile as profile_mod

    monkeypatch.setattr(profile_mod, "worker_is_root", lambda: False)


def marking_ncu(tmp_path):
    """A stand-in for ncu that leaves a mark where it runs: (its path, the mark's)."""
    mark = tmp_path / "ran"
    ncu = tmp_path / "nsight" / "ncu"
    ncu.parent.mkdir()
    ncu.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    ncu.chmod(ncu.stat().st_mode | stat.S_IXUSR)
    return ncu, mark


def test_the_largest_benchmark_shape_whose_replays_fit_the_budget_is_chosen():
    judged = judged_at({4096: 500.0, 2048: 60.0})
    sizes, smaller = profile_run.choose_shape(SGEMM, judged, budget_s=10.0)
    assert sizes == {"M": 2048, "N": 2048, "K": 2048} and not smaller  # 60 x 60 ms = 3.6 s fits, 60 x 500 ms does not
    sizes, smaller = profile_run.choose_shape(SGEMM, judged, budget_s=1.0)
    assert smaller and sizes in [shape.sizes for shape in SGEMM.tests]


def test_no_ncu_on_the_node_is_a_document_that_says_so(tmp_path):
    compiled = compiler.compile_submission(read(problems.PROBLEMS_DIR / "sgemm" / "example.cu"), "sgemm")
    run = profile_run.profile_compiled(compiled, judged_at({4096: 5.0}), ncu_setting=str(tmp_path / "ncu"))
    assert run.document.status == "no_ncu" and "no ncu found" in run.document.reason and run.report is None


@pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())
def test_counters_refused_turn_profiling_off_with_the_reason(tmp_path, unprivileged):
    ncu = tmp_path / "nsight" / "ncu"
    ncu.parent.mkdir()
    ncu.write_text(
        "#!/bin/sh\necho '==PROF== Connected to process 1'\n"
        "echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
        "Counters on the target device 0.'\nexit 1\n"
    )
    ncu.chmod(ncu.stat().st_mode | stat.S_IXUSR)
    compiled = compiler.compile_submission(read(problems.PROBLEMS_DIR / "sgemm" / "example.cu"), "sgemm")
    run = profile_run.profile_compiled(compiled, judged_at({4096: 5.0}), ncu_setting=str(ncu))
    assert run.document.status == "off", run.document
    assert "performance counters" in run.document.reason and run.report is None
    assert run.document.sizes == {"M": 4096, "N": 4096, "K": 4096} and run.document.gpu_seconds is not None


def test_the_kernel_filter_names_the_submissions_own_symbols_exactly():
    compiled = compiler.compile_submission(read(problems.PROBLEMS_DIR / "sgemm" / "example.cu"), "sgemm")
    regex = profile_run.kernel_regex(compiled)
    assert regex.startswith("^(") and regex.endswith(")$")
    assert all(symbol in regex for symbol in compiled.lowered_names.values())


# What the profile child's ncu printed on the H100 (2026-12-07) when its sandboxed target could not make its CUDA
# context: the run ended before the reader's kernel, so profiling is off on the node, not the kernel's failure.
TARGET_COULD_NOT_START = (
    "==PROF== Connected to process 3764 (/usr/bin/python3.12)\n"
    "Traceback (most recent call last):\n"
    '  File "cupy_backends/cuda/api/runtime.pyx", line 146, in cupy_backends.cuda.api.runtime.check_status\n'
    "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorOperatingSystem: OS call failed or operation not "
    "supported on this OS\n"
    "==PROF== Disconnected from process 3764\n"
    "==ERROR== The application returned an error code (1).\n"
)


def test_a_profiler_that_cannot_reach_the_kernel_turns_profiling_off_on_the_node():
    from kernels import profile as profile_mod

    off = profile_mod.from_ncu_failure(1, TARGET_COULD_NOT_START)
    assert off.status == "off" and "cudaErrorOperatingSystem" in off.reason and "could not start" in off.reason
    crashed = profile_mod.from_ncu_failure(1, '==PROF== Profiling "k": 0%....\n==ERROR== The application returned')
    assert crashed.status == "failed"  # the kernel's own failure under replay: this profile only


@pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())
def test_once_profiling_is_off_on_a_node_the_judge_stops_trying(tmp_path, unprivileged):
    """The first profile runs ncu (a stand-in printing what the H100's did) and finds the node unable to profile;
    the next answers the same at once: ncu is not run again (it would leave a mark) until the worker restarts."""
    from kernels.judge import GpuJudge

    mark = tmp_path / "ran"
    ncu = tmp_path / "nsight" / "ncu"
    ncu.parent.mkdir()
    ncu.write_text("#!/bin/sh\ncat <<'EOF'\n" + TARGET_COULD_NOT_START + "EOF\nexit 1\n")
    ncu.chmod(ncu.stat().st_mode | stat.S_IXUSR)
    compiled = compiler.compile_submission(read(problems.PROBLEMS_DIR / "sgemm" / "example.cu"), "sgemm")
    judge = GpuJudge(warm=False)
    try:
        first = judge.profile(compiled, judged_at({4096: 5.0}), ncu_setting=str(ncu))
        assert first.document.status == "off" and "cudaErrorOperatingSystem" in first.document.reason
        ncu.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
        again = judge.profile(compiled, judged_at({4096: 5.0}), ncu_setting=str(ncu))
        assert again.document.status == "off" and again.document.reason == first.document.reason
        assert not mark.exists() and again.document.gpu_seconds is None
    finally:
        judge.close()


@pytest.mark.parametrize(
    "params, admins_only",
    [
        ("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nNvLinkDisable: 0\n", True),
        ("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 0\n", False),
        ("ResmanDebugLevel: 4294967295\n", False),  # an old driver that does not say: ncu will tell
        (None, False),  # no NVIDIA driver here
    ],
)
def test_a_driver_that_keeps_counters_to_administrators_turns_profiling_off_before_any_gpu_time(
    tmp_path, monkeypatch, params, admins_only
):
    """The profile child has no capability at all, so RmProfilingAdminOnly=1 means no profile can work: said at once,
    without starting ncu (the stand-in would leave a mark)."""
    from kernels import profile as profile_mod

    path = tmp_path / "params"
    if params is not None:
        path.write_text(params)
    monkeypatch.setattr(profile_mod, "DRIVER_PARAMS", str(path))
    assert profile_mod.counters_for_admins_only() is admins_only
    if not admins_only:
        return
    ncu, mark = marking_ncu(tmp_path)
    compiled = compiler.compile_submission(read(problems.PROBLEMS_DIR / "sgemm" / "example.cu"), "sgemm")
    run = profile_run.profile_compiled(compiled, judged_at({4096: 5.0}), ncu_setting=str(ncu))
    assert run.document.status == "off" and "RmProfilingAdminOnly=1" in run.document.reason
    assert not mark.exists() and run.report is None


def test_a_worker_running_as_root_does_not_profile(tmp_path, monkeypatch):
    """A profile child's processes may write to /proc (confine.Access.descendants_proc), where root's files are
    sysctls and sysrq-trigger: a root worker says why profiling is off and starts no ncu (the stand-in's mark)."""
    from kernels import profile as profile_mod

    monkeypatch.setattr(profile_mod, "worker_is_root", lambda: True)
    ncu, mark = marking_ncu(tmp_path)
    compiled = compiler.compile_submission(read(problems.PROBLEMS_DIR / "sgemm" / "example.cu"), "sgemm")
    run = profile_run.profile_compiled(compiled, judged_at({4096: 5.0}), ncu_setting=str(ncu))
    assert run.document.status == "off" and "runs as root" in run.document.reason
    assert not mark.exists() and run.report is None


def test_the_profile_child_writes_what_a_gpu_child_writes_but_the_locks(tmp_path, monkeypatch):
    """The profile target runs the library kernels a judged GPU child runs (the inputs' draws, the garbage fill), which
    CuPy compiles into the worker's kernel cache: without the right to write there every profile came back "off" on
    the H100 (kernels/BENCHMARKS.md, the seventh session). The lock files stay the worker's: it holds the device
    alone while a profile runs."""
    import shutil

    from kernels import judge, profile_child

    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "cupy"))
    gpu_child = judge.gpu_access(("kernels.runner",), device_lock=None)
    profile = profile_child.profile_access(shutil.which("sh"), ("kernels.runner",))
    assert str(tmp_path / "cupy") in profile.write
    assert set(gpu_child.write) <= set(profile.write)

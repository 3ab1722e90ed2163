"""On the GPU (issue 46): Triton submissions judged end to end, their cubins launched with Triton's calling convention
(kernels/triton_launch.py). The starters accepted and timed, every known-bad file of tests/kernels/bad/triton with
its verdict, the worker going on after each. First run 2026-12-07 on an H100: 27 passed (kernels/BENCHMARKS.md).
Where the node's Triton is not the pinned one, the builds come from tests/kernels/precompiled/
(conftest.compile_triton_source).

Run on the GPU node:  python -m pytest tests/kernels -m gpu -p no:django --confcutdir=tests/kernels
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kernels import compiler, problems, triton_compiler
from kernels.judge import JudgeOptions
from kernels.results import Verdict

from .conftest import compile_triton_source, precompiled_path

pytestmark = pytest.mark.gpu

BAD = Path(__file__).parent / "bad" / "triton"
MANIFEST = tomllib.loads((BAD / "manifest.toml").read_text())["bad"]
GPU_BAD = [entry for entry in MANIFEST if entry["stage"] == "gpu"]
STARTERS = sorted(p.parent.name for p in problems.PROBLEMS_DIR.glob("*/example_triton.py"))  # every problem's

CHECK_ONLY = JudgeOptions(bench=False, timeout_s=60)
QUICK_BENCH = JudgeOptions(time_budget_s=1.0, min_rounds=3, timeout_s=120)
# What each GPU-stage verdict's message says (kernels/runner.py, checks.py, judge.py).
FRAGMENTS = {Verdict.WRONG_ANSWER: "wrong", Verdict.TIMED_OUT: "no answer within"}


def compile_triton(path: Path, problem: str):
    compiled = compile_triton_source(path.read_text(), problem)
    assert compiled.ok, (compiled.message, compiled.log[-2000:])
    return compiled


def starter(problem: str) -> Path:
    return problems.PROBLEMS_DIR / problem / "example_triton.py"


@pytest.mark.parametrize("problem", STARTERS)
def test_the_triton_starter_is_accepted_and_timed(gpu_judge, problem):
    compiled = compile_triton(starter(problem), problem)
    result = gpu_judge.judge(compiled, QUICK_BENCH)
    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)
    loaded = problems.load(problem)
    assert all(c.passed for c in result.checks) and len(result.checks) >= len(loaded.tests)
    assert len(result.benchmarks) == len(loaded.benchmarks)
    for bench in result.benchmarks:
        assert bench.candidate.samples >= 3 and bench.rounds_checked == bench.candidate.samples
        assert bench.pct_of_baseline > 0 and 0 < bench.pct_of_roofline <= 105
    # The resource report, per build (a starter's builds are of distinct kernels, so each is named by its kernel):
    # the loaded function's registers (cuFuncGetAttribute), Triton's warps and shared memory.
    assert len(result.kernels) == len(compiled.triton_kernels)
    for kernel, build in zip(result.kernels, compiled.triton_kernels, strict=True):
        assert kernel.name == build.kernel and kernel.lowered_name == build.symbol
        assert kernel.registers > 0 and kernel.max_threads_per_block >= 32 * build.num_warps
        assert kernel.num_warps == build.num_warps and kernel.dynamic_shared_bytes == build.shared_bytes
    assert result.to_json()


@pytest.mark.parametrize("entry", GPU_BAD, ids=lambda e: e["file"])
def test_each_known_bad_triton_file_gets_its_verdict_then_a_good_one_passes(gpu_judge, entry):
    verdict = Verdict(entry["verdict"])
    if verdict is Verdict.TIMED_OUT:
        options = JudgeOptions(bench=False, timeout_s=10)
    else:  # `bench`: a mistake only the timed rounds' checks can see
        options = QUICK_BENCH if entry.get("bench") else CHECK_ONLY
    result = gpu_judge.judge(compile_triton(BAD / entry["file"], entry["problem"]), options)
    assert result.verdict is verdict, (entry["what"], result.message, result.error)
    assert FRAGMENTS.get(verdict, "") in result.message
    assert entry.get("message", "") in result.message, (entry["what"], result.message)
    follow_up = gpu_judge.judge(compile_triton(starter("vector_add"), "vector_add"), CHECK_ONLY)
    assert follow_up.verdict is Verdict.ACCEPTED, (follow_up.message, follow_up.error)


TWO_BUILDS = """
import triton
import triton.language as tl


@triton.jit
def add(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask), mask=mask)


PLAN = '''
[[launch]]
kernel = "add"
grid = ["cdiv(N, 512)"]
num_warps = 4
constexprs = { BLOCK = 512 }

[[launch]]
kernel = "add"
grid = ["cdiv(N, 1024)"]
num_warps = 2
constexprs = { BLOCK = 1024 }
'''
"""


def test_a_plan_with_two_builds_of_one_kernel_runs_each_with_its_own(gpu_judge):
    """The same kernel twice in one plan with other constexprs and warps: two cubins, each launched with its own
    block (32 x its warps) and the same arguments; both write all of C, the second with blocks of 1024."""
    compiled = compile_triton_source(TWO_BUILDS, "vector_add")
    assert compiled.ok and len(compiled.triton_kernels) == 2, (compiled.message, compiled.log[-2000:])
    result = gpu_judge.judge(compiled, CHECK_ONLY)
    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)
    assert [k.name for k in result.kernels] == ["add (build 1)", "add (build 2)"]
    assert [k.num_warps for k in result.kernels] == [4, 2]


def test_the_cli_benches_a_triton_file(capsys):
    from kernels.__main__ import main

    args = ["bench", str(starter("vector_add")), "--problem", "vector_add", "--no-time"]
    if not triton_compiler.compiles_here():  # judge what a compile node built, as a GPU node does
        source = starter("vector_add").read_text()
        args += ["--compiled", str(precompiled_path(source, "vector_add", compiler.DEFAULT_ARCH))]
    assert main(args) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("ACCEPTED") and "4 warps" in shown

"""The Triton reference rungs (issue 46): kernels/reference/<problem>/triton_NN_*.py, for softmax, rmsnorm,
bf16_gemm and attention. The ladder (kernels/tools/ladder.py) takes the NN_*.cu files only; these are their
Triton counterparts, written on a machine without a GPU.

On the CPU: each rung passes the parse check, its plan gives the work to exactly one build at every test and
benchmark shape (the other build runs one empty program), and it compiles for sm_90a through the real compile
stage (the sandboxed PTX and ptxas children), each build with the warps, stages and tiles its header describes,
within the 227 KB of shared memory and without spills. Each rung is compiled once per test session.
On the GPU (marker `gpu`): each rung is accepted at every test shape and timed at the benchmark shapes (each was,
through the CLI, on an H100 on 2026-12-07: kernels/BENCHMARKS.md).

Run on the GPU node:  python -m pytest tests/kernels -m gpu -p no:django --confcutdir=tests/kernels
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kernels import confine, problems, triton_compiler, triton_source
from kernels import plan as plan_mod
from kernels.judge import JudgeOptions
from kernels.results import Verdict
from kernels.tools.ladder import LADDER, REFERENCE_DIR, TRITON_RUNGS, arch_of, path_of, step_of, title_of

from .conftest import compile_triton_source

ARCH = "sm_90a"
MAX_SHARED = plan_mod.MAX_SHARED_BYTES_BY_ARCH[ARCH]
# Each rung, and per build (in plan order): kernel, warps, stages, constexprs.
RUNGS = {
    "softmax/triton_01_rows.py": [
        ("softmax_row", 8, 3, {"ROW_BLOCK": 4096}),
        ("softmax_looped", 16, 3, {"ROW_BLOCK": 4096, "CHUNK": 4096}),
    ],
    "rmsnorm/triton_01_rows.py": [
        ("rmsnorm_row", 8, 3, {"ROW_BLOCK": 4096}),
        ("rmsnorm_looped", 16, 3, {"ROW_BLOCK": 4096, "CHUNK": 4096}),
    ],
    "bf16_gemm/triton_01_tiled_dot.py": [
        ("bf16_gemm", 8, 3, {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}),
    ],
    "attention/triton_01_flash.py": [
        ("attention", 8, 3, {"HEAD": 64, "BLOCK_M": 128, "BLOCK_N": 128}),
        ("attention", 8, 3, {"HEAD": 128, "BLOCK_M": 128, "BLOCK_N": 64}),
    ],
}
TENSOR_CORE_RUNGS = ("bf16_gemm", "attention")  # tl.dot stages its operands in shared memory
confined = pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())


def problem_of(rung: str) -> str:
    return rung.split("/")[0]


def source_of(rung: str) -> str:
    return (REFERENCE_DIR / rung).read_text()


@pytest.fixture(scope="module")
def compiled():
    """Each rung compiled once for the module: rung -> CompileResult."""
    cache = {}

    def get(rung: str):
        if rung not in cache:
            cache[rung] = compile_triton_source(source_of(rung), problem_of(rung), ARCH)
        return cache[rung]

    return get


def test_every_triton_rung_is_listed_and_none_joins_the_cuda_ladder():
    found = sorted(str(p.relative_to(REFERENCE_DIR)) for p in REFERENCE_DIR.glob("*/triton_[0-9][0-9]_*.py"))
    assert found == sorted(RUNGS)
    assert not [p for p in LADDER if p.suffix != ".cu"]
    assert {problem_of(r) for r in RUNGS} == {"softmax", "rmsnorm", "bf16_gemm", "attention"}


def test_the_ladder_tool_knows_them_apart_from_its_ladder():
    """kernels.tools.ladder names them as it names the CUDA rungs, for a bench of one named as FILE and for a measured
    ladder's load: "softmax/triton_01_rows" is the .py, built for sm_90a as the tests here build them."""
    assert [str(p.relative_to(REFERENCE_DIR)) for p in TRITON_RUNGS] == sorted(RUNGS)
    for path in TRITON_RUNGS:
        assert path_of(step_of(path)) == path and arch_of(path) == ARCH
        assert title_of(path).startswith("Triton 01 - ")  # the docstring's first line, as a rung's page titles it
    assert path_of("softmax/04_register_rows").suffix == ".cu"


@pytest.mark.parametrize("rung", RUNGS)
def test_each_rung_passes_the_parse_check_and_its_plan_names_its_kernels(rung):
    source = source_of(rung)
    triton_source.check(source)
    plan = triton_source.extract(source, problems.load(problem_of(rung)))
    builds = [(launch.kernel, launch.num_warps, launch.num_stages, dict(launch.constexprs)) for launch in plan.launches]
    assert builds == RUNGS[rung]


@pytest.mark.parametrize("rung", [r for r in RUNGS if len(RUNGS[r]) == 2])
def test_exactly_one_build_does_the_work_at_every_shape(rung):
    """The two-build plans: the build a shape is for gets its full grid, the other one program (which returns)."""
    problem = problems.load(problem_of(rung))
    plan = triton_source.extract(source_of(rung), problem)
    for sizes in problem.all_shapes():
        grids = [[plan_mod.evaluate(e, sizes) for e in launch.grid] for launch in plan.launches]
        if rung.startswith("attention"):
            tiles, programs = -(-sizes["seq"] // 128), sizes["batch"] * sizes["heads"]
            first = sizes["head_dim"] == 64
            full = [tiles, programs]
        else:
            length = sizes["cols"] if rung.startswith("softmax") else sizes["hidden"]
            first = length <= 4096
            full = [sizes["rows"]]
        working, idle = (grids[0], grids[1]) if first else (grids[1], grids[0])
        assert working == full and idle == [1] * len(full), (sizes, grids)


@confined
@pytest.mark.parametrize("rung", RUNGS)
def test_each_rung_compiles_for_sm_90a_within_its_resources(compiled, rung):
    result = compiled(rung)
    assert result.verdict is Verdict.COMPILED, (result.message, result.log[-3000:])
    assert result.arch == ARCH and result.language == "triton"
    problem = problems.load(problem_of(rung))
    names = [arg.name for arg in problem.args] + ["global_scratch", "profile_scratch"]
    built = [(k.kernel, k.num_warps, k.num_stages, k.constexprs) for k in result.triton_kernels]
    assert built == RUNGS[rung]
    for index, (kernel, resources) in enumerate(zip(result.triton_kernels, result.kernels, strict=True)):
        assert kernel.launches == [index] and kernel.num_ctas == 1
        assert [p["name"] for p in kernel.params] == names
        assert 0 <= kernel.shared_bytes <= MAX_SHARED, kernel.shared_bytes
        if problem.name in TENSOR_CORE_RUNGS:
            assert kernel.shared_bytes >= 64 * 1024  # the pipelined K/V or A/B stages
        assert 0 < resources.registers <= 255
        assert resources.spill_store_bytes == 0 and resources.spill_load_bytes == 0, resources
    assert result.compile_time_ms < 30_000


@confined
def test_the_gemm_rung_is_tensor_core_code_with_wide_copies(compiled, tmp_path):
    """wgmma on sm_90a, and 16-byte asynchronous copies: the (N // 8) * 8 strides tell Triton what the contract
    promises (without them its loads are 2 bytes wide and nothing is pipelined)."""
    (kernel,) = compiled("bf16_gemm/triton_01_tiled_dot.py").triton_kernels
    cuobjdump = Path(triton_compiler.ptxas_path(90)).with_name("cuobjdump")
    if not cuobjdump.exists():
        pytest.skip("this Triton bundles no cuobjdump")
    (tmp_path / "gemm.cubin").write_bytes(kernel.cubin)
    sass = subprocess.run(
        [str(cuobjdump), "-sass", str(tmp_path / "gemm.cubin")], capture_output=True, text=True, check=True
    ).stdout
    assert "HGMMA" in sass and "LDGSTS.E.BYPASS.128" in sass


# ---- on the GPU ---------------------------------------------------------------------------------------------------

QUICK_BENCH = JudgeOptions(time_budget_s=1.0, min_rounds=3, timeout_s=300)


@pytest.mark.gpu
@pytest.mark.parametrize("rung", RUNGS)
def test_each_rung_is_accepted_at_every_test_shape_and_timed(gpu_judge, compiled, rung):
    result = gpu_judge.judge(compiled(rung), QUICK_BENCH)
    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)
    problem = problems.load(problem_of(rung))
    assert all(check.passed for check in result.checks) and len(result.checks) >= len(problem.tests)
    assert len(result.benchmarks) == len(problem.benchmarks)
    assert [k.num_warps for k in result.kernels] == [build[1] for build in RUNGS[rung]]


def test_the_paths_are_what_the_readme_names():
    readme = (Path(__file__).resolve().parents[2] / "kernels" / "README.md").read_text()
    for rung in RUNGS:
        assert f"reference/{rung}" in readme, rung

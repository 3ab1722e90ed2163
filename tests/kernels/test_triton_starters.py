"""The Triton starters (issue 46): kernels/problems/<problem>/example_triton.py, what the editor opens when a reader
picks Triton, one for every problem. On the CPU: every problem has one; each passes the parse check and its plan
resolves at every test and benchmark shape; each compiles for sm_90 through the real compile stage (the sandboxed
PTX and ptxas children) without spills, every build within the shared-memory limit; and each runs under Triton's
interpreter at a few small test shapes, its outputs checked against the problem's reference as the judge checks
them (tests/kernels/triton_interpret.py). On the GPU: test_triton_gpu.py judges each starter at every shape.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernels import compiler, confine, problems, triton_source
from kernels import plan as plan_mod
from kernels.results import Verdict

ROOT = Path(__file__).resolve().parents[2]
ARCH = compiler.DEFAULT_ARCH  # what the judge compiles a submission for unless told otherwise: sm_90
MAX_SHARED = plan_mod.MAX_SHARED_BYTES_BY_ARCH[ARCH]
STARTERS = sorted(p.parent.name for p in problems.PROBLEMS_DIR.glob("*/example_triton.py"))
confined = pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())

# The test shapes (indices into each problem.toml's `tests`) run under the interpreter, chosen to cover each
# starter's edge cases in about 20 s in all: the interpreter runs one program after another in Python.
INTERPRETED = {
    "attention": (0, 1, 2, 3, 4),  # seq 1 and 17 at both head dims and masks; seq 1000 causal (many key tiles)
    "bf16_gemm": (0, 1, 5),  # 1 x 8 x 8; ragged M, N, K; a wide, short C
    "fp8_quant": (0, 1, 2),  # 1 x 1; rows of every kind, exact ties among them
    "gemv": (0, 3),  # 1 x 1 x 1; B = 8 with K ragged (4099)
    "hgemm": (0, 1, 3),  # 1 x 1 x 1; ragged M, N, K; K = 17 (one partial K step)
    "paged_decode": (0, 1, 5),  # one token; G = 4 query heads per kv head; 8 kv heads, contexts over many pages
    "prefix_sum": (0, 1, 2, 3),  # N = 1048579: over 1024 blocks, so the block totals are scanned in chunks
    "reduce_sum": (0, 1, 2, 3),  # N = 1048579: the grid capped at 1024 programs, each looping over x
    "rmsnorm": (0, 1, 2),  # 1 x 1; rows longer than one BLOCK
    "sgemm": (0, 1, 3),  # as hgemm
    "softmax": (0, 1, 2),  # 1 x 1; rows longer than one BLOCK
    "swiglu": (0, 1, 2),  # odd element counts, gates out to +-100
    "transpose": (0, 1, 3, 4),  # 1 x 1; 17 x 33; tall and wide
    "vector_add": (0, 1, 2, 3),
}
INTERPRETER_TIMEOUT_S = 600


def source_of(problem: str) -> str:
    return (problems.PROBLEMS_DIR / problem / "example_triton.py").read_text()


def test_every_problem_has_a_triton_starter():
    assert problems.available() == STARTERS


@pytest.mark.parametrize("problem", STARTERS)
def test_each_starter_passes_the_parse_check_and_its_plan_resolves_at_every_shape(problem):
    source = source_of(problem)
    triton_source.check(source)
    loaded = problems.load(problem)
    plan = triton_source.extract(source, loaded)
    plan_mod.resolve_all([launch.as_launch() for launch in plan.launches], loaded.all_shapes(), ARCH, loaded)
    header = source.split('"""')[1]
    assert "kernels/" not in header and "issue" not in header.lower(), "readers see the header: no paths, no issues"


@confined
@pytest.mark.parametrize("problem", STARTERS)
def test_each_starter_compiles_for_sm_90_without_spills(problem):
    result = compiler.compile_submission(source_of(problem), problem, ARCH, language="triton")
    assert result.verdict is Verdict.COMPILED, (result.message, result.log[-3000:])
    assert result.arch == ARCH and result.language == "triton"
    loaded = problems.load(problem)
    plan = triton_source.extract(source_of(problem), loaded)
    assert len(result.triton_kernels) == len({launch.build for launch in plan.launches})
    names = [arg.name for arg in loaded.args] + ["global_scratch", "profile_scratch"]
    for kernel, resources in zip(result.triton_kernels, result.kernels, strict=True):
        assert [p["name"] for p in kernel.params] == names and kernel.num_ctas == 1
        assert 0 <= kernel.shared_bytes <= MAX_SHARED, kernel.shared_bytes
        assert 0 < resources.registers <= 255
        assert resources.spill_store_bytes == 0 and resources.spill_load_bytes == 0, resources


def test_every_starter_has_its_interpreted_shapes():
    assert sorted(INTERPRETED) == STARTERS
    for problem, indices in INTERPRETED.items():
        assert all(0 <= i < len(problems.load(problem).tests) for i in indices), problem


@pytest.fixture(scope="module")
def interpreted() -> dict[tuple[str, int], dict]:
    """Every starter at its INTERPRETED shapes, in one child process: Triton must be imported with
    TRITON_INTERPRET=1 set, which this process's Triton was not. (problem, index) -> the child's report."""
    specs = [f"{problem}:{index}" for problem, indices in INTERPRETED.items() for index in indices]
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    child = subprocess.run(
        [sys.executable, "-m", "tests.kernels.triton_interpret", *specs],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=INTERPRETER_TIMEOUT_S,
    )
    reports = {}
    for line in child.stdout.splitlines():
        report = json.loads(line)
        reports[(report["problem"], report["index"])] = report
    assert child.returncode == 0 and len(reports) == len(specs), (child.returncode, child.stderr[-3000:])
    return reports


@pytest.mark.parametrize("problem", STARTERS)
def test_each_starter_computes_the_reference_under_the_interpreter(interpreted, problem):
    for index in INTERPRETED[problem]:
        report = interpreted[(problem, index)]
        assert report["passed"], (report["sizes"], report["message"])
        assert report["guards_intact"], (report["sizes"], "a write past an array's end")

"""The reference ladder (kernels/reference/): the starter and reference solutions of the GEMM capsules.

On the CPU (CI): every rung compiles with NVRTC, its plan fits every test and benchmark shape, and at most a
few bytes spill (08 and 11 cap registers for two blocks per SM and spill a handful of bytes, measured faster).
On the GPU: every rung is right at every test shape, ragged ones included.
"""

from pathlib import Path

import pytest

from kernels import compiler
from kernels.judge import JudgeOptions
from kernels.results import Verdict

from .conftest import read

LADDER = sorted((Path(__file__).parents[2] / "kernels" / "reference").glob("[0-9][0-9]_*.cu"))


def problem_of(path: Path) -> str:
    return "hgemm" if "hgemm" in path.name else "sgemm"


def test_the_ladder_has_every_rung():
    assert [p.name[:2] for p in LADDER] == [f"{i:02d}" for i in range(1, 12)]


@pytest.mark.parametrize("path", LADDER, ids=lambda p: p.stem)
def test_each_rung_compiles_with_at_most_a_few_spilled_bytes(path):
    result = compiler.compile_submission(read(path), problem_of(path))

    assert result.verdict is Verdict.COMPILED, result.log
    for kernel in result.kernels:
        assert kernel.spill_store_bytes <= 64 and kernel.spill_load_bytes <= 64, kernel


@pytest.mark.gpu
@pytest.mark.parametrize("path", LADDER, ids=lambda p: p.stem)
def test_each_rung_is_right_at_every_test_shape(gpu_judge, path):
    compiled = compiler.compile_submission(read(path), problem_of(path))
    result = gpu_judge.judge(compiled, JudgeOptions(bench=False, timeout_s=120))

    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)
    assert all(check.passed for check in result.checks)

"""The reference ladder (kernels/reference/): the starter and reference solutions of the GEMM capsules
(NN_*.cu) and of the other problems (<problem>/NN_*.cu).

On the CPU (CI): every rung compiles with NVRTC for sm_90, its plan fits every test and benchmark shape, and
at most a few bytes spill (11 and 12 cap registers at 128 for 512-thread blocks and spill a handful of bytes,
measured faster); the wgmma rungs (12, 13, bf16_gemm 02-04, attention 04) build for sm_90a only, and plain sm_90
refuses wgmma with a clear compile error. On the GPU: every rung is right at every test shape, ragged ones included.
"""

import pytest

from kernels import compiler, problems
from kernels.judge import JudgeOptions
from kernels.results import Verdict
from kernels.tools.ladder import GEMM_LADDER, LADDER, REFERENCE_DIR, arch_of, command_of, problem_of, step_of

from .conftest import read

pytestmark = pytest.mark.slow  # NVRTC compiles every rung of the ladder

WGMMA = next(p for p in LADDER if p.name == "12_hgemm_wgmma.cu")


def test_the_ladder_has_every_rung():
    assert [p.name[:2] for p in GEMM_LADDER] == [f"{i:02d}" for i in range(1, 14)]
    assert LADDER[: len(GEMM_LADDER)] == GEMM_LADDER


def test_problem_folders_join_the_ladder_under_their_folder_name():
    folders = sorted(p.name for p in REFERENCE_DIR.iterdir() if p.is_dir() and list(p.glob("[0-9][0-9]_*.cu")))
    assert folders, "no kernels/reference/<problem>/ folders"
    for folder in folders:
        rungs = [p for p in LADDER if p.parent.name == folder]
        assert [p.name[:2] for p in rungs] == [f"{i:02d}" for i in range(1, len(rungs) + 1)], folder
        assert rungs[0].name == "01_naive.cu"
        assert {problem_of(p) for p in rungs} == {folder} and folder in problems.available()
        assert step_of(rungs[0]) == f"{folder}/01_naive"
    assert problem_of(GEMM_LADDER[0]) == "sgemm" and step_of(GEMM_LADDER[0]) == "01_naive"


def test_only_the_wgmma_rungs_need_sm_90a_and_their_commands_say_so():
    assert [step_of(p) for p in LADDER if arch_of(p) != compiler.DEFAULT_ARCH] == [
        "12_hgemm_wgmma",
        "13_hgemm_staged_persistent",
        "attention/04_wgmma_tma",
        "bf16_gemm/02_tma_wgmma",
        "bf16_gemm/03_warp_specialized",
        "bf16_gemm/04_cluster_persistent",
    ]
    assert command_of(WGMMA) == [
        "python",
        "-m",
        "kernels",
        "bench",
        str(WGMMA),
        "--problem",
        "hgemm",
        "--arch",
        "sm_90a",
        "--json",
    ]


def test_wgmma_is_refused_by_ptxas_for_plain_sm_90():
    result = compiler.compile_submission(read(WGMMA), "hgemm", "sm_90")

    assert result.verdict is Verdict.COMPILE_ERROR
    assert "wgmma" in result.log and "sm_90" in result.log


def test_wgmma_rung_assembles_to_warpgroup_mma_for_sm_90a():
    result = compiler.compile_submission(read(WGMMA), "hgemm", "sm_90a")

    assert result.verdict is Verdict.COMPILED, result.log
    assert result.arch == "sm_90a"
    assert "Potential Performance Loss" not in result.log  # ptxas did not serialise the wgmma chain


@pytest.mark.parametrize("path", LADDER, ids=step_of)
def test_each_rung_compiles_with_at_most_a_few_spilled_bytes(path):
    result = compiler.compile_submission(read(path), problem_of(path), arch_of(path))

    assert result.verdict is Verdict.COMPILED, result.log
    for kernel in result.kernels:
        assert kernel.spill_store_bytes <= 64 and kernel.spill_load_bytes <= 64, kernel


@pytest.mark.gpu
@pytest.mark.parametrize("path", LADDER, ids=step_of)
def test_each_rung_is_right_at_every_test_shape(gpu_judge, path):
    compiled = compiler.compile_submission(read(path), problem_of(path), arch_of(path))
    result = gpu_judge.judge(compiled, JudgeOptions(bench=False, timeout_s=120))

    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)
    assert all(check.passed for check in result.checks)

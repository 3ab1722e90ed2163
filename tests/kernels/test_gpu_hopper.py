"""On the GPU (H200), issue 15's launch paths: thread-block clusters and TMA tensor maps through cuLaunchKernelEx
(cuda-bindings), SMS, the bf16_gemm known-bad files with their verdicts, the worker going on after each.

Run on the H200:  python3 -m pytest tests/kernels/test_gpu_hopper.py -m gpu -p no:django --confcutdir=tests/kernels
"""

import tomllib

import pytest

from kernels import compiler, problems
from kernels.judge import JudgeOptions
from kernels.results import Verdict

from .conftest import BAD, GOOD, read

pytestmark = pytest.mark.gpu

CHECK_ONLY = JudgeOptions(bench=False, timeout_s=120)
QUICK_BENCH = JudgeOptions(time_budget_s=1.0, min_rounds=3, timeout_s=300)
MANIFEST = [e for e in tomllib.loads((BAD / "manifest.toml").read_text())["bad"] if e["problem"] == "bf16_gemm"]
TMA = read(GOOD / "bf16_gemm_tma.cu")
CLUSTER = read(GOOD / "bf16_gemm_cluster.cu")


def judge(gpu_judge, source, options=CHECK_ONLY, arch="sm_90"):
    compiled = compiler.compile_submission(source, "bf16_gemm", arch=arch)
    assert compiled.ok, (compiled.message, compiled.log)
    result = gpu_judge.judge(compiled, options)
    print(f"{result.verdict.value}: {result.message[:400]} {result.error[-600:] if result.error else ''}")
    return result


def accepted(result):
    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)
    assert len(result.checks) == len(problems.load("bf16_gemm").tests) and all(c.passed for c in result.checks)


def test_a_tma_kernel_is_right_at_every_shape_and_timed(gpu_judge):
    """Tensor maps over A and B (zero fill past the ragged edges), a persistent grid of SMS blocks, the maps
    rebuilt for every input set of the timed rounds."""
    result = judge(gpu_judge, TMA, QUICK_BENCH)
    accepted(result)
    assert len(result.benchmarks) == 2 and result.ceilings.tensor_bf16_tflops > 100
    for bench in result.benchmarks:
        assert bench.candidate.samples >= 3 and bench.rounds_checked == bench.candidate.samples
        assert 0 < bench.pct_of_roofline <= 105 and bench.pct_of_baseline > 0
        print(
            f"  {bench.sizes}: {bench.candidate.median_ms:.3f} ms, {bench.tflops:.1f} TFLOP/s, "
            f"{bench.pct_of_baseline:.1f}% of cuBLAS, roofline {bench.roofline_tflops:.0f}"
        )


def test_a_tma_kernel_reading_the_128_byte_swizzle_is_right(gpu_judge):
    source = TMA.replace("<false>", "<true>").replace('swizzle = "none"', 'swizzle = "128B"')
    accepted(judge(gpu_judge, source, arch="sm_90a"))


def test_a_cluster_launch_is_right_and_really_clustered(gpu_judge):
    accepted(judge(gpu_judge, CLUSTER))


def test_the_same_kernel_launched_without_the_cluster_is_wrong(gpu_judge):
    """The kernel writes NaN unless it finds itself in a cluster of two: proof the attribute is what made it."""
    source = CLUSTER.replace("cluster = [2, 1, 1]\n", "")
    result = judge(gpu_judge, source)
    assert result.verdict is Verdict.WRONG_ANSWER and "NaN" in result.message, (result.message, result.error)


def test_a_non_portable_cluster_of_sixteen_runs(gpu_judge):
    source = (
        CLUSTER.replace(
            "cluster_special(1) == 2 && cluster_special(2) == 2", "cluster_special(1) == 16 && cluster_special(2) == 16"
        )
        .replace('"2 * cdiv(N, 32)"', '"16 * cdiv(N, 256)"')
        .replace("cluster = [2, 1, 1]", "cluster = [16, 1, 1]\nnon_portable_cluster = true")
    )
    assert "non_portable_cluster = true" in source and "== 16" in source
    accepted(judge(gpu_judge, source))


def test_a_plan_passing_a_tensor_map_the_kernel_does_not_declare_is_a_plan_error(gpu_judge):
    """The example kernel takes the eight arguments only: passing a map after them would have the driver read a
    parameter that is not there, so the judge compares the loaded kernel's parameters first."""
    source = (
        read(problems.PROBLEMS_DIR / "bf16_gemm" / "example.cu")
        .replace("/* @plan\n", '/* @plan\n[[tensor_map]]\nname = "tmA"\narray = "A"\nbox = [8, 8]\n\n', 1)
        .replace("block = [32, 8]", 'block = [32, 8]\ntensor_maps = ["tmA"]')
    )
    result = judge(gpu_judge, source)
    assert result.verdict is Verdict.PLAN_ERROR and "the kernel takes 8 parameters" in result.message, result.message


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["file"].removesuffix(".cu"))
def test_a_bad_hopper_kernel_gets_its_verdict_then_a_good_one_is_accepted(gpu_judge, entry):
    compiled = compiler.compile_submission(read(BAD / entry["file"]), entry["problem"])
    result = gpu_judge.judge(compiled, JudgeOptions(bench=False, timeout_s=entry.get("timeout_s", 120)))
    print(f"{entry['file']}: {result.verdict.value}: {result.message[:300]}")
    assert result.verdict.value == entry["verdict"], (entry["what"], result.message, result.error)
    assert entry["message"] in result.message, result.message
    accepted(judge(gpu_judge, TMA))  # the worker (replaced if it had to be) goes on, Hopper launches included

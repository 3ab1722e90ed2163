"""Problem definitions: argument lists, shapes, tolerances derived from the data type, FLOP and byte counts."""

import math

import pytest

from kernels import problems
from kernels.problems import TOLERANCE_FACTOR, UNIT_ROUNDOFF


def test_available():
    assert problems.available() == [
        "attention",
        "bf16_gemm",
        "fp8_quant",
        "gemv",
        "hgemm",
        "paged_decode",
        "prefix_sum",
        "reduce_sum",
        "rmsnorm",
        "sgemm",
        "softmax",
        "swiglu",
        "transpose",
        "vector_add",
    ]
    with pytest.raises(problems.ProblemError):
        problems.load("nope")


@pytest.mark.parametrize(
    "name, signature",
    [
        ("vector_add", "const float* A, const float* B, float* C, int N"),
        ("sgemm", "int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C"),
        ("hgemm", "int M, int N, int K, float alpha, const __half* A, const __half* B, float beta, float* C"),
    ],
)
def test_argument_lists(name, signature):
    assert problems.load(name).signature() == signature


@pytest.mark.parametrize("name", ["sgemm", "hgemm"])
def test_gemm_shapes(name):
    problem = problems.load(name)
    assert problem.output == "C" and problem.output_is_input
    assert problem.params["beta"] != 0 and problem.params["alpha"] != 1
    assert [s.sizes for s in problem.benchmarks] == [{"M": 4096, "N": 4096, "K": 4096}]
    shapes = [s.sizes for s in problem.tests]
    assert {"M": 1, "N": 1, "K": 1} in shapes
    # Ragged: some shape has every size off every power-of-two tile from 2 to 128.
    assert any(all(v % 2 for v in sizes.values()) for sizes in shapes)
    assert len({s.seed for s in problem.tests + problem.benchmarks}) == len(problem.tests) + len(problem.benchmarks)


def test_vector_add_shapes():
    problem = problems.load("vector_add")
    assert not problem.output_is_input
    assert any(s.sizes["N"] % 2 for s in problem.tests)
    assert problem.benchmarks[0].sizes["N"] * 4 * 3 > 10 * 60e6  # traffic far over the 60 MB L2


def test_tolerance_is_derived_from_the_accumulation_type():
    sgemm = problems.load("sgemm")
    assert sgemm.tolerance({"M": 8, "N": 8, "K": 4096}) == pytest.approx(TOLERANCE_FACTOR * 2.0**-24 * 64)
    assert sgemm.tolerance({"M": 8, "N": 8, "K": 1}) == pytest.approx(TOLERANCE_FACTOR * 2.0**-24)
    # The separation the GPU tests measure: TF32 operands err by ~1e-4 whatever K; FP16 by more.
    for k in (1, 129, 1000, 4096):
        tol = sgemm.tolerance({"M": 1, "N": 1, "K": k})
        assert tol < UNIT_ROUNDOFF["float16"] / 4  # well under the unit roundoff of TF32 and FP16 (2^-11)
    assert problems.load("vector_add").tolerance({"N": 10}) == pytest.approx(TOLERANCE_FACTOR * 2.0**-24)


def test_flop_and_byte_counts():
    sgemm, hgemm, vadd = (problems.load(n) for n in ("sgemm", "hgemm", "vector_add"))
    big = {"M": 4096, "N": 4096, "K": 4096}
    assert sgemm.flops(big) == 2 * 4096**3
    assert sgemm.bytes_moved(big) == 4 * 4 * 4096**2
    assert hgemm.bytes_moved(big) == 2 * 2 * 4096**2 + 8 * 4096**2
    assert vadd.flops({"N": 1000}) == 1000 and vadd.bytes_moved({"N": 1000}) == 12000
    assert math.isclose(sgemm.flops({"M": 127, "N": 255, "K": 129}), 2 * 127 * 255 * 129)


def test_every_problem_has_an_example_and_a_reference_module():
    for name in problems.available():
        folder = problems.PROBLEMS_DIR / name
        assert (folder / "example.cu").is_file() and (folder / "reference.py").is_file()

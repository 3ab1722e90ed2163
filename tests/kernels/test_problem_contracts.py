"""The issue-14 problems' reference.py against the judge's contracts, on the CPU: their make_inputs and reference
are array-module generic, so the judge's own comparison (kernels/compare.py) runs here on NumPy arrays exactly as
on the GPU. At every test shape: make_inputs gives every pointer but the workspaces in its stored dtype, the
reference fits every output, the reference stored in the output's type passes, and the poison fails."""

import numpy as np
import pytest

from kernels import problems
from kernels.compare import compare_outputs, expected_from
from kernels.problems import dtypes, poison_value

NEW = ["transpose", "reduce_sum", "prefix_sum", "softmax", "rmsnorm", "swiglu", "gemv", "fp8_quant"]


def stored_answer(problem, name, values):
    """The reference as a correct kernel stores it: exact outputs as they are, float64 values rounded to
    the output's type (BF16 by round to nearest even)."""
    if problem.is_exact(name):
        return values.copy()
    dtype = problem.arg(name).dtype
    if dtype == "bfloat16":
        return dtypes.bf16_from_f32(values.astype(np.float32))
    return values.astype(problem.arg(name).storage_dtype)


def run_shape(problem, shape):
    sizes = shape.sizes
    module = problem.module()
    inputs = module.make_inputs(sizes, np.random.default_rng(shape.seed), problem.params)
    for spec in problem.args:
        if spec.is_pointer and not spec.is_workspace:
            assert inputs[spec.name].dtype == np.dtype(spec.storage_dtype), spec
        if spec.is_workspace:
            assert spec.name not in inputs
    reference = module.reference(inputs, sizes, problem.params)
    magnitude = module.magnitude(inputs, sizes, problem.params) if hasattr(module, "magnitude") else None
    shapes = {name: inputs[name].shape for name in problem.outputs}
    return inputs, expected_from(problem, reference, magnitude, sizes, shapes)


@pytest.mark.parametrize("name", NEW)
def test_the_stored_reference_passes_and_the_poison_fails_at_every_test_shape(name):
    problem = problems.load(name)
    for shape in problem.tests:
        inputs, expected = run_shape(problem, shape)
        answer = {n: stored_answer(problem, n, expected[n].values) for n in problem.outputs}
        check = compare_outputs(problem, answer, expected, shape.sizes)
        assert check.passed, check.message
        for output in problem.outputs:
            poisoned = {**answer, output: np.full_like(answer[output], poison_value(problem.arg(output).dtype))}
            check = compare_outputs(problem, poisoned, expected, shape.sizes)
            assert not check.passed and check.output == output, check.message
            assert check.nonfinite_count == answer[output].size, check.message


@pytest.mark.parametrize("name", ["softmax", "rmsnorm", "swiglu", "gemv", "reduce_sum"])
def test_an_answer_a_few_ulps_of_the_accumulator_off_still_passes(name):
    """Tolerance outputs: every element of the FP32 answer nudged by 4 FP32 ulps (as a different summation
    order could) and then stored still passes; scaling it by (1 + 2^-6) fails."""
    problem = problems.load(name)
    shape = problem.tests[-1]
    _, expected = run_shape(problem, shape)
    (output,) = problem.outputs
    values = expected[output].values.astype(np.float32)
    nudged = values * np.float32(1 + 4 * 2.0**-24)
    check = compare_outputs(problem, {output: stored_answer(problem, output, nudged)}, expected, shape.sizes)
    assert check.passed, check.message
    scaled = (values * np.float32(1 + 2.0**-6)).astype(np.float64)
    check = compare_outputs(problem, {output: stored_answer(problem, output, scaled)}, expected, shape.sizes)
    assert not check.passed, check.message


def test_one_wrong_fp8_code_or_scale_fails_fp8_quant():
    problem = problems.load("fp8_quant")
    shape = problem.tests[2]
    _, expected = run_shape(problem, shape)
    answer = {n: expected[n].values.copy() for n in problem.outputs}
    answer["q"][5, 7] ^= 1  # the neighbouring code
    check = compare_outputs(problem, answer, expected, shape.sizes)
    assert not check.passed and check.output == "q" and check.bad_count == 1 and check.first_bad_index == [5, 7]
    answer["q"][5, 7] ^= 1
    answer["scales"][4] = np.nextafter(answer["scales"][4], np.float32(np.inf))
    check = compare_outputs(problem, answer, expected, shape.sizes)
    assert not check.passed and check.output == "scales" and "q: ok, bit-exact; scales: 1 of 17" in check.message


def test_one_wrong_scan_element_fails_prefix_sum():
    problem = problems.load("prefix_sum")
    shape = problem.tests[-1]
    _, expected = run_shape(problem, shape)
    answer = expected["y"].values.copy()
    answer[-1] += 1
    check = compare_outputs(problem, {"y": answer}, expected, shape.sizes)
    assert not check.passed and check.bad_count == 1 and check.first_bad_index == [shape.sizes["N"] - 1]

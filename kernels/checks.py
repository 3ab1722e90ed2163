"""Correctness for the GPU job: the reference (computed only after the candidate ran), the element-wise
comparison, the per-shape check, and the cap on printed output.

A failure that decides the job's verdict is raised as `JobFailed`; it lives here because the checks and the
timed rounds both raise it and the job entry point (`runner.judge_job`) turns it into the result.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import cupy as cp
import numpy as np

from kernels import gpu
from kernels import plan as plan_mod
from kernels.fingerprint import fingerprint
from kernels.inputs import Prepared, input_faults, prepare, read_inputs, run_plan
from kernels.problems import ELEMENT_TOLERANCE_FACTOR, Problem, Shape
from kernels.results import ShapeCheck, Verdict

# Anything a kernel prints beyond this is a flood: printf from every thread of a grid, say.
PRINTED_OUTPUT_LIMIT_BYTES = 64 * 1024


class JobFailed(Exception):
    def __init__(self, verdict: Verdict, message: str, error: str = ""):
        super().__init__(message)
        self.verdict, self.message, self.error = verdict, message, error


@dataclass
class Expected:
    """The reference output (float64) and the norm that errors are measured against."""

    values: cp.ndarray
    scale_norm: float


def expected_of(problem: Problem, inputs: dict[str, cp.ndarray], sizes: dict[str, int]) -> Expected:
    """The scale is ||reference||, unless the output's terms cancel: then a correct answer still carries the
    rounding error of its terms, and the scale is the norm of the terms' magnitudes over sqrt(reduction).
    For zero-mean random terms that floor sits below ||reference|| (sums grow like sqrt(K)), so it only
    takes over where cancellation shrank the reference, e.g. alpha*a*b + beta*c at 1 x 1 x 1."""
    module = problem.module()
    values = module.reference(inputs, sizes, problem.params)
    terms_norm = float(cp.linalg.norm(module.magnitude(inputs, sizes, problem.params)))
    reduction = max(plan_mod.evaluate(problem.reduction, sizes), 1)
    return Expected(values, max(float(cp.linalg.norm(values)), terms_norm / math.sqrt(reduction)))


def expected_after(prepared: Prepared) -> Expected:
    """Regenerate the inputs from the seed and compute the reference (float64) from them. Called only
    after the candidate has finished, so that no kernel ever runs while the reference exists. The
    regenerated inputs must match the fingerprints taken before the launch: then the reference is that of
    exactly the inputs the kernel was given."""
    problem = prepared.problem
    inputs = prepared.generate()
    drifted = [n for n in read_inputs(problem) if fingerprint(inputs[n], prepared.key) != prepared.fingerprints[n]]
    if drifted:
        # Generation is deterministic, so only a write into the judge's own device state (CuPy's random
        # generator, say) gets here; the worker is replaced after a runtime error.
        raise JobFailed(
            Verdict.RUNTIME_ERROR,
            f"inputs {', '.join(drifted)} regenerated from the seed differ from those launched: device memory "
            "of the judge was overwritten during the run",
        )
    return expected_of(problem, inputs, prepared.sizes)


def rehearse(problem: Problem, ctx: gpu.GpuContext) -> None:
    """Prepare, run the baseline and check once at the first test shape (compiles CuPy's kernels)."""
    shape = problem.tests[0]
    prepared = prepare(problem, shape.sizes, [0, shape.seed])
    out = prepared.buffers[problem.output].array
    problem.module().baseline(prepared.arrays(), out, shape.sizes, problem.params, ctx)
    input_faults(prepared)
    expected = expected_after(prepared)
    compare(out, expected, problem.tolerance(shape.sizes), shape.sizes)


def check_shape(problem: Problem, shape: Shape, launches, kernels, seed: int, arch: str) -> ShapeCheck:
    """Fresh inputs, the candidate, then (only then) the input checks and the reference."""
    sizes = shape.sizes
    prepared = prepare(problem, sizes, [seed, shape.seed])
    resolved = [plan_mod.resolve(launch, sizes, arch) for launch in launches]
    run_plan(resolved, kernels, prepared.args)
    cp.cuda.Device().synchronize()
    tol = problem.tolerance(sizes)
    fault = input_faults(prepared)
    if fault:
        return ShapeCheck(sizes, False, None, tol, message=f"{label(sizes)}: {fault}")
    expected = expected_after(prepared)
    return compare(prepared.buffers[problem.output].array, expected, tol, sizes)


def compare(out: cp.ndarray, expected: Expected, tol: float, sizes: dict[str, int]) -> ShapeCheck:
    """Every element: non-finite ones (unwritten NaN poison), large outliers, and the relative norm error."""
    ref = expected.values
    out64 = out.astype(cp.float64)
    finite = cp.isfinite(out64)
    nonfinite = int(out64.size - int(cp.count_nonzero(finite)))
    err = cp.where(finite, cp.abs(out64 - ref), 0.0)
    err_norm = float(cp.linalg.norm(err))
    rel_err = err_norm / expected.scale_norm if expected.scale_norm > 0 else err_norm
    rms_scale = expected.scale_norm / np.sqrt(max(ref.size, 1))
    bad = ~finite | (err > ELEMENT_TOLERANCE_FACTOR * tol * rms_scale)
    bad_count = int(cp.count_nonzero(bad))
    check = ShapeCheck(
        sizes,
        nonfinite == 0 and bad_count == 0 and rel_err <= tol,
        rel_err,
        tol,
        max_abs_err=float(err.max()) if err.size else 0.0,
        nonfinite_count=nonfinite,
        bad_count=bad_count,
    )
    if bad_count:
        flat = int(cp.argmax(bad))
        check.first_bad_index = [int(i) for i in np.unravel_index(flat, out.shape)]
        value = float(out64.ravel()[flat])
        check.first_bad_value = value if np.isfinite(value) else None
        check.first_bad_expected = float(ref.ravel()[flat])
    check.message = _describe(check)
    return check


def _describe(check: ShapeCheck) -> str:
    where = label(check.sizes)
    if check.passed:
        return f"{where}: ok, rel_err {check.rel_err:.2e} <= {check.tolerance:.2e}"
    parts = []
    if check.nonfinite_count:
        parts.append(f"{check.nonfinite_count} elements NaN/Inf (never written?)")
    if check.bad_count:
        got = "NaN/Inf" if check.first_bad_value is None else f"{check.first_bad_value:.6g}"
        parts.append(
            f"{check.bad_count} elements wrong, first at {check.first_bad_index}: got {got}, "
            f"expected {check.first_bad_expected:.6g}"
        )
    if check.rel_err > check.tolerance:
        parts.append(f"rel_err {check.rel_err:.2e} > tolerance {check.tolerance:.2e}")
    return f"{where}: " + "; ".join(parts)


def label(sizes: dict[str, int]) -> str:
    """A shape as messages name it: "M=128, N=128, K=64"."""
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def check_printed_output() -> None:
    """The kernels' printf lands in this child's stdout file (fd 1); past the limit the job fails."""
    printed = os.fstat(1).st_size
    if printed > PRINTED_OUTPUT_LIMIT_BYTES:
        raise JobFailed(
            Verdict.OUTPUT_LIMIT, f"the kernels printed {printed} bytes; the limit is {PRINTED_OUTPUT_LIMIT_BYTES}"
        )

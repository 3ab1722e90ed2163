"""Comparing outputs with the reference, on NumPy or CuPy arrays alike (the GPU job passes CuPy arrays; the CPU
tests pass NumPy ones, so the judge's own comparison is what they exercise).

Two kinds of output (`Problem.is_exact`):
- exact (int32, FP8 codes, and float outputs the problem lists in `exact`): bit for bit against a reference in
  the stored dtype; the check counts the elements that differ and names the first few;
- tolerance: converted to float64 (BF16 bit patterns and FP16 included) and measured as ||out - ref|| / scale
  against `Problem.tolerance(sizes, output)`, plus an element-wise test (no element off by more than
  ELEMENT_TOLERANCE_FACTOR tolerances in rms(ref), or in its own scale where the problem gives one, see
  `expected_from`) and no NaN/Inf.
A shape passes when every output does; its ShapeCheck carries the figures of the first failing output (else of
the one nearest its tolerance) and a message naming each output where there are several.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernels import plan as plan_mod
from kernels.problems import (
    ARITHMETIC_FLOOR,
    ELEMENT_TOLERANCE_FACTOR,
    NARROW_FORMATS,
    POISON_BITS,
    STORAGE_DTYPES,
    TOLERANCE_FACTOR,
    UNIT_ROUNDOFF,
    Problem,
)
from kernels.results import ShapeCheck

FIRST_INDICES_SHOWN = 5  # how many differing positions an exact check names
# A library baseline may round once more on the way than a reader may (an eager op's BF16 intermediate): an
# intermediate rounded near the bottom of its binade moves the result by up to two of the final value's half
# units, then the result is rounded: three of one correct rounding's allowance. A wrong wiring (a missing op,
# swapped operands) is still off by far more.
LIBRARY_ROUNDINGS = 3
# What FP32 arithmetic may lose outright: subnormals flushed to zero, a fast division (__fdividef) that returns 0
# for a denominator over 2^126. Far below any value the problems' outputs hold where it matters.
ABSOLUTE_FLOOR = 2.0**-100


def xp_of(array: Any):
    """NumPy for NumPy arrays, else CuPy (imported only then)."""
    if isinstance(array, np.ndarray | np.generic):
        return np
    import cupy

    return cupy


def _e4m3_values() -> np.ndarray:
    """The float64 value of each of the 256 E4M3 codes: sign, 4 exponent bits (bias 7), 3 mantissa bits;
    exponent 0 is subnormal (m/8 * 2^-6); S.1111.111 is NaN (E4M3 has no infinities)."""
    codes = np.arange(256)
    exponent, mantissa = (codes >> 3) & 0xF, codes & 0x7
    magnitude = np.where(exponent == 0, mantissa / 8 * 2.0**-6, (1 + mantissa / 8) * 2.0 ** (exponent - 7))
    magnitude[(exponent == 15) & (mantissa == 7)] = np.nan
    return np.where(codes & 0x80, -magnitude, magnitude)


E4M3_VALUES = _e4m3_values()


def to_float64(array: Any, dtype: str) -> Any:
    """The values of an output stored as `dtype` (STORAGE_DTYPES: BF16 as uint16 bits, FP8 as uint8 codes)."""
    xp = xp_of(array)
    if dtype == "bfloat16":  # a BF16 is the top half of the float32 with the same sign and exponent
        return (array.astype(xp.uint32) << 16).view(xp.float32).astype(xp.float64)
    if dtype == "float8_e4m3":
        return xp.asarray(E4M3_VALUES)[array.astype(xp.intp)]
    return array.astype(xp.float64)


@dataclass
class OutputExpected:
    """The reference of one output: float64 values and the norm errors are measured against (tolerance
    outputs), or values in the stored dtype (exact outputs, scale_norm unused)."""

    values: Any
    scale_norm: float
    exact: bool
    element_scale: Any = None  # per element, where the problem's element_scale() gives it (see expected_from)
    terms: Any = None  # per element, the size of the terms it sums (magnitude(), else element_scale()), or None


@dataclass
class Expected:
    """The reference of every output of one input set, by output name."""

    outputs: dict[str, OutputExpected]

    def __getitem__(self, name: str) -> OutputExpected:
        return self.outputs[name]


def by_output(problem: Problem, value: Any, what: str) -> dict[str, Any]:
    """reference()/magnitude()/baseline() answer with a dict by output name, or, for one-output problems, the
    array itself."""
    if isinstance(value, dict):
        unknown = set(value) - set(problem.outputs)
        if unknown:
            raise ValueError(f"{problem.name}: {what} gave {sorted(unknown)}, which are not outputs")
        return value
    if len(problem.outputs) != 1:
        raise ValueError(f"{problem.name}: {what} must give a dict by output name ({', '.join(problem.outputs)})")
    return {problem.output: value}


def expected_from(
    problem: Problem,
    reference: Any,
    magnitude: Any,
    sizes: dict[str, int],
    shapes: dict[str, tuple[int, ...]],
    element_scale: Any = None,
) -> Expected:
    """The reference (and optional magnitudes) of every output, shaped like the outputs.

    For a tolerance output the scale is ||reference||, unless the output's terms cancel: then a correct answer
    still carries the rounding error of its terms, and the scale is the norm of the terms' magnitudes over
    sqrt(reduction). For zero-mean random terms that floor sits below ||reference|| (sums grow like sqrt(K)),
    so it only takes over where cancellation shrank the reference, e.g. alpha*a*b + beta*c at 1 x 1 x 1.

    `element_scale` (optional, by output like the reference) is each element's own scale for the element-wise
    test, where rms(ref) misjudges it: a causal attention output's first rows are single values of V (near 1)
    while its late rows average thousands (near 0.01), so a correctly rounded BF16 first row is off by more
    than ten tolerances in rms(ref). An element is then bad past ELEMENT_TOLERANCE_FACTOR tolerances in the
    larger of its scale and rms(ref)."""
    references = by_output(problem, reference, "reference()")
    magnitudes = by_output(problem, magnitude, "magnitude()") if magnitude is not None else {}
    element_scales = by_output(problem, element_scale, "element_scale()") if element_scale is not None else {}
    reduction = max(plan_mod.evaluate(problem.reduction, sizes), 1)
    outputs = {}
    for name in problem.outputs:
        if name not in references:
            raise ValueError(f"{problem.name}: reference() gave no {name!r}")
        exact = problem.is_exact(name)
        values = _reference_values(problem, name, references[name], shapes[name], exact)
        if exact:
            outputs[name] = OutputExpected(values, 0.0, True)
            continue
        xp = xp_of(values)
        scale = float(xp.linalg.norm(values.ravel()))
        if name in magnitudes:
            terms = xp.asarray(magnitudes[name], dtype=xp.float64)
            scale = max(scale, float(xp.linalg.norm(terms.ravel())) / math.sqrt(reduction))
        own = None
        if name in element_scales:
            own = xp.asarray(element_scales[name], dtype=xp.float64).reshape(values.shape)
        terms = own
        if name in magnitudes:
            terms = xp.asarray(magnitudes[name], dtype=xp.float64).reshape(values.shape)
        outputs[name] = OutputExpected(values, scale, False, own, terms)
    return Expected(outputs)


def _reference_values(problem: Problem, name: str, values: Any, shape: tuple[int, ...], exact: bool) -> Any:
    if math.prod(shape) != values.size:
        raise ValueError(f"{problem.name}: reference of {name!r} has {values.size} elements, the output {shape}")
    values = values.reshape(shape)
    if not exact:
        if values.dtype.kind != "f":
            raise ValueError(f"{problem.name}: reference of {name!r} is {values.dtype}; give float64")
        return values.astype(np.float64, copy=False)
    stored = np.dtype(STORAGE_DTYPES[problem.arg(name).dtype])
    if values.dtype == stored:
        return values
    if values.dtype.itemsize == stored.itemsize and values.dtype.kind in "iu" and stored.kind in "iu":
        return values.view(stored)
    raise ValueError(
        f"{problem.name}: reference of the exact output {name!r} is {values.dtype}; give its stored dtype {stored}"
    )


def compare_outputs(
    problem: Problem, outs: dict[str, Any], expected: Expected, sizes: dict[str, int], contract: bool = True
) -> ShapeCheck:
    """Every output of one launch against its reference; the shape fails if any output fails. `contract=False`
    checks a library baseline, which keeps its own rounding rules (PyTorch's eager SwiGLU rounds silu(gate) to
    BF16 before the product): its narrow outputs may be off by LIBRARY_ROUNDINGS times one rounding's allowance."""
    checks = {
        name: compare_output(problem, name, outs[name], expected[name], sizes, contract) for name in problem.outputs
    }
    return combine(sizes, checks)


def compare_output(
    problem: Problem, name: str, out: Any, expected: OutputExpected, sizes: dict[str, int], contract: bool = True
) -> ShapeCheck:
    dtype = problem.arg(name).dtype
    out = out.reshape(expected.values.shape)
    if expected.exact:
        check = _compare_exact(out, expected.values, dtype, sizes)
    else:
        rounding = element_allowance(problem, name, expected, sizes, contract) if problem.rounds_output(name) else None
        check = _compare_tolerance(out, expected, problem.tolerance(sizes, name), dtype, sizes, rounding)
    check.output = name
    return check


def _compare_tolerance(
    out: Any, expected: OutputExpected, tol: float, dtype: str, sizes, rounding: Any = None
) -> ShapeCheck:
    """Every element: non-finite ones (unwritten NaN poison), large outliers, and the relative norm error.
    With `rounding` (each element's allowance, see `element_allowance`) an element is bad past it instead of
    past ELEMENT_TOLERANCE_FACTOR tolerances."""
    xp = xp_of(out)
    ref = expected.values
    out64 = to_float64(out, dtype)
    finite = xp.isfinite(out64)
    nonfinite = int(out64.size - int(xp.count_nonzero(finite)))
    err = xp.where(finite, xp.abs(out64 - ref), 0.0)
    # Where elements are held to one rounding, what FP32 may lose outright (ABSOLUTE_FLOOR) counts in neither test:
    # a lone silu(-100) * up, exactly -3.7e-42 * up, comes out as -0.0 from expf's overflow and must not fail
    # the norm test alone (swiglu's 1 x 1 shape did on the H200).
    counted = err if rounding is None else xp.maximum(err - ABSOLUTE_FLOOR, 0.0)
    err_norm = float(xp.linalg.norm(counted.ravel()))
    rel_err = err_norm / expected.scale_norm if expected.scale_norm > 0 else err_norm
    rms_scale = expected.scale_norm / np.sqrt(max(ref.size, 1))
    unit = rms_scale if expected.element_scale is None else xp.maximum(expected.element_scale, rms_scale)
    limit = ELEMENT_TOLERANCE_FACTOR * tol * unit if rounding is None else rounding
    bad = ~finite | (err > limit)
    bad_count = int(xp.count_nonzero(bad))
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
        flat = int(xp.argmax(bad.ravel()))
        check.first_bad_index = [int(i) for i in np.unravel_index(flat, out.shape)]
        value = float(out64.ravel()[flat])
        check.first_bad_value = value if np.isfinite(value) else None
        check.first_bad_expected = float(ref.ravel()[flat])
    check.message = _describe_tolerance(check)
    return check


def element_allowance(
    problem: Problem, name: str, expected: OutputExpected, sizes: dict[str, int], contract: bool = True
) -> Any:
    """How far each element of an output rounded to a narrower type (BF16, FP16) may be from the exact value:
    half a unit in the last place of the output type at the exact value (one correct rounding), plus the error
    of the wider arithmetic the contract allows before it, in the size of the element's terms (magnitude(), else
    element_scale(), else the value itself), plus ABSOLUTE_FLOOR (what FP32 arithmetic may flush or underflow to
    zero). The arithmetic's share is
    TOLERANCE_FACTOR * u(accumulation) * sqrt(reduction), at least ARITHMETIC_FLOOR (fast intrinsics such as
    __expf err by a few FP32 units), plus u(intermediate) where the contract lets an operand be rounded to a
    narrower type (attention's P). A second rounding on the way (BF16 partial sums, BF16 atomics, a C rounded
    between split-K launches) moves a share of the elements past half a unit: they fail.

    `contract=False` (a library baseline): LIBRARY_ROUNDINGS half units, and operands may be rounded to the
    output's type on the way (PyTorch's memory-efficient SDPA keeps P in BF16 for paged_decode's baseline)."""
    xp = xp_of(expected.values)
    ref = expected.values
    reduction = max(plan_mod.evaluate(problem.reduction, sizes), 1)
    u_acc = UNIT_ROUNDOFF[problem.accumulate_dtype]
    arithmetic = max(TOLERANCE_FACTOR * u_acc * math.sqrt(reduction), ARITHMETIC_FLOOR)
    dtype = problem.arg(name).dtype
    intermediate = problem.intermediate_dtype if contract else dtype
    if intermediate:
        arithmetic += UNIT_ROUNDOFF[intermediate]
    roundings = 1 if contract else LIBRARY_ROUNDINGS
    size = xp.abs(ref) if expected.terms is None else xp.maximum(expected.terms, xp.abs(ref))
    return roundings * half_ulp(ref, dtype) + arithmetic * size + ABSOLUTE_FLOOR


def half_ulp(values: Any, dtype: str) -> Any:
    """Half the spacing of `dtype` (bfloat16 or float16) at each value: the most one correct rounding moves it.
    Below the smallest normal number the spacing is the subnormals' (and at zero too)."""
    xp = xp_of(values)
    significand_bits, min_exponent = NARROW_FORMATS[dtype]
    _, exponent = xp.frexp(values)  # |v| = m * 2^exponent, m in [0.5, 1): floor(log2 |v|) = exponent - 1
    binade = xp.maximum(xp.where(values == 0, min_exponent, exponent - 1), min_exponent)
    return xp.ldexp(xp.ones_like(values), (binade - significand_bits).astype(xp.int32))


def _compare_exact(out: Any, ref: Any, dtype: str, sizes) -> ShapeCheck:
    """Bit for bit: the stored words must be equal (a float32 scale off by one ulp differs, so does -0.0 from
    0.0 and any NaN from a number); the values (decoded) give rel_err and the reported figures."""
    xp = xp_of(out)
    word = np.dtype(f"u{out.dtype.itemsize}")
    differ = out.view(word) != ref.view(word)
    bad_count = int(xp.count_nonzero(differ))
    out64, ref64 = to_float64(out, dtype), to_float64(ref, dtype)
    if dtype == "int32":  # every int is finite: count the elements still holding the poison instead
        unwritten = int(xp.count_nonzero(out.view(word) == POISON_BITS["int32"]))
    else:
        unwritten = int(out64.size - int(xp.count_nonzero(xp.isfinite(out64))))
    diff = xp.where(xp.isfinite(out64), xp.abs(out64 - ref64), 0.0)
    diff = xp.where(xp.isfinite(ref64), diff, 0.0)
    ref_norm = float(xp.linalg.norm(xp.where(xp.isfinite(ref64), ref64, 0.0).ravel()))
    err_norm = float(xp.linalg.norm(diff.ravel()))
    check = ShapeCheck(
        sizes,
        bad_count == 0,
        err_norm / ref_norm if ref_norm > 0 else err_norm,
        0.0,
        max_abs_err=float(diff.max()) if diff.size else 0.0,
        nonfinite_count=unwritten,
        bad_count=bad_count,
    )
    if bad_count:
        positions = [int(i) for i in xp.flatnonzero(differ.ravel())[:FIRST_INDICES_SHOWN]]
        indices = [[int(i) for i in np.unravel_index(p, out.shape)] for p in positions]
        check.first_bad_index = indices[0]
        value = float(out64.ravel()[positions[0]])
        check.first_bad_value = value if np.isfinite(value) else None
        expected = float(ref64.ravel()[positions[0]])
        check.first_bad_expected = expected if np.isfinite(expected) else None
        check.message = _describe_exact(check, out.size, indices, dtype)
    else:
        check.message = "ok, bit-exact"
    return check


def _describe_tolerance(check: ShapeCheck) -> str:
    if check.passed:
        return f"ok, rel_err {check.rel_err:.2e} <= {check.tolerance:.2e}"
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
    return "; ".join(parts)


def _describe_exact(check: ShapeCheck, size: int, indices: list[list[int]], dtype: str) -> str:
    got = "NaN" if check.first_bad_value is None else f"{check.first_bad_value:.9g}"
    expected = "NaN" if check.first_bad_expected is None else f"{check.first_bad_expected:.9g}"
    shown = ", ".join(str(i) for i in indices) + (", ..." if check.bad_count > len(indices) else "")
    text = (
        f"{check.bad_count} of {size} elements differ (compared bit for bit), at {shown}; "
        f"first: got {got}, expected {expected}"
    )
    if check.nonfinite_count:
        poison = "0xA5A5A5A5" if dtype == "int32" else "NaN"
        text += f"; {check.nonfinite_count} elements still {poison} (never written?)"
    return text


def combine(sizes: dict[str, int], checks: dict[str, ShapeCheck]) -> ShapeCheck:
    """One ShapeCheck for the shape: the figures of the first failing output, else of the one nearest its
    tolerance; the message names each output where there are several (one output: as it always read)."""
    where = label(sizes)
    if len(checks) == 1:
        (check,) = checks.values()
        check.message = f"{where}: {check.message}"
        return check
    failing = [c for c in checks.values() if not c.passed]
    deciding = failing[0] if failing else max(checks.values(), key=_closeness)
    combined = dataclasses.replace(deciding, passed=not failing)
    combined.message = f"{where}: " + "; ".join(f"{name}: {c.message}" for name, c in checks.items())
    return combined


def _closeness(check: ShapeCheck) -> float:
    return check.rel_err / check.tolerance if check.tolerance > 0 and check.rel_err is not None else 0.0


def label(sizes: dict[str, int]) -> str:
    """A shape as messages name it: "M=128, N=128, K=64"."""
    return ", ".join(f"{k}={v}" for k, v in sizes.items())

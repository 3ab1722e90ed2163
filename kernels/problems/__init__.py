"""Problems: one folder each, holding `problem.toml` (data) and `reference.py` (inputs, reference, baseline).

The TOML holds everything that is data: the kernel's argument list (with the outputs to check, which of them
are checked bit for bit, and the workspaces the judge allocates), the size names, test and benchmark shapes
with their seeds, the accumulation type the tolerance is derived from, FLOP and byte counts as formulas, and
which ceiling bounds the roofline. `reference.py` holds the small contracts that need code (run on the GPU,
with CuPy):

    make_inputs(sizes, rng, params) -> dict[name, cupy array]   # every pointer argument but workspaces,
                                                                 # outputs included; may take layout_rng=,
        # a generator the same in every round at a shape, for structure that should not change round to round
        # (paged_decode's contexts and block table: kernels/inputs.py `make_inputs`)
    reference(inputs, sizes, params) -> dict[output, cupy array] | cupy array
        # float64 for outputs checked with a tolerance, the stored dtype for exact ones
    magnitude(inputs, sizes, params) -> the same shape(s), optional: |terms| where an output may cancel
    element_scale(inputs, sizes, params) -> the same shape(s), optional: each element's own scale for the
        element-wise test, where rms(reference) misjudges it (attention's causal rows; see compare.expected_from)
    baseline(inputs, outs, sizes, params, ctx) -> None | dict[output, cupy array]
        # the vendor library writing into `outs` (the array itself for one-output problems, else a dict),
        # or returning arrays of its own, which are then checked instead

Element types without a CuPy dtype are stored as their bit patterns: BF16 as uint16, FP8 E4M3 as uint8
(`STORAGE_DTYPES`); `kernels/problems/dtypes.py` converts them.
"""

from __future__ import annotations

import functools
import importlib
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from kernels import plan as plan_mod

PROBLEMS_DIR = Path(__file__).parent

# Unit roundoff u = 2^-p of a floating type (p = significand bits, hidden bit included).
UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
# tolerance = TOLERANCE_FACTOR * u(accumulation) * sqrt(reduction length) [+ u(output type)]. A correctly
# rounded FP32 sum of K random-sign terms lands near u * sqrt(K) (rounding errors add like a random walk), so
# 16x leaves room for any summation order and for tensor cores' truncating FP32 accumulation, while TF32
# operands (u = 2^-11, error ~3e-4 whatever K) and FP16 accumulators (u = 2^-11, error growing with K) miss it
# by far; the GPU tests in tests/kernels/test_gpu.py check both sides of that claim on every problem.
# An output stored in a narrower type than the sum (BF16 from an FP32 accumulator) is rounded once more, by at
# most u(output) relative to each element: that rounding is added on top, so an answer correctly rounded to
# BF16 passes while one accumulated in BF16 (error ~u(bf16) * sqrt(K)) fails.
TOLERANCE_FACTOR = 16.0
# An element is "bad" when it is off by more than this many tolerances, measured in rms(ref): the norm test
# alone would let a handful of wrong elements through in a 16M-element output.
ELEMENT_TOLERANCE_FACTOR = 10.0
# Outputs stored narrower than their arithmetic (BF16 or FP16 from FP32) are held element by element to one
# correct rounding of the exact value plus the arithmetic's error (compare.element_allowance). The arithmetic's
# share is at least this, relative to each element: fast intrinsics (__expf: 2 + 1.16 |x| FP32 units) stay under
# it, while a BF16 rounding on the way (2^-9) is 128 times larger.
ARITHMETIC_FLOOR = 2.0**-16
# (significand bits with the hidden one, smallest normal exponent) of the narrow output types.
NARROW_FORMATS = {"bfloat16": (8, -126), "float16": (11, -14)}

SCALAR_TYPES = {"int": "int32", "float": "float32"}
# The C element type behind each pointer type, const or not.
_POINTEES = {
    "float": "float32",
    "__half": "float16",
    "__nv_bfloat16": "bfloat16",
    "__nv_fp8_e4m3": "float8_e4m3",
    "int": "int32",
}
POINTER_TYPES = {f"{const}{c_type}*": dtype for c_type, dtype in _POINTEES.items() for const in ("const ", "")}
# How CuPy holds each element type: BF16 and FP8 have no CuPy dtype, so their bit patterns are stored.
STORAGE_DTYPES = {
    "float32": "float32",
    "float16": "float16",
    "bfloat16": "uint16",
    "float8_e4m3": "uint8",
    "int32": "int32",
}
# Outputs of these types are compared bit for bit whatever `exact` says: an integer or an FP8 code is either
# the right one or wrong.
ALWAYS_EXACT_DTYPES = ("int32", "float8_e4m3")
# What an output holds before every launch, as a value of its stored dtype: NaN for floating types (BF16's
# quiet NaN is 0x7FC0), 0xA5A5A5A5 for int32 (a large negative number no scan of small inputs produces), 0x7F
# for FP8 E4M3 (NaN: E4M3 has no infinities and only this code and 0xFF as NaN).
POISON_BITS = {"float32": 0x7FC00000, "float16": 0x7E00, "bfloat16": 0x7FC0, "float8_e4m3": 0x7F, "int32": 0xA5A5A5A5}
# What the guard bands around every array hold, element after element from the array's edge outward
# (kernels/inputs.py, Guarded): for floating types the largest finite value, a NaN and the most negative finite
# value, so that a value read past an edge poisons any sum (huge, or NaN), maximum (the largest value) or sum of
# squares (infinite) it enters; for int32 0x55555555 and 0xAAAAAAAA, a page or row index that faults however
# its offset is computed (see paged_decode's POISON_PAGE) and a sum that is far off; FP8 its NaN code.
GUARD_BITS = {
    "float32": (0x7F7FFFFF, 0x7FC00000, 0xFF7FFFFF),
    "float16": (0x7BFF, 0x7E00, 0xFBFF),
    "uint16": (0x7F7F, 0x7FC0, 0xFF7F),  # BF16 bits
    "uint8": (0x7F,),  # FP8 E4M3 codes: NaN
    "int32": (0x55555555, 0xAAAAAAAA),
}
# Promised alignments below this get a correctness round with every array at exactly its promise (Guarded).
MISALIGNED_ROUND_LIMIT = 256
COMPUTE_UNITS = ("fp32", "tensor_fp16", "tensor_bf16", "memory")
UNITS = ("TFLOP/s", "GB/s")

_REQUIRED_KEYS = ("name", "title", "statement", "sizes", "args", "compute_unit", "baseline", "flops", "bytes")
_OPTIONAL_KEYS = (
    "output",
    "outputs",
    "exact",
    "output_is_input",
    "accumulate_dtype",
    "reduction",
    "unit",
    "flag_faster_than_baseline",
    "tests",
    "benchmarks",
    "alignment",
    "intermediate_dtype",
    "library",
    "warm_baseline",
)
_ARG_KEYS = ("name", "type", "value", "workspace", "shape")
_FLAG_KEY = "flag_faster_than_baseline"


class ProblemError(ValueError):
    pass


@dataclass(frozen=True)
class ArgSpec:
    name: str
    type: str  # the C type as the kernel declares it
    value: float | None = None  # fixed scalar parameters (alpha, beta, eps); None for sizes and pointers
    workspace: str | None = None  # a workspace's element count, an expression over the sizes
    shape: tuple[str, ...] | None = None  # an array's row-major shape, expressions over the sizes (tensor maps)

    @property
    def is_pointer(self) -> bool:
        return self.type.endswith("*")

    @property
    def is_const(self) -> bool:
        return self.type.startswith("const ")

    @property
    def is_workspace(self) -> bool:
        return self.workspace is not None

    @property
    def dtype(self) -> str:
        """The element type's name: float32, float16, bfloat16, float8_e4m3, int32."""
        return POINTER_TYPES[self.type] if self.is_pointer else SCALAR_TYPES[self.type]

    @property
    def storage_dtype(self) -> str:
        """The NumPy/CuPy dtype its buffer has (bit patterns for BF16 and FP8)."""
        return STORAGE_DTYPES[self.dtype] if self.is_pointer else self.dtype


@dataclass(frozen=True)
class Shape:
    sizes: dict[str, int]
    seed: int


@dataclass(frozen=True)
class Problem:
    name: str
    title: str
    statement: str
    size_names: tuple[str, ...]
    args: tuple[ArgSpec, ...]
    outputs: tuple[str, ...]  # the checked outputs, in the order they are reported
    exact: tuple[str, ...]  # float outputs listed as checked bit for bit (integer and FP8 ones always are)
    output_is_input: bool  # every output is also read (GEMM's C): refilled with random values, not poisoned
    accumulate_dtype: str
    reduction: str
    compute_unit: str  # "fp32", "tensor_fp16", "tensor_bf16" or "memory": which measured ceiling bounds the roofline
    unit: str  # "TFLOP/s" or "GB/s": the figure readers see first
    baseline_name: str
    library: str  # the baseline's library as readers say it: "% of cuBLAS", "% of PyTorch"
    flag_faster_than_baseline: bool  # False where the baseline is known to be beatable (no vendor routine)
    flops_expr: str
    bytes_expr: str
    tests: tuple[Shape, ...]
    benchmarks: tuple[Shape, ...]
    alignment: int | None = None  # bytes every array's address is promised to be a multiple of; None: its element size
    intermediate_dtype: str | None = None  # an operand the contract lets be rounded to a narrower type (attention's P)
    # The baseline's first call at a shape is long (a library that builds a plan per shape): a spare that expects
    # this problem pays it at the benchmark shapes in its setup, not the job's timed rounds (checks.warm_baseline).
    warm_baseline: bool = False

    @property
    def params(self) -> dict[str, float]:
        return {a.name: a.value for a in self.args if a.value is not None}

    @property
    def output(self) -> str:
        """The first output (the only one of the GEMM and vector_add problems)."""
        return self.outputs[0]

    @property
    def output_names(self) -> tuple[str, ...]:
        return self.outputs

    @property
    def workspaces(self) -> tuple[ArgSpec, ...]:
        return tuple(a for a in self.args if a.is_workspace)

    @property
    def is_memory_bound(self) -> bool:
        return self.compute_unit == "memory"

    def arg(self, name: str) -> ArgSpec:
        return next(a for a in self.args if a.name == name)

    def is_exact(self, output: str) -> bool:
        return output in self.exact or self.arg(output).dtype in ALWAYS_EXACT_DTYPES

    def rounds_output(self, name: str) -> bool:
        """Whether output `name` is rounded from wider arithmetic (BF16/FP16 from FP32): then each element is held
        to one correct rounding (compare.element_allowance)."""
        dtype = self.arg(name).dtype
        return (
            not self.is_exact(name)
            and dtype in NARROW_FORMATS
            and UNIT_ROUNDOFF[dtype] > UNIT_ROUNDOFF[self.accumulate_dtype]
        )

    def promised_alignment(self, name: str) -> int:
        """The alignment the contract promises array `name`'s address: `alignment`, else its element size."""
        return max(self.alignment or 0, np.dtype(self.arg(name).storage_dtype).itemsize)

    def misaligned_offsets(self) -> dict[str, int]:
        """For the correctness rounds with arrays placed at exactly their promised alignment and no more: each
        array's offset past a 512-byte boundary (workspaces stay aligned: scratch is the judge's to lay out).
        Empty where every promise is at least that alignment (attention's 256 bytes), so no such round runs."""
        promised = {a.name: self.promised_alignment(a.name) for a in self.args if a.is_pointer and not a.is_workspace}
        offsets = {name: a if a < MISALIGNED_ROUND_LIMIT else 0 for name, a in promised.items()}
        return offsets if any(offsets.values()) else {}

    def signature(self) -> str:
        return ", ".join(f"{a.type} {a.name}" for a in self.args)

    def tolerance(self, sizes: dict[str, int], output: str | None = None) -> float:
        """The bound on ||out - ref|| / scale for one output (the first by default); 0 for exact outputs."""
        output = output or self.output
        if self.is_exact(output):
            return 0.0
        reduction = max(plan_mod.evaluate(self.reduction, sizes), 1)
        u_acc, u_out = UNIT_ROUNDOFF[self.accumulate_dtype], UNIT_ROUNDOFF[self.arg(output).dtype]
        # The output's own rounding only counts where it is coarser than the sum's (see TOLERANCE_FACTOR).
        return TOLERANCE_FACTOR * u_acc * math.sqrt(reduction) + (u_out if u_out > u_acc else 0.0)

    def array_shape(self, name: str, sizes: dict[str, int]) -> tuple[int, ...] | None:
        """The row-major shape of array `name` at these sizes, where problem.toml declares it (tensor maps need
        it on the CPU, before any array exists); None where it does not."""
        shape = self.arg(name).shape
        return None if shape is None else tuple(plan_mod.evaluate(e, sizes) for e in shape)

    def workspace_count(self, name: str, sizes: dict[str, int]) -> int:
        """How many elements the workspace `name` holds at these sizes."""
        return plan_mod.evaluate(self.arg(name).workspace, sizes)

    def flops(self, sizes: dict[str, int]) -> int:
        return plan_mod.evaluate(self.flops_expr, sizes)

    def bytes_moved(self, sizes: dict[str, int]) -> int:
        return plan_mod.evaluate(self.bytes_expr, sizes)

    def all_shapes(self) -> list[dict[str, int]]:
        return [s.sizes for s in self.tests + self.benchmarks]

    def module(self) -> ModuleType:
        """The problem's reference.py (imports CuPy: GPU side only)."""
        return importlib.import_module(f"kernels.problems.{self.name}.reference")


def poison_value(dtype: str) -> np.generic:
    """The poison of an element type, as a scalar of its stored dtype (fills an output before every launch)."""
    storage = np.dtype(STORAGE_DTYPES[dtype])
    bits = np.array(POISON_BITS[dtype], dtype=f"u{storage.itemsize}")
    return bits.view(storage)[()]


def guard_pattern(storage_dtype) -> np.ndarray:
    """The elements a guard band repeats, as an array of the stored dtype (GUARD_BITS)."""
    storage = np.dtype(storage_dtype)
    bits = np.array(GUARD_BITS[storage.name], dtype=f"u{storage.itemsize}")
    return bits.view(storage)


def garbage(nbytes: int, key: int, xp=np):
    """`nbytes` bytes of garbage for a workspace, the same for the same key: the high halves of splitmix64 of
    each word's index plus the key. As floats they are huge, tiny, negative, NaN and Inf alike (a fixed byte
    such as 0xA5 reads as -2.9e-16, next to zero, and would let a kernel that sums into a workspace it never
    zeroed pass); as integers, anything. `xp` is NumPy or CuPy."""
    words = (nbytes + 3) // 4
    z = xp.arange(words, dtype=xp.uint64) + xp.uint64(key & (2**64 - 1))
    z ^= z >> xp.uint64(30)
    z *= xp.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> xp.uint64(27)
    z *= xp.uint64(0x94D049BB133111EB)
    z ^= z >> xp.uint64(31)
    return (z >> xp.uint64(32)).astype(xp.uint32).view(xp.uint8)[:nbytes]


def available() -> list[str]:
    return sorted(p.parent.name for p in PROBLEMS_DIR.glob("*/problem.toml"))


@functools.cache
def load(name: str) -> Problem:
    if name not in available():
        raise ProblemError(f"unknown problem {name!r}; known: {', '.join(available())}")
    path = PROBLEMS_DIR / name / "problem.toml"
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ProblemError(f"{name}: problem.toml is not valid TOML: {exc}") from None
    return parse(data, name)


def parse(data: dict, where: str = "problem") -> Problem:
    """A Problem from problem.toml's table, validated (ProblemError names what is wrong)."""
    where = str(data.get("name", where))
    missing = [k for k in _REQUIRED_KEYS if k not in data]
    if missing:
        raise ProblemError(f"{where}: problem.toml lacks {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(data) - set(_REQUIRED_KEYS) - set(_OPTIONAL_KEYS))
    if unknown:
        raise ProblemError(
            f"{where}: unknown keys {unknown} in problem.toml; known: {', '.join(_REQUIRED_KEYS + _OPTIONAL_KEYS)}"
        )
    size_names = tuple(data["sizes"])
    problem = Problem(
        name=data["name"],
        title=data["title"],
        statement=data["statement"].strip(),
        size_names=size_names,
        args=tuple(_arg(a, where) for a in data["args"]),
        outputs=_outputs(data, where),
        exact=tuple(_names(data.get("exact", []), "exact", where)),
        output_is_input=_bool(data.get("output_is_input", False), "output_is_input", where),
        accumulate_dtype=str(data.get("accumulate_dtype", "float32")),
        reduction=str(data.get("reduction", "1")),
        compute_unit=data["compute_unit"],
        unit=data.get("unit", "TFLOP/s"),
        baseline_name=data["baseline"],
        library=str(data.get("library") or data["baseline"].split()[0]),
        flag_faster_than_baseline=_bool(data.get(_FLAG_KEY, True), _FLAG_KEY, where),
        flops_expr=str(data["flops"]),
        bytes_expr=str(data["bytes"]),
        tests=tuple(_shape(s, size_names, where, "tests") for s in data.get("tests", [])),
        benchmarks=tuple(_shape(s, size_names, where, "benchmarks") for s in data.get("benchmarks", [])),
        alignment=_alignment(data.get("alignment"), where),
        intermediate_dtype=data.get("intermediate_dtype"),
        warm_baseline=_bool(data.get("warm_baseline", False), "warm_baseline", where),
    )
    _validate(problem)
    return problem


def _arg(table: dict, where: str) -> ArgSpec:
    if not isinstance(table, dict) or "name" not in table or "type" not in table:
        raise ProblemError(f"{where}: every entry of args needs a name and a type, got {table!r}")
    unknown = sorted(set(table) - set(_ARG_KEYS))
    if unknown:
        raise ProblemError(f"{where}: argument {table['name']!r} has unknown keys {unknown}; known: {_ARG_KEYS}")
    workspace = table.get("workspace")
    shape = table.get("shape")
    if shape is not None:
        if not isinstance(shape, list) or not shape or not all(isinstance(e, (str, int)) for e in shape):
            raise ProblemError(f"{where}: argument {table['name']!r} has shape {shape!r}, not a list of expressions")
        shape = tuple(str(e) for e in shape)
    return ArgSpec(
        table["name"], table["type"], table.get("value"), None if workspace is None else str(workspace), shape
    )


def _alignment(value, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value & (value - 1) or value > 256:
        raise ProblemError(f"{where}: alignment must be a power of two from 1 to 256 (bytes), got {value!r}")
    return value


def _outputs(data: dict, where: str) -> tuple[str, ...]:
    if "output" in data and "outputs" in data:
        raise ProblemError(f"{where}: give either output (one) or outputs (a list), not both")
    if "outputs" in data:
        outputs = _names(data["outputs"], "outputs", where)
    elif "output" in data:
        outputs = _names([data["output"]], "output", where)
    else:
        raise ProblemError(f"{where}: problem.toml names no output: add outputs = [...]")
    if not outputs:
        raise ProblemError(f"{where}: outputs is empty")
    if len(set(outputs)) != len(outputs):
        raise ProblemError(f"{where}: outputs {outputs} names one output twice")
    return tuple(outputs)


def _names(value, key: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProblemError(f"{where}: {key} must be a list of argument names, got {value!r}")
    return value


def _bool(value, key: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise ProblemError(f"{where}: {key} must be true or false, got {value!r}")
    return value


def _shape(table: dict, size_names: tuple[str, ...], where: str, key: str) -> Shape:
    missing = [n for n in (*size_names, "seed") if n not in table]
    if missing:
        raise ProblemError(f"{where}: a shape in {key} lacks {', '.join(missing)}: {table!r}")
    return Shape({n: int(table[n]) for n in size_names}, int(table["seed"]))


def _validate(problem: Problem) -> None:
    where = problem.name
    names = [a.name for a in problem.args]
    if len(set(names)) != len(names):
        raise ProblemError(f"{where}: argument names repeat: {names}")
    for arg in problem.args:
        _validate_arg(problem, arg)
    for output in problem.outputs:
        if output not in names:
            raise ProblemError(f"{where}: output {output!r} is not an argument")
        arg = problem.arg(output)
        if not arg.is_pointer or arg.is_const or arg.is_workspace:
            raise ProblemError(f"{where}: output {output!r} must be a writable (non-const) pointer, not a workspace")
    for output in problem.exact:
        if output not in problem.outputs:
            raise ProblemError(f"{where}: exact names {output!r}, which is not one of the outputs {problem.outputs}")
    for arg in problem.args:
        if arg.is_pointer and not arg.is_const and not arg.is_workspace and arg.name not in problem.outputs:
            raise ProblemError(
                f"{where}: {arg.name!r} is a writable pointer but neither an output nor a workspace: list it in "
                "outputs (checked), give it a workspace count, or declare it const"
            )
    if problem.accumulate_dtype not in UNIT_ROUNDOFF:
        raise ProblemError(
            f"{where}: unknown accumulate_dtype {problem.accumulate_dtype!r}; known: {', '.join(UNIT_ROUNDOFF)}"
        )
    if problem.intermediate_dtype is not None and problem.intermediate_dtype not in NARROW_FORMATS:
        raise ProblemError(
            f"{where}: unknown intermediate_dtype {problem.intermediate_dtype!r}; known: {', '.join(NARROW_FORMATS)}"
        )
    if problem.compute_unit not in COMPUTE_UNITS:
        raise ProblemError(f"{where}: unknown compute_unit {problem.compute_unit!r}; known: {', '.join(COMPUTE_UNITS)}")
    if problem.unit not in UNITS:
        raise ProblemError(f"{where}: unknown unit {problem.unit!r}; known: {', '.join(UNITS)}")
    if not problem.tests or not problem.benchmarks:
        raise ProblemError(f"{where}: needs test and benchmark shapes")
    for sizes in problem.all_shapes():
        _validate_shape(problem, sizes)


def _validate_arg(problem: Problem, arg: ArgSpec) -> None:
    where = problem.name
    if arg.type not in SCALAR_TYPES and arg.type not in POINTER_TYPES:
        known = ", ".join([*SCALAR_TYPES, *POINTER_TYPES])
        raise ProblemError(f"{where}: argument {arg.name!r} has unsupported type {arg.type!r}; known: {known}")
    if arg.is_pointer and arg.value is not None:
        raise ProblemError(f"{where}: pointer {arg.name!r} cannot have a value")
    if not arg.is_pointer and arg.value is None and arg.name not in problem.size_names:
        raise ProblemError(f"{where}: scalar {arg.name!r} is neither a size nor has a value")
    if not arg.is_pointer and arg.value is not None:
        if isinstance(arg.value, bool) or not isinstance(arg.value, (int, float)):
            raise ProblemError(f"{where}: scalar {arg.name!r} has value {arg.value!r}, not a number")
        if arg.type == "int" and not isinstance(arg.value, int):
            raise ProblemError(f"{where}: int scalar {arg.name!r} has a non-integer value {arg.value!r}")
    if arg.is_workspace and (not arg.is_pointer or arg.is_const):
        raise ProblemError(f"{where}: workspace {arg.name!r} must be a writable (non-const) pointer")
    if arg.shape is not None and (not arg.is_pointer or arg.is_workspace):
        raise ProblemError(
            f"{where}: only arrays (pointers that are not workspaces) have a shape; {arg.name!r} has one"
        )
    if arg.name == "SMS":
        raise ProblemError(f"{where}: 'SMS' names the GPU's multiprocessor count in plans; call the argument otherwise")


def _validate_shape(problem: Problem, sizes: dict[str, int]) -> None:
    where = f"{problem.name} at {', '.join(f'{k}={v}' for k, v in sizes.items())}"
    try:
        for output in problem.outputs:
            problem.tolerance(sizes, output)
        flops, nbytes = problem.flops(sizes), problem.bytes_moved(sizes)
        counts = {w.name: problem.workspace_count(w.name, sizes) for w in problem.workspaces}
        shapes = {a.name: problem.array_shape(a.name, sizes) for a in problem.args if a.shape is not None}
    except plan_mod.PlanError as exc:
        raise ProblemError(f"{where}: {exc}") from None
    if nbytes <= 0:
        raise ProblemError(f"{where}: bytes = {nbytes}; it must be positive")
    if flops < 0 or (flops == 0 and not problem.is_memory_bound):
        raise ProblemError(f"{where}: flops = {flops}; it must be positive (or 0 for compute_unit = 'memory')")
    for name, shape in shapes.items():
        if any(extent <= 0 for extent in shape):
            raise ProblemError(f"{where}: array {name!r} would have shape {shape}; every extent must be at least 1")
    for name, count in counts.items():
        if count <= 0:
            raise ProblemError(f"{where}: workspace {name!r} would hold {count} elements; it must be at least 1")

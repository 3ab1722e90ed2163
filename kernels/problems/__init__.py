"""Problems: one folder each, holding `problem.toml` (data) and `reference.py` (inputs, reference, baseline).

The TOML holds everything that is data: the kernel's argument list, the size names, test and benchmark
shapes with their seeds, the accumulation type the tolerance is derived from, FLOP and byte counts as
formulas. `reference.py` holds the three small contracts that need code (run on the GPU, with CuPy):

    make_inputs(sizes, rng, params) -> dict[name, cupy array]   # every pointer argument, output included
    reference(inputs, sizes, params) -> cupy float64 array       # the exact answer, output-shaped
    baseline(inputs, out, sizes, params, ctx) -> None             # the vendor library writing into `out`
"""

from __future__ import annotations

import functools
import importlib
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from kernels import plan as plan_mod

PROBLEMS_DIR = Path(__file__).parent

# Unit roundoff u = 2^-p of the accumulation type (p = significand bits, hidden bit included).
UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
# tolerance = TOLERANCE_FACTOR * u * sqrt(reduction length). A correctly rounded FP32 sum of K random-sign
# terms lands near u * sqrt(K) (rounding errors add like a random walk), so 16x leaves room for any
# summation order and for tensor cores' truncating FP32 accumulation, while TF32 operands (u = 2^-11, error
# ~3e-4 whatever K) and FP16 accumulators (u = 2^-11, error growing with K) miss it by far; the GPU tests
# in tests/kernels/test_gpu.py check both sides of that claim on every problem.
TOLERANCE_FACTOR = 16.0
# An element is "bad" when it is off by more than this many tolerances, measured in rms(ref): the norm test
# alone would let a handful of wrong elements through in a 16M-element output.
ELEMENT_TOLERANCE_FACTOR = 10.0

SCALAR_TYPES = {"int": "int32", "float": "float32"}
POINTER_TYPES = {
    "const float*": "float32",
    "float*": "float32",
    "const __half*": "float16",
    "__half*": "float16",
}


class ProblemError(ValueError):
    pass


@dataclass(frozen=True)
class ArgSpec:
    name: str
    type: str  # the C type as the kernel declares it
    value: float | None = None  # fixed scalar parameters (alpha, beta); None for sizes and pointers

    @property
    def is_pointer(self) -> bool:
        return self.type.endswith("*")

    @property
    def is_const(self) -> bool:
        return self.type.startswith("const ")

    @property
    def dtype(self) -> str:
        return POINTER_TYPES[self.type] if self.is_pointer else SCALAR_TYPES[self.type]


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
    output: str
    output_is_input: bool
    accumulate_dtype: str
    reduction: str
    compute_unit: str  # "fp32" or "tensor_fp16": which measured ceiling bounds the roofline
    baseline_name: str
    flag_faster_than_baseline: bool  # False where the baseline is known to be beatable (no vendor routine)
    flops_expr: str
    bytes_expr: str
    tests: tuple[Shape, ...]
    benchmarks: tuple[Shape, ...]

    @property
    def params(self) -> dict[str, float]:
        return {a.name: a.value for a in self.args if a.value is not None}

    def signature(self) -> str:
        return ", ".join(f"{a.type} {a.name}" for a in self.args)

    def tolerance(self, sizes: dict[str, int]) -> float:
        reduction = max(plan_mod.evaluate(self.reduction, sizes), 1)
        return TOLERANCE_FACTOR * UNIT_ROUNDOFF[self.accumulate_dtype] * math.sqrt(reduction)

    def flops(self, sizes: dict[str, int]) -> int:
        return plan_mod.evaluate(self.flops_expr, sizes)

    def bytes_moved(self, sizes: dict[str, int]) -> int:
        return plan_mod.evaluate(self.bytes_expr, sizes)

    def all_shapes(self) -> list[dict[str, int]]:
        return [s.sizes for s in self.tests + self.benchmarks]

    def module(self) -> ModuleType:
        """The problem's reference.py (imports CuPy: GPU side only)."""
        return importlib.import_module(f"kernels.problems.{self.name}.reference")


def available() -> list[str]:
    return sorted(p.parent.name for p in PROBLEMS_DIR.glob("*/problem.toml"))


@functools.cache
def load(name: str) -> Problem:
    path = PROBLEMS_DIR / name / "problem.toml"
    if name not in available():
        raise ProblemError(f"unknown problem {name!r}; known: {', '.join(available())}")
    data = tomllib.loads(path.read_text())
    size_names = tuple(data["sizes"])
    args = tuple(ArgSpec(a["name"], a["type"], a.get("value")) for a in data["args"])
    problem = Problem(
        name=data["name"],
        title=data["title"],
        statement=data["statement"].strip(),
        size_names=size_names,
        args=args,
        output=data["output"],
        output_is_input=bool(data["output_is_input"]),
        accumulate_dtype=data["accumulate_dtype"],
        reduction=str(data["reduction"]),
        compute_unit=data["compute_unit"],
        baseline_name=data["baseline"],
        flag_faster_than_baseline=bool(data.get("flag_faster_than_baseline", True)),
        flops_expr=data["flops"],
        bytes_expr=data["bytes"],
        tests=tuple(_shape(s, size_names) for s in data["tests"]),
        benchmarks=tuple(_shape(s, size_names) for s in data["benchmarks"]),
    )
    _validate(problem)
    return problem


def _shape(table: dict, size_names: tuple[str, ...]) -> Shape:
    return Shape({n: int(table[n]) for n in size_names}, int(table["seed"]))


def _validate(problem: Problem) -> None:
    for arg in problem.args:
        if arg.type not in SCALAR_TYPES and arg.type not in POINTER_TYPES:
            raise ProblemError(f"{problem.name}: unsupported argument type {arg.type!r}")
        if not arg.is_pointer and arg.value is None and arg.name not in problem.size_names:
            raise ProblemError(f"{problem.name}: scalar {arg.name!r} is neither a size nor has a value")
    pointers = [a.name for a in problem.args if a.is_pointer]
    if problem.output not in pointers:
        raise ProblemError(f"{problem.name}: output {problem.output!r} is not a pointer argument")
    if problem.accumulate_dtype not in UNIT_ROUNDOFF:
        raise ProblemError(f"{problem.name}: unknown accumulate_dtype {problem.accumulate_dtype!r}")
    if problem.compute_unit not in ("fp32", "tensor_fp16"):
        raise ProblemError(f"{problem.name}: unknown compute_unit {problem.compute_unit!r}")
    if not problem.tests or not problem.benchmarks:
        raise ProblemError(f"{problem.name}: needs test and benchmark shapes")
    for sizes in problem.all_shapes():
        problem.tolerance(sizes), problem.flops(sizes), problem.bytes_moved(sizes)

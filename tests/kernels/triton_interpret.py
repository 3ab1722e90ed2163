"""Run a Triton submission on the CPU with Triton's interpreter (TRITON_INTERPRET=1), for the starters' tests.

The interpreter runs a @triton.jit function's body in Python with NumPy arrays, one program after another, and
reads and writes raw memory through the pointers it is given. Here the pointers are NumPy arrays' addresses, so
no PyTorch is needed: `run` launches the file's PLAN (grid, constexprs, launch after launch) with the problem's
own inputs (reference.py `make_inputs`, NumPy generator) and compares the outputs with the judge's comparison
(kernels/compare.py). Every array sits between guard bands of the values kernels/inputs.py puts around the GPU's
arrays, so a read past an edge poisons the result as it would there, and a write past one is caught.

Where the interpreter's arithmetic is not the GPU's, it is made the GPU's for the run (`gpu_conversions`): its
FP32 -> BF16 cast truncates where the GPU (cvt.rn.bf16.f32) rounds to nearest even, its FP32 -> E4M3 cast
rounds ties away and does not saturate where the GPU (cvt.rn.satfinite.e4m3x2.f32) does both, and its tl.dot
multiplies BF16 operands as their bit patterns; the problems' own conversions (kernels/problems/dtypes.py) stand
in for the GPU's. What the interpreter computes more exactly than the GPU is left so: exp, `/` and sqrt are
NumPy's correctly rounded ones where the GPU's (ex2.approx, div.full, sqrt.approx) are a few units off, an error
the contracts allow and these runs do not exercise.

The file is executed unconfined, in a process of its own (Triton must be imported with TRITON_INTERPRET=1 set):
this is for the project's own starters, never for a reader's file.
"""

from __future__ import annotations

import contextlib
import json
import linecache
import os
import sys
import time
import traceback
from dataclasses import dataclass

import numpy as np

from kernels import compare, problems, triton_source
from kernels import plan as plan_mod
from kernels.problems import STORAGE_DTYPES, dtypes, guard_pattern, poison_value

GUARD_ELEMENTS = 64  # guard values on each side of every array
# Triton element types of the problems' pointer arguments (triton_source._TRITON_POINTEES, by Triton's names).
_TRITON_TYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp8e4nv": "float8e4nv", "i32": "int32"}


def require_interpreter() -> None:
    """Triton reads TRITON_INTERPRET when it is imported (its own library's @triton.jit functions, tl.zeros and
    tl.cumsum among them, are made then), so it must be set in the environment of a fresh process: `main`'s."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction

    if os.environ.get("TRITON_INTERPRET") != "1" or not isinstance(tl.zeros, InterpretedFunction):
        raise RuntimeError(
            "run this in a process started with TRITON_INTERPRET=1 (python -m tests.kernels.triton_interpret)"
        )


@contextlib.contextmanager
def gpu_conversions():
    """The interpreter's FP32 -> BF16 and FP32 -> E4M3 conversions and its BF16 tl.dot replaced by the GPU's (see
    the module's text). The builder's other casts (create_fp_trunc, ...) call `self.cast_impl`, so they follow."""
    import triton.language as tl
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    cast_impl, fp_to_fp, dot = builder.cast_impl, builder.create_fp_to_fp, builder.create_dot

    def narrowed(src, dst_type):
        source, target = src.dtype.scalar, dst_type.scalar
        if source == tl.float32 and target == tl.bfloat16:
            return interpreter.TensorHandle(dtypes.bf16_from_f32(src.data), target)
        if source == tl.float32 and target == tl.float8e4nv:
            return interpreter.TensorHandle(dtypes.e4m3_encode(src.data), target)
        return None

    def patched_cast(self, src, dst_type):
        done = narrowed(src, dst_type)
        return done if done is not None else cast_impl(self, src, dst_type)

    def patched_fp_to_fp(self, src, dst_type, rounding_mode):
        done = narrowed(src, dst_type)
        return done if done is not None else fp_to_fp(self, src, dst_type, rounding_mode)

    def widened(operand):
        if operand.dtype.scalar == tl.bfloat16:
            return interpreter.TensorHandle(dtypes.f32_from_bf16(operand.data), tl.float32)
        return operand

    def patched_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        # The interpreter multiplies BF16 operands as their uint16 bit patterns; the tensor cores multiply their
        # values exactly and add in FP32, which FP32 operands do here.
        return dot(self, widened(a), widened(b), d, input_precision, max_num_imprecise_acc)

    builder.cast_impl, builder.create_fp_to_fp, builder.create_dot = patched_cast, patched_fp_to_fp, patched_dot
    try:
        yield
    finally:
        builder.cast_impl, builder.create_fp_to_fp, builder.create_dot = cast_impl, fp_to_fp, dot


@dataclass
class Guarded:
    """An array between two guard bands: `whole` is what is allocated, `inner` the array the kernel is given."""

    whole: np.ndarray
    inner: np.ndarray
    pattern: np.ndarray

    @classmethod
    def around(cls, values: np.ndarray) -> Guarded:
        pattern = guard_pattern(values.dtype)
        band = np.resize(pattern, GUARD_ELEMENTS)
        whole = np.concatenate([band[::-1], values.ravel(), band])
        inner = whole[GUARD_ELEMENTS : GUARD_ELEMENTS + values.size].reshape(values.shape)
        return cls(whole, inner, pattern)

    def intact(self) -> bool:
        band = np.resize(self.pattern, GUARD_ELEMENTS)
        bits = f"u{self.whole.dtype.itemsize}"
        head, tail = self.whole[:GUARD_ELEMENTS], self.whole[GUARD_ELEMENTS + self.inner.size :]
        return bool(
            np.array_equal(head.view(bits), band[::-1].view(bits)) and np.array_equal(tail.view(bits), band.view(bits))
        )


def load(source: str, name: str = "starter.py") -> dict:
    """The file executed as a module, its kernels interpreted."""
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)  # triton.jit reads the source
    namespace = {"__name__": "triton_starter"}
    exec(compile(source, name, "exec"), namespace)  # our own starters, past the parse check (see the module's text)
    return namespace


# Problems whose reference.py imports CuPy's cuBLAS (gemm_common), which cannot load without a GPU: their inputs
# (uniform in [-1, 1), as gemm_common draws them) and float64 reference are written out here.
CUPY_ONLY = ("vector_add", "sgemm", "hgemm")


def make_inputs(problem: problems.Problem, sizes: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """The problem's inputs on NumPy, from its make_inputs (CUPY_ONLY: the same distribution drawn here)."""
    rng = np.random.default_rng(seed)

    def uniform(shape, dtype):
        return (rng.random(shape, dtype=np.float32) * 2 - 1).astype(dtype)

    if problem.name == "vector_add":
        n = sizes["N"]
        return {"A": uniform((n,), np.float32), "B": uniform((n,), np.float32), "C": np.empty((n,), np.float32)}
    if problem.name in ("sgemm", "hgemm"):
        m, n, k = sizes["M"], sizes["N"], sizes["K"]
        operand = np.float32 if problem.name == "sgemm" else np.float16
        return {"A": uniform((m, k), operand), "B": uniform((k, n), operand), "C": uniform((m, n), np.float32)}
    return problem.module().make_inputs(sizes, rng, problem.params)


def expected(problem: problems.Problem, inputs: dict[str, np.ndarray], sizes: dict[str, int]) -> compare.Expected:
    """The reference as the judge's checks compute it (kernels/checks.py `expected_of`), on NumPy."""
    shapes = {name: inputs[name].shape for name in problem.outputs}
    if problem.name == "vector_add":
        a, b = (inputs[name].astype(np.float64) for name in ("A", "B"))
        return compare.expected_from(problem, a + b, np.abs(a) + np.abs(b), sizes, shapes)
    if problem.name in ("sgemm", "hgemm"):
        a, b, c = (inputs[name].astype(np.float64) for name in ("A", "B", "C"))
        alpha, beta = problem.params["alpha"], problem.params["beta"]
        reference = alpha * (a @ b) + beta * c
        magnitude = abs(alpha) * (np.abs(a) @ np.abs(b)) + abs(beta) * np.abs(c)
        return compare.expected_from(problem, reference, magnitude, sizes, shapes)
    module = problem.module()
    if hasattr(module, "reference_and_element_scale"):
        reference, element_scale = module.reference_and_element_scale(inputs, sizes, problem.params)
    else:
        reference = module.reference(inputs, sizes, problem.params)
        has_scale = hasattr(module, "element_scale")
        element_scale = module.element_scale(inputs, sizes, problem.params) if has_scale else None
    magnitude = module.magnitude(inputs, sizes, problem.params) if hasattr(module, "magnitude") else None
    return compare.expected_from(problem, reference, magnitude, sizes, shapes, element_scale)


def _launch(kernel, grid: tuple[int, ...], args: list, constexprs: dict) -> None:
    """One launch, program after program, as triton.runtime.interpreter.GridExecutor runs it (which wants PyTorch
    tensors; the arguments here are already the interpreter's tensors)."""
    from triton.runtime import interpreter

    body = kernel.rewrite()
    scope = interpreter._patch_lang(kernel.fn)
    try:
        grid = tuple(grid) + (1,) * (3 - len(grid))
        interpreter.interpreter_builder.set_grid_dim(*grid)
        for x in range(grid[0]):
            for y in range(grid[1]):
                for z in range(grid[2]):
                    interpreter.interpreter_builder.set_grid_idx(x, y, z)
                    body(*args, **constexprs)
    finally:
        scope.restore()


def _argument(kind: str, value):
    """A kernel argument as the interpreter's tensor: a pointer (an array's address) or an i32/fp32 scalar."""
    import triton.language as tl
    from triton.runtime import interpreter

    if kind.startswith("*"):
        ty = tl.pointer_type(getattr(tl, _TRITON_TYPES[kind[1:]]))
        data = np.array([value.ctypes.data], dtype=np.uint64)
    elif kind == "i32":
        ty, data = tl.int32, np.array([value], dtype=np.int32)
    else:
        ty, data = tl.float32, np.array([value], dtype=np.float32)
    return tl.tensor(interpreter.TensorHandle(data, ty), ty)


@dataclass
class Run:
    check: object  # kernels.results.ShapeCheck
    guards_intact: bool
    seconds: float


def run(source: str, problem_name: str, sizes: dict[str, int], seed: int) -> Run:
    """The file's plan launched under the interpreter at one shape, its outputs checked as the judge checks them."""
    require_interpreter()
    problem = problems.load(problem_name)
    triton_source.check(source)
    plan = triton_source.extract(source, problem)
    inputs = make_inputs(problem, sizes, seed)
    reference = expected(problem, inputs, sizes)
    arrays: dict[str, Guarded] = {}
    for arg in problem.args:
        if not arg.is_pointer:
            continue
        if arg.is_workspace:
            count = problem.workspace_count(arg.name, sizes)
            nbytes = count * np.dtype(arg.storage_dtype).itemsize
            values = np.frombuffer(problems.garbage(nbytes, seed), arg.storage_dtype)
        elif arg.name in problem.outputs and not problem.output_is_input:
            values = np.full(inputs[arg.name].shape, poison_value(arg.dtype), dtype=STORAGE_DTYPES[arg.dtype])
        else:
            values = np.ascontiguousarray(inputs[arg.name])
        arrays[arg.name] = Guarded.around(np.array(values, copy=True))
    kinds = triton_source.triton_types(problem)
    args = []
    for arg, kind in zip(problem.args, kinds, strict=True):
        if arg.is_pointer:
            args.append(_argument(kind, arrays[arg.name].inner))
        else:
            args.append(_argument(kind, sizes.get(arg.name, arg.value)))
    began = time.perf_counter()
    # Masked lanes compute exp(-inf - -inf) and the like, as on the GPU, where nothing warns.
    with gpu_conversions(), np.errstate(all="ignore"):
        namespace = load(source)
        for launch in plan.launches:
            grid = tuple(plan_mod.evaluate(expr, sizes) for expr in launch.grid)
            _launch(namespace[launch.kernel], grid, args, dict(launch.constexprs))
    seconds = time.perf_counter() - began
    outs = {name: arrays[name].inner for name in problem.outputs}
    check = compare.compare_outputs(problem, outs, reference, sizes)
    return Run(check, all(guarded.intact() for guarded in arrays.values()), seconds)


def main(argv: list[str]) -> int:
    """python -m tests.kernels.triton_interpret PROBLEM:INDEX ... (TRITON_INTERPRET=1 in the environment): each
    problem's example_triton.py at its test shape number INDEX, one JSON line per run on stdout."""
    for spec in argv:
        name, index = spec.split(":")
        shape = problems.load(name).tests[int(index)]
        line = {"problem": name, "index": int(index), "sizes": shape.sizes}
        try:
            source = (problems.PROBLEMS_DIR / name / "example_triton.py").read_text()
            result = run(source, name, shape.sizes, shape.seed)
            line.update(
                passed=bool(result.check.passed),
                guards_intact=result.guards_intact,
                message=result.check.message,
                seconds=round(result.seconds, 3),
            )
        except Exception:  # noqa: BLE001 (reported to the test, which fails on it)
            line.update(passed=False, guards_intact=False, message=traceback.format_exc(), seconds=0.0)
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

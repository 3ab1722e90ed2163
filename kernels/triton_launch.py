"""Triton's calling convention, for the GPU job (issue 46): what a Triton build's cubin is launched with.

Triton 3.9's own launcher (triton/backends/nvidia/driver.py, `CudaLauncher`, and driver.c, `_launch`), which this
module follows for the builds `kernels/triton_compiler.py` makes:

- the grid is the plan's (x times `num_ctas` along x; the judge's builds have num_ctas 1, checked here), the block
  is (32 x num_warps, 1, 1), the dynamic shared memory is Triton's metadata "shared", the build's `shared_bytes`,
  with the function's max-dynamic-shared-memory attribute raised above 48 KB (the runner's `_fit_launches`);
- the parameters are the kernel's non-constexpr arguments in their order (constexprs are compiled in, never
  passed), then two pointers Triton appends to every kernel: its global scratch and its profile scratch. Each is
  null where the metadata's size is 0, else a buffer of size x programs (grid x * y * z x num_ctas) bytes at the
  metadata's alignment;
- nothing is dropped by specialisation: Triton's JIT turns an integer argument equal to 1 into a constant and
  marks 16-byte aligned pointers only when it compiles from a call's values, and the judge compiles from an
  explicit signature (`ASTSource`) in which every argument of the problem is a typed parameter and only the
  alignment the problem promises is stated (`tt.divisibility`, which changes no parameter). The compile checks
  that the PTX entry takes exactly the problem's arguments and the two scratch pointers;
- scalars travel at their Triton type's width (i32 as int32, fp32 as float32), pointers as 64-bit addresses.

The parent side (`gpu_plan`, `gpu_builds`) imports no CuPy; the child's (`TritonCall`) imports it when it first
launches.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from kernels.payloads import TritonCubin
from kernels.triton_source import triton_types

if TYPE_CHECKING:
    from kernels.results import CompileResult, ResolvedLaunch

SCRATCH_TYPE = "scratch"
SCRATCH_PARAMS = ("global_scratch", "profile_scratch")  # as Triton appends them, in this order
POINTER_BYTES = 8
# Triton's scalar types (driver.c's extractors) as the NumPy scalars CuPy passes by value, at the same width.
SCALAR_TYPES: dict[str, type[np.generic]] = {
    "i1": np.int8,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u1": np.uint8,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "fp16": np.float16,
    "fp32": np.float32,
    "f32": np.float32,
    "fp64": np.float64,
}


class TritonLaunchError(ValueError):
    """A build the judge cannot launch as compiled (its parameters, its CTAs): the judge's fault, not the reader's."""


# ---- the parent: what the GPU job carries ------------------------------------------------------------------------


def build_names(compiled: CompileResult) -> list[str]:
    """Each build's name in the GPU job: its kernel's, or "kernel (build n)" where one kernel has several builds
    (other constexprs or warps), n counting that kernel's builds from 1."""
    counts = Counter(k.kernel for k in compiled.triton_kernels)
    seen: Counter = Counter()
    names = []
    for k in compiled.triton_kernels:
        seen[k.kernel] += 1
        names.append(k.kernel if counts[k.kernel] == 1 else f"{k.kernel} (build {seen[k.kernel]})")
    return names


def gpu_builds(compiled: CompileResult) -> tuple[TritonCubin, ...]:
    """The result's builds as the GPU job carries them."""
    return tuple(
        TritonCubin(
            name=name,
            kernel=k.kernel,
            symbol=k.symbol,
            cubin=k.cubin,
            num_warps=k.num_warps,
            shared_bytes=k.shared_bytes,
            params=tuple((p["name"], p["type"]) for p in k.params),
            constexprs=tuple(k.constexprs.items()),
            global_scratch_bytes=k.global_scratch_bytes,
            global_scratch_align=k.global_scratch_align,
            profile_scratch_bytes=k.profile_scratch_bytes,
            profile_scratch_align=k.profile_scratch_align,
            num_ctas=k.num_ctas,
        )
        for name, k in zip(build_names(compiled), compiled.triton_kernels, strict=True)
    )


def gpu_plan(compiled: CompileResult) -> list[dict[str, Any]]:
    """The plan as the GPU job's runner resolves it (kernels/plan.py `Launch.to_dict()` each): each launch names
    its build, its block is 32 x num_warps threads and its dynamic shared memory the build's; the grid is the
    plan's expressions, resolved at each shape as CUDA's are."""
    names = build_names(compiled)
    build_of = {index: i for i, k in enumerate(compiled.triton_kernels) for index in k.launches}
    plan = []
    for index, launch in enumerate(compiled.plan):
        if index not in build_of:
            raise TritonLaunchError(f"launch {index + 1} ({launch['kernel']}) has no build")
        build = compiled.triton_kernels[build_of[index]]
        if build.kernel != launch["kernel"] or build.num_warps != launch["num_warps"]:
            raise TritonLaunchError(f"launch {index + 1} ({launch['kernel']}) is not its build's kernel")
        plan.append(
            {
                "kernel": names[build_of[index]],
                "grid": list(launch["grid"]),
                "block": [32 * build.num_warps],
                "shared_bytes": build.shared_bytes,
            }
        )
    return plan


def resources_named(compiled: CompileResult) -> list[dict[str, Any]]:
    """ptxas' report per build (KernelResources.to_dict()), named as the job's plan names the builds."""
    return [{**k.to_dict(), "name": name} for name, k in zip(build_names(compiled), compiled.kernels, strict=True)]


# ---- the child: checks and arguments (no CuPy) ------------------------------------------------------------------


def check_build(build: TritonCubin, problem) -> None:
    """The build takes the problem's arguments, in order and with the problem's Triton types, then Triton's two
    scratch pointers; and one CTA per program (num_ctas 1: no cluster launch)."""
    expected = [(a.name, t) for a, t in zip(problem.args, triton_types(problem), strict=True)]
    expected += [(name, SCRATCH_TYPE) for name in SCRATCH_PARAMS]
    if [tuple(p) for p in build.params] != expected:
        raise TritonLaunchError(f"{build.name}: parameters {list(build.params)}, expected {expected}")
    if build.num_ctas != 1:
        raise TritonLaunchError(f"{build.name}: num_ctas = {build.num_ctas}; the judge launches one CTA per program")


def parameter_bytes(params) -> list[int]:
    """The byte size of each parameter as cuFuncGetParamInfo reports it for the cubin's entry."""
    sizes = []
    for _name, kind in params:
        if kind == SCRATCH_TYPE or kind.startswith("*"):
            sizes.append(POINTER_BYTES)
        elif kind in SCALAR_TYPES:
            sizes.append(np.dtype(SCALAR_TYPES[kind]).itemsize)
        else:
            raise TritonLaunchError(f"no launch convention for Triton type {kind!r}")
    return sizes


def check_parameter_bytes(build: TritonCubin, found: list[int] | None) -> None:
    """The loaded entry's parameters (cuFuncGetParamInfo; None where the driver cannot say) against the build's."""
    if found is not None and found != parameter_bytes(build.params):
        raise TritonLaunchError(
            f"{build.name}: the cubin's entry takes parameters of {found} bytes; the build says "
            f"{parameter_bytes(build.params)}"
        )


def programs(grid: tuple[int, ...], num_ctas: int = 1) -> int:
    """How many programs (CTAs) a launch runs: what Triton's scratch sizes are multiplied by."""
    return math.prod(grid) * num_ctas


def scratch_bytes(per_program: int, grid: tuple[int, ...], num_ctas: int = 1) -> int:
    """A scratch buffer's size for a launch: 0 (a null pointer) where the build needs none."""
    return per_program * programs(grid, num_ctas) if per_program > 0 else 0


def call_arguments(params, args: tuple, global_scratch: int = 0, profile_scratch: int = 0) -> tuple:
    """The tuple the cubin's entry is launched with: the problem's arguments (`args`, as kernels/inputs.py makes
    them: device arrays for pointers, NumPy scalars for the rest), each scalar at its Triton type, then the two
    scratch addresses (0: a null pointer) as 64-bit values."""
    own = [p for p in params if p[1] != SCRATCH_TYPE]
    if len(own) != len(args) or [p[0] for p in params[len(own) :]] != list(SCRATCH_PARAMS):
        raise TritonLaunchError(f"{len(args)} arguments for parameters {list(params)}")
    passed = []
    for (name, kind), value in zip(own, args, strict=True):
        if kind.startswith("*"):
            if isinstance(value, (np.generic, int, float)):
                raise TritonLaunchError(f"{name}: a pointer parameter ({kind}) given a scalar")
            passed.append(value)
        elif kind in SCALAR_TYPES:
            if not isinstance(value, (np.generic, int, float)):
                raise TritonLaunchError(f"{name}: a scalar parameter ({kind}) given {type(value).__name__}")
            passed.append(SCALAR_TYPES[kind](value))
        else:
            raise TritonLaunchError(f"{name}: no launch convention for Triton type {kind!r}")
    return (*passed, np.uint64(global_scratch), np.uint64(profile_scratch))


# ---- the child: launching ----------------------------------------------------------------------------------------


class TritonCall:
    """How one loaded build is launched (kernels/inputs.py `run_plan`): its scratch buffers, kept per launch size
    (allocated at the first launch of a size, the checks' or a warm-up round's, never again in a timed one)."""

    def __init__(self, build: TritonCubin):
        self.build = build
        self._scratch: dict[tuple[str, int], Any] = {}  # (which, bytes) -> CuPy memory

    def scratch_address(self, which: str, grid: tuple[int, ...]) -> int:
        build = self.build
        per_program, align = (
            (build.global_scratch_bytes, build.global_scratch_align)
            if which == "global"
            else (build.profile_scratch_bytes, build.profile_scratch_align)
        )
        nbytes = scratch_bytes(per_program, grid, build.num_ctas)
        if nbytes == 0:
            return 0
        memory = self._scratch.get((which, nbytes))
        if memory is None:
            import cupy as cp

            memory = self._scratch[(which, nbytes)] = cp.cuda.alloc(nbytes + align)
            memory.memset(0, nbytes + align)
        return -(-memory.ptr // align) * align

    def launch(self, function, launch: ResolvedLaunch, args: tuple) -> None:
        """One launch of the plan: the grid resolved, Triton's block and shared memory (the runner's plan has them
        from the build), the problem's arguments then the scratch pointers."""
        passed = call_arguments(
            self.build.params,
            args,
            self.scratch_address("global", launch.grid),
            self.scratch_address("profile", launch.grid),
        )
        function(tuple(launch.grid), tuple(launch.block), passed, shared_mem=launch.shared_bytes)

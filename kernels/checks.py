"""Correctness for the GPU job: the reference (computed only after the candidate ran), the baseline's outputs,
the per-shape check of every output (the comparison itself is `compare.py`), and the cap on printed output.

A failure that decides the job's verdict is raised as `JobFailed`; it lives here because the checks and the
timed rounds both raise it and the job entry point (`runner.judge_job`) turns it into the result.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

import cupy as cp

from kernels import plan as plan_mod
from kernels.compare import Expected, by_output, compare_outputs, expected_from, label
from kernels.fingerprint import fingerprint
from kernels.inputs import Prepared, build_tensor_maps, input_faults, make_inputs, prepare, read_inputs, run_plan
from kernels.problems import Problem, Shape
from kernels.results import ShapeCheck, Verdict

if TYPE_CHECKING:  # annotations only: the checks import on a node without the CUDA libraries (the CPU tests)
    from kernels import gpu

MISALIGNED_STREAM = 0xA119  # the misaligned rounds draw inputs of their own: another seed word

# Anything a kernel prints beyond this is a flood: printf from every thread of a grid, say.
PRINTED_OUTPUT_LIMIT_BYTES = 64 * 1024


class JobFailed(Exception):
    def __init__(self, verdict: Verdict, message: str, error: str = ""):
        super().__init__(message)
        self.verdict, self.message, self.error = verdict, message, error


def expected_of(problem: Problem, inputs: dict[str, cp.ndarray], sizes: dict[str, int]) -> Expected:
    """The reference of every output (float64 for tolerance outputs, the stored dtype for exact ones), shaped
    like the outputs, with the norms errors are measured against and, where the problem gives them, each
    element's own scale (see `compare.expected_from`)."""
    module = problem.module()
    if hasattr(module, "reference_and_element_scale"):  # one pass where both share most of their work
        reference, element_scale = module.reference_and_element_scale(inputs, sizes, problem.params)
    else:
        reference = module.reference(inputs, sizes, problem.params)
        has_scale = hasattr(module, "element_scale")
        element_scale = module.element_scale(inputs, sizes, problem.params) if has_scale else None
    magnitude = module.magnitude(inputs, sizes, problem.params) if hasattr(module, "magnitude") else None
    shapes = {name: inputs[name].shape for name in problem.outputs}
    return expected_from(problem, reference, magnitude, sizes, shapes, element_scale)


def expected_after(prepared: Prepared) -> Expected:
    """The reference of exactly the inputs the kernel was given, computed only now, after the candidate has
    finished, so that no kernel ever runs while the reference exists (`inputs_after`)."""
    return expected_of(prepared.problem, inputs_after(prepared), prepared.sizes)


def inputs_after(prepared: Prepared) -> dict[str, cp.ndarray]:
    """The input set as launched, for the reference, each read input's fingerprint (taken on the host before the
    launch, with a key the kernel never sees) matched again. Where no output is also an input, the buffers
    themselves once they match (an input set drawn a second time from the seed, as before, was a third of a
    memory-bound problem's timed round), with fresh arrays in place of the outputs, which hold the candidate's
    answer; where one is (GEMM's C, overwritten by the kernel), the set is drawn again from its seed."""
    problem = prepared.problem
    if problem.output_is_input:
        inputs, source = prepared.generate(), "regenerated from the seed"
    else:
        inputs, source = prepared.arrays(), "as launched"
        for name in problem.outputs:
            inputs[name] = cp.empty_like(inputs[name])
    drifted = [n for n in read_inputs(problem) if fingerprint(inputs[n], prepared.key) != prepared.fingerprints[n]]
    if drifted:
        # The buffers were checked just before (`inputs.input_faults`), and generation is deterministic, so only a
        # write into the judge's own device state (CuPy's random generator, say) gets here; the worker is replaced
        # after a runtime error.
        raise JobFailed(
            Verdict.RUNTIME_ERROR,
            f"inputs {', '.join(drifted)} {source} differ from those fingerprinted before the launch: device memory "
            "of the judge was overwritten during the run",
        )
    return inputs


def baseline_outputs(problem: Problem, prepared: Prepared, returned) -> dict[str, cp.ndarray]:
    """What the baseline answered: the shared output buffers it wrote into, or, output by output, the arrays
    it returned instead (a library call without an out= variant), viewed in the stored dtype."""
    outs = prepared.outputs()
    if returned is None:
        return outs
    for name, array in by_output(problem, returned, "baseline()").items():
        stored = outs[name].dtype
        if array.size != outs[name].size or array.dtype.itemsize != stored.itemsize:
            raise ValueError(
                f"{problem.name}: baseline() returned {name!r} as {array.size} x {array.dtype}; "
                f"the output is {outs[name].size} x {stored}"
            )
        outs[name] = cp.ascontiguousarray(array).view(stored).reshape(outs[name].shape)
    return outs


def call_baseline(problem: Problem, prepared: Prepared, ctx: gpu.GpuContext, function=None):
    """The baseline (`function`, else the problem's) on this input set, writing into `baseline_target`. Returns
    what it returned (None, or arrays of its own)."""
    function = function or problem.module().baseline
    target = baseline_target(problem, prepared.outputs())
    return function(prepared.arrays(), target, prepared.sizes, problem.params, ctx)


def baseline_target(problem: Problem, outs: dict[str, cp.ndarray]):
    """What a baseline writes into: the output array itself for a one-output problem (as the GEMM baselines take
    it), else the dict of output arrays."""
    return outs[problem.output] if len(outs) == 1 else outs


def rehearse(problem: Problem, ctx: gpu.GpuContext, step=lambda name, locked=True: contextlib.nullcontext()) -> None:
    """Prepare, run the baseline and check once at the first test shape (compiles CuPy's kernels, loads the
    baseline's library). Each part runs inside `step(name)`: a spare holds the device lock per part
    (kernels/gpu.py), so that another child's timed rounds wait for one part, never for the whole rehearsal. PyTorch
    is imported and its CUDA state made first, outside the lock: two to three seconds of work on the host that,
    inside the baseline's part, held another child's timed rounds waiting (BENCHMARKS.md, "Issue 45")."""
    shape = problem.tests[0]
    if problem.library == "PyTorch":
        with step("PyTorch import", locked=False):
            from kernels.problems import torch_bridge

            torch_bridge.torch().cuda.init()
    with step("inputs"):
        prepared = prepare(problem, shape.sizes, [0, shape.seed])
    with step("baseline"):
        outs = baseline_outputs(problem, prepared, call_baseline(problem, prepared, ctx))
    with step("input checks"):
        input_faults(prepared)
    with step("reference"):
        expected = expected_after(prepared)
    with step("comparison"):
        compare_outputs(problem, outs, expected, shape.sizes, contract=False)


def warm_baseline(
    problem: Problem, ctx: gpu.GpuContext, step=lambda name, locked=True: contextlib.nullcontext()
) -> list[str]:
    """The chosen baseline's first call at each benchmark shape, for a problem whose library builds a plan per shape
    (`Problem.warm_baseline`): a spare that expects the problem makes it in its setup, one shape per locked part,
    beside another child's job, and its own job's untimed warm-up launch then finds the plan made. A shape whose
    way this process was not handed is left alone (choosing measures, alone on the device).

    Only the library's arrays are made (the problem's inputs and outputs, public seed): a plan depends on shapes,
    strides and types, not values, and the candidate's workspace (attention's 4-8 GiB of scores) would be held by
    every spare at once. A shape that fails (memory, the library) is skipped and named in the answer: the job's own
    warm-up launch makes its plan then, as before, and the spare stays usable."""
    skipped = []
    for shape in problem.benchmarks:
        way = ctx.baselines.known(problem, shape.sizes)
        if way is None:
            continue
        with step("baseline at the benchmark shapes"):
            arrays = None
            try:
                arrays = make_inputs(problem, shape.sizes, shape.seed, shape.seed)
                outs = {name: arrays[name] for name in problem.outputs}
                way.run(arrays, baseline_target(problem, outs), shape.sizes, problem.params, ctx)
                cp.cuda.Device().synchronize()
            except Exception as exc:  # an optimisation: never the reason a spare, and so every job, fails
                skipped.append(f"{label(shape.sizes)}: {type(exc).__name__}: {exc}"[:300])
            del arrays
            cp.get_default_memory_pool().free_all_blocks()
    return skipped


def check_shape(
    problem: Problem,
    shape: Shape,
    launches,
    kernels,
    seed: int,
    arch: str,
    sms: int = plan_mod.DEFAULT_SMS,
    offsets: dict[str, int] | None = None,
) -> ShapeCheck:
    """Fresh inputs (and tensor maps over them), the candidate, then (only then) the input checks and the
    reference. With `offsets`, every array sits at exactly the alignment the contract promises (a round of its
    own, with inputs of their own)."""
    sizes = shape.sizes
    prepared = prepare(problem, sizes, [seed, shape.seed, *([MISALIGNED_STREAM] if offsets else [])], offsets=offsets)
    resolved = [plan_mod.resolve(launch, sizes, arch, problem, sms) for launch in launches]
    build_tensor_maps(prepared, resolved)
    run_plan(resolved, kernels, prepared.args, prepared.tensor_maps)
    cp.cuda.Device().synchronize()
    where = label(sizes) + (f" ({placement(offsets)})" if offsets else "")
    fault = input_faults(prepared)
    if fault:
        return ShapeCheck(sizes, False, None, problem.tolerance(sizes), message=f"{where}: {fault}")
    check = compare_outputs(problem, prepared.outputs(), expected_after(prepared), sizes)
    if offsets:
        check.message = check.message.replace(label(sizes), where, 1)
    return check


def placement(offsets: dict[str, int]) -> str:
    """How the arrays of a misaligned round were placed: "arrays at 4-byte alignment", or by array."""
    values = set(offsets.values())
    if len(values) == 1:
        return f"arrays at {values.pop()}-byte alignment"
    each = ", ".join(f"{name} {offset} bytes" for name, offset in offsets.items() if offset)
    return f"arrays at their promised alignment: {each}"


def check_printed_output() -> None:
    """The kernels' printf lands in this child's stdout file (fd 1); past the limit the job fails."""
    printed = os.fstat(1).st_size
    if printed > PRINTED_OUTPUT_LIMIT_BYTES:
        raise JobFailed(
            Verdict.OUTPUT_LIMIT, f"the kernels printed {printed} bytes; the limit is {PRINTED_OUTPUT_LIMIT_BYTES}"
        )

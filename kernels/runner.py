"""The GPU job, run inside a sandboxed worker: load the cubin, check every test shape, then time.

Order of work (the first failure decides the verdict):
  1. load the module; read each kernel's registers / shared / local memory from the loaded function;
     refuse plans the loaded kernels cannot run (threads over the register-limited maximum, shared memory
     over the device's opt-in limit) and raise the dynamic shared memory attribute above 48 KB;
  2. correctness at every test shape: fresh random inputs, the output poisoned (NaN) or, when it is also an
     input, refilled with random values; each input fingerprinted on the host; the candidate launched; then
     the guard bands around every pointer argument must be untouched, the const inputs' fingerprints
     unchanged, and every output element must match a reference computed only now, after the candidate,
     from the inputs regenerated from the seed (kernels can write anywhere in the process's device memory,
     so nothing device-side that existed during the launch is trusted as a reference or an original);
  3. timing at each benchmark shape: each round draws a fresh input set and checks the candidate's timed
     output the same way (a replayed or skipped computation fails), flushes L2 before each timed launch,
     and times the candidate and the baseline back to back, alternating which goes first; checks and
     reference run outside the timed region.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cupy as cp
import numpy as np
from cupy.cuda import driver, runtime

from kernels import gpu, problems
from kernels import plan as plan_mod
from kernels.fingerprint import fingerprint
from kernels.problems import ELEMENT_TOLERANCE_FACTOR, Problem, Shape
from kernels.results import (
    BenchResult,
    JudgeResult,
    KernelResources,
    ResolvedLaunch,
    ShapeCheck,
    TimingStats,
    Verdict,
)

# Anything a kernel prints beyond this is a flood: printf from every thread of a grid, say.
PRINTED_OUTPUT_LIMIT_BYTES = 64 * 1024
GUARD_BYTES = 1 << 20  # per side; a tile written past a ragged edge of a 1000-wide matrix stays inside
GUARD_BYTE = 0xA5
PLAUSIBILITY_MARGIN_PCT = 5.0
_FINGERPRINT_STREAM = 1  # fingerprint keys come from a child stream of each input set's seed words

# cuFuncAttribute values (cuda.h).
_FUNC_MAX_THREADS = 0
_FUNC_SHARED = 1
_FUNC_CONST = 2
_FUNC_LOCAL = 3
_FUNC_NUM_REGS = 4
_FUNC_MAX_DYNAMIC_SHARED = 8
_DEFAULT_DYNAMIC_SHARED_BYTES = 48 * 1024

CUDA_ERRORS = (runtime.CUDARuntimeError, driver.CUDADriverError, cp.cuda.memory.OutOfMemoryError)


@dataclass
class JobOptions:
    seed: int
    bench: bool = True
    time_budget_s: float = 4.0  # per benchmark shape, for the timed rounds
    min_rounds: int = 10
    max_rounds: int = 100
    target_rel_std_err: float = 0.005


class JobFailed(Exception):
    def __init__(self, verdict: Verdict, message: str, error: str = ""):
        super().__init__(message)
        self.verdict, self.message, self.error = verdict, message, error


def judge_job(payload: dict[str, Any]) -> JudgeResult:
    """Entry point in the worker. payload: cubin, lowered_names, plan, problem, arch, kernels, options."""
    problem = problems.load(payload["problem"])
    options = JobOptions(**payload["options"])
    result = JudgeResult(verdict=Verdict.ACCEPTED, message="", problem=problem.name, seed=options.seed)
    stage = "loading the module"
    try:
        ctx = gpu.context()
        _check_arch(payload["arch"], ctx)
        launches = [
            plan_mod.Launch(d["kernel"], tuple(d["grid"]), tuple(d["block"]), d["shared_bytes"])
            for d in payload["plan"]
        ]
        kernels = _load(payload, problem, launches, ctx, result)
        stage = "the correctness checks"
        for shape in problem.tests:
            result.checks.append(check_shape(problem, shape, launches, kernels, options.seed, payload["arch"]))
            _check_printed_output()
        failed = [c for c in result.checks if not c.passed]
        if failed:
            raise JobFailed(
                Verdict.WRONG_ANSWER,
                f"wrong at {len(failed)} of {len(result.checks)} test shapes; first: {failed[0].message}",
            )
        if options.bench:
            stage = "the timed rounds"
            ceilings = ctx.ceilings(tensor_fp16=problem.compute_unit == "tensor_fp16")
            result.ceilings = ceilings
            for shape in problem.benchmarks:
                result.benchmarks.append(bench_shape(problem, shape, launches, kernels, options, payload["arch"], ctx))
            result.telemetry = gpu.telemetry(ctx)
        result.message = _summary(result)
    except JobFailed as failure:
        result.verdict, result.message, result.error = failure.verdict, failure.message, failure.error
    except plan_mod.PlanError as exc:
        result.verdict, result.message = Verdict.PLAN_ERROR, str(exc)
    except CUDA_ERRORS as exc:
        result.verdict, result.message, result.error = (
            Verdict.RUNTIME_ERROR,
            f"CUDA error during {stage}: {exc}",
            repr(exc),
        )
    return result


def _check_arch(arch: str, ctx: gpu.GpuContext) -> None:
    major, minor = divmod(int(arch[3:].rstrip("a")), 10)
    exact = arch.endswith("a")  # sm_90a code runs on compute capability 9.0 only
    runs = major == ctx.cc_major and (minor == ctx.cc_minor if exact else minor <= ctx.cc_minor)
    if not runs:
        raise JobFailed(
            Verdict.INTERNAL_ERROR, f"compiled for {arch}, but this GPU is compute capability {ctx.compute_capability}"
        )


# ---- loading ---------------------------------------------------------------------------------------


@dataclass
class LoadedKernel:
    function: cp.cuda.function.Function
    resources: KernelResources
    module: cp.cuda.function.Module  # the function is valid only while its module stays loaded


def _load(payload, problem: Problem, launches, ctx: gpu.GpuContext, result: JudgeResult) -> dict[str, LoadedKernel]:
    module = cp.cuda.function.Module()
    module.load(payload["cubin"])
    compiled = {k["name"]: KernelResources.from_dict(k) for k in payload.get("kernels", [])}
    kernels = {}
    for name, lowered in payload["lowered_names"].items():
        function = module.get_function(lowered)
        resources = compiled.get(name) or KernelResources(name, lowered)
        attr = lambda a: driver.funcGetAttribute(a, function.ptr)  # noqa: E731
        resources.registers = attr(_FUNC_NUM_REGS)
        resources.static_shared_bytes = attr(_FUNC_SHARED)
        resources.local_bytes = attr(_FUNC_LOCAL)
        resources.const_bytes = attr(_FUNC_CONST)
        resources.max_threads_per_block = attr(_FUNC_MAX_THREADS)
        kernels[name] = LoadedKernel(function, resources, module)
    result.kernels = [kernels[n].resources for n in payload["lowered_names"]]
    _fit_launches(problem, launches, kernels, ctx, payload["arch"])
    return kernels


def _fit_launches(problem: Problem, launches, kernels, ctx: gpu.GpuContext, arch: str) -> None:
    """Refuse what the loaded kernels cannot launch; raise the dynamic shared memory limit where needed."""
    dynamic_needed: dict[str, int] = {}
    for sizes in problem.all_shapes():
        for launch in launches:
            resolved = plan_mod.resolve(launch, sizes, arch)
            res = kernels[launch.kernel].resources
            threads = resolved.block[0] * resolved.block[1] * resolved.block[2]
            if threads > res.max_threads_per_block:
                raise plan_mod.PlanError(
                    f"{launch.kernel}: {threads} threads per block, but with {res.registers} registers per thread "
                    f"it can launch at most {res.max_threads_per_block}"
                )
            if res.static_shared_bytes + resolved.shared_bytes > ctx.max_shared_optin_bytes:
                raise plan_mod.PlanError(
                    f"{launch.kernel}: {res.static_shared_bytes} static + {resolved.shared_bytes} dynamic bytes of shared "
                    f"memory exceed this GPU's {ctx.max_shared_optin_bytes} per block"
                )
            dynamic_needed[launch.kernel] = max(dynamic_needed.get(launch.kernel, 0), resolved.shared_bytes)
    for name, needed in dynamic_needed.items():
        if needed > _DEFAULT_DYNAMIC_SHARED_BYTES - kernels[name].resources.static_shared_bytes:
            driver.funcSetAttribute(kernels[name].function.ptr, _FUNC_MAX_DYNAMIC_SHARED, needed)


# ---- buffers and launches ---------------------------------------------------------------------------
#
# Nothing the judge keeps in device memory while a submitted kernel runs can be trusted afterwards: the
# kernel runs in this process's CUDA context and can write anywhere in it. So the reference is computed
# only after the candidate has finished, from inputs regenerated from the seed, and the inputs it was
# given are checked against fingerprints held on the host (kernels/fingerprint.py), not against device
# copies. The guard bands stay: they name a sloppy out-of-bounds write precisely.


class Guarded:
    """Room for an array shaped like `like`, between two guard bands of known bytes: writes out of bounds
    show up there."""

    def __init__(self, like: cp.ndarray):
        body = (like.nbytes + 255) // 256 * 256  # keep the array 256-byte aligned, as cudaMalloc would
        self.base = cp.empty(GUARD_BYTES + body + GUARD_BYTES, dtype=cp.uint8)
        self.base.fill(GUARD_BYTE)
        self.array = self.base[GUARD_BYTES : GUARD_BYTES + like.nbytes].view(like.dtype).reshape(like.shape)
        self._tail = GUARD_BYTES + like.nbytes

    def guards_intact(self) -> bool:
        return not bool((self.base[:GUARD_BYTES] != GUARD_BYTE).any() or (self.base[self._tail :] != GUARD_BYTE).any())


@dataclass
class Prepared:
    """One input set laid out for launching. Device side: the guarded buffers only. Host side: what it
    takes to check them and to regenerate the set (seed, fingerprint key, fingerprints)."""

    problem: Problem
    sizes: dict[str, int]
    seed: int
    key: int  # fingerprint key, secret like the seed it is drawn from
    buffers: dict[str, Guarded]
    args: tuple
    fingerprints: dict[str, int]  # every input as launched: the const ones, and the output where it is read

    def generate(self) -> dict[str, cp.ndarray]:
        """The input set, drawn again from its seed (a fresh generator: no state survives a launch)."""
        return self.problem.module().make_inputs(self.sizes, cp.random.default_rng(self.seed), self.problem.params)

    def reset_output(self, inputs: dict[str, cp.ndarray] | None = None) -> None:
        """The output's starting value: the input's values where it is read (GEMM's C; regenerated unless
        given), else NaN poison."""
        out = self.buffers[self.problem.output].array
        if self.problem.output_is_input:
            out[...] = (inputs or self.generate())[self.problem.output]
        else:
            out.fill(np.nan)


def _const_inputs(problem: Problem) -> list[str]:
    return [a.name for a in problem.args if a.is_pointer and a.is_const]


def _read_inputs(problem: Problem) -> list[str]:
    return _const_inputs(problem) + ([problem.output] if problem.output_is_input else [])


def prepare(problem: Problem, sizes: dict[str, int], seed_words: list[int], reuse: Prepared | None = None) -> Prepared:
    """Draw an input set into the buffers, output reset, and fingerprint it. With `reuse`, refill its
    buffers in place: the timed rounds keep the same addresses from round to round, so a kernel that skips
    work when handed the same pointers is caught. No reference yet: see `expected_after`."""
    seed = int(np.random.SeedSequence(seed_words).generate_state(1)[0])
    key = int(np.random.SeedSequence(seed_words, spawn_key=(_FINGERPRINT_STREAM,)).generate_state(1, np.uint64)[0])
    inputs = problem.module().make_inputs(sizes, cp.random.default_rng(seed), problem.params)
    if reuse is not None:
        buffers, args = reuse.buffers, reuse.args
    else:
        buffers = {name: Guarded(array) for name, array in inputs.items()}
        args = tuple(_argument(spec, buffers, sizes) for spec in problem.args)
    prepared = Prepared(problem, sizes, seed, key, buffers, args, {})
    for name in _const_inputs(problem):
        buffers[name].array[...] = inputs[name]
    prepared.reset_output(inputs)
    prepared.fingerprints = {name: fingerprint(buffers[name].array, key) for name in _read_inputs(problem)}
    return prepared


def _argument(spec, buffers: dict[str, Guarded], sizes: dict[str, int]):
    if spec.is_pointer:
        return buffers[spec.name].array
    if spec.value is not None:
        return np.float32(spec.value) if spec.dtype == "float32" else np.int32(spec.value)
    return np.int32(sizes[spec.name])


def input_faults(prepared: Prepared) -> str:
    """After a launch: writes outside the arrays (guard bands changed) or into const inputs (fingerprint
    changed); empty when there were none."""
    spoiled = [n for n, b in prepared.buffers.items() if not b.guards_intact()]
    if spoiled:
        return f"wrote out of bounds, next to {', '.join(spoiled)}"
    changed = [
        n
        for n in _const_inputs(prepared.problem)
        if fingerprint(prepared.buffers[n].array, prepared.key) != prepared.fingerprints[n]
    ]
    if changed:
        return f"the kernel modified its input{'s' if len(changed) > 1 else ''} {', '.join(changed)} (declared const: it must come back unchanged)"
    return ""


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
    drifted = [n for n in _read_inputs(problem) if fingerprint(inputs[n], prepared.key) != prepared.fingerprints[n]]
    if drifted:
        # Generation is deterministic, so only a write into the judge's own device state (CuPy's random
        # generator, say) gets here; the worker is replaced after a runtime error.
        raise JobFailed(
            Verdict.RUNTIME_ERROR,
            f"inputs {', '.join(drifted)} regenerated from the seed differ from those launched: device memory "
            "of the judge was overwritten during the run",
        )
    return expected_of(problem, inputs, prepared.sizes)


def run_plan(resolved: list[ResolvedLaunch], kernels: dict[str, LoadedKernel], args: tuple) -> None:
    for launch in resolved:
        kernels[launch.kernel].function(launch.grid, launch.block, args, shared_mem=launch.shared_bytes)


def rehearse(problem: Problem, ctx: gpu.GpuContext) -> None:
    """Prepare, run the baseline and check once at the first test shape (compiles CuPy's kernels)."""
    shape = problem.tests[0]
    prepared = prepare(problem, shape.sizes, [0, shape.seed])
    out = prepared.buffers[problem.output].array
    problem.module().baseline(_arrays(prepared), out, shape.sizes, problem.params, ctx)
    input_faults(prepared)
    expected = expected_after(prepared)
    compare(out, expected, problem.tolerance(shape.sizes), shape.sizes)


# ---- correctness -----------------------------------------------------------------------------------


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
        return ShapeCheck(sizes, False, None, tol, message=f"{_label(sizes)}: {fault}")
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
    where = _label(check.sizes)
    if check.passed:
        return f"{where}: ok, rel_err {check.rel_err:.2e} <= {check.tolerance:.2e}"
    parts = []
    if check.nonfinite_count:
        parts.append(f"{check.nonfinite_count} elements NaN/Inf (never written?)")
    if check.bad_count:
        got = "NaN/Inf" if check.first_bad_value is None else f"{check.first_bad_value:.6g}"
        parts.append(
            f"{check.bad_count} elements wrong, first at {check.first_bad_index}: got {got}, expected {check.first_bad_expected:.6g}"
        )
    if check.rel_err > check.tolerance:
        parts.append(f"rel_err {check.rel_err:.2e} > tolerance {check.tolerance:.2e}")
    return f"{where}: " + "; ".join(parts)


def _label(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _check_printed_output() -> None:
    printed = os.fstat(1).st_size
    if printed > PRINTED_OUTPUT_LIMIT_BYTES:
        raise JobFailed(
            Verdict.OUTPUT_LIMIT, f"the kernels printed {printed} bytes; the limit is {PRINTED_OUTPUT_LIMIT_BYTES}"
        )


# ---- timing ----------------------------------------------------------------------------------------


def bench_shape(
    problem: Problem, shape: Shape, launches, kernels, options: JobOptions, arch: str, ctx: gpu.GpuContext
) -> BenchResult:
    sizes = shape.sizes
    resolved = [plan_mod.resolve(launch, sizes, arch) for launch in launches]
    tol = problem.tolerance(sizes)
    baseline = problem.module().baseline
    candidate_ms, baseline_ms, worst_rel_err = [], [], 0.0
    deadline = time.perf_counter() + options.time_budget_s
    round_no = -1  # round -1 warms up both sides (module first use, cuBLAS heuristics) and is not recorded
    prepared = None
    while True:
        prepared = prepare(problem, sizes, [options.seed, shape.seed, round_no + 1000], reuse=prepared)
        out = prepared.buffers[problem.output].array
        candidate = lambda: run_plan(resolved, kernels, prepared.args)  # noqa: E731
        vendor = lambda: baseline(_arrays(prepared), out, sizes, problem.params, ctx)  # noqa: E731
        sides = [(candidate, candidate_ms, "candidate"), (vendor, baseline_ms, "baseline")]
        candidate_first = round_no % 2 == 0
        outputs = {}  # the timed outputs to check, the candidate's first
        for position, (launch, samples, who) in enumerate(sides if candidate_first else sides[::-1]):
            if position:
                prepared.reset_output()  # the second side starts from the same output as the first
            elapsed_ms = _timed(launch, ctx)
            if round_no >= 0:
                samples.append(elapsed_ms)
            if who == "candidate" or candidate_first:
                outputs[who] = out.copy() if position == 0 else out
        # All checks come after both timed launches (so either side is preceded by the same light work),
        # and the reference only after the candidate's launch: no answer for this round's inputs exists in
        # device memory, live or freed, while the candidate runs. So where the baseline goes first, its
        # output is overwritten before the candidate's launch and goes unchecked in that round; it is
        # checked in every round where it goes second, the first timed round included.
        fault = input_faults(prepared)
        if fault:
            raise JobFailed(Verdict.WRONG_ANSWER, f"candidate in timed round {round_no + 1}: {fault}")
        expected = expected_after(prepared)
        for who, output in outputs.items():
            check = compare(output, expected, tol, sizes)
            if not check.passed:
                verdict = Verdict.WRONG_ANSWER if who == "candidate" else Verdict.INTERNAL_ERROR
                raise JobFailed(verdict, f"{who} output of timed round {round_no + 1} is wrong: {check.message}")
            if who == "candidate" and round_no >= 0:
                worst_rel_err = max(worst_rel_err, check.rel_err)
        _check_printed_output()
        round_no += 1
        if _enough(candidate_ms, baseline_ms, options, deadline):
            break
    return _bench_result(problem, sizes, candidate_ms, baseline_ms, worst_rel_err, ctx, options)


def _arrays(prepared: Prepared) -> dict[str, cp.ndarray]:
    return {name: buffer.array for name, buffer in prepared.buffers.items()}


def _timed(launch: Callable[[], None], ctx: gpu.GpuContext) -> float:
    """One launch between CUDA events, L2 flushed first; the stream's earlier work finishes before `start`.
    The stream is then held busy, so the host's cost of issuing `start` and the launch stays outside the
    timed region (as for a kernel in a stream of back-to-back launches)."""
    ctx.flush_l2()
    ctx.hold_stream()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    launch()
    end.record()
    end.synchronize()
    return cp.cuda.get_elapsed_time(start, end)


def _enough(candidate_ms: list[float], baseline_ms: list[float], options: JobOptions, deadline: float) -> bool:
    n = len(candidate_ms)
    if n >= options.max_rounds:
        return True
    if time.perf_counter() > deadline and n >= 3:
        return True
    return n >= options.min_rounds and max(_rse(candidate_ms), _rse(baseline_ms)) <= options.target_rel_std_err


def _rse(samples: list[float]) -> float:
    if len(samples) < 2:
        return float("inf")
    values = np.asarray(samples)
    return float(values.std(ddof=1) / np.sqrt(len(values)) / values.mean())


def stats(samples: list[float]) -> TimingStats:
    values = np.asarray(samples)
    q25, median, q75 = np.percentile(values, [25, 50, 75])
    return TimingStats(
        len(values), float(median), float(q25), float(q75), float(values.min()), float(values.mean()), _rse(samples)
    )


def _bench_result(
    problem: Problem, sizes, candidate_ms, baseline_ms, worst_rel_err, ctx: gpu.GpuContext, options: JobOptions
) -> BenchResult:
    cand, base = stats(candidate_ms), stats(baseline_ms)
    flops, nbytes = problem.flops(sizes), problem.bytes_moved(sizes)
    ceilings = ctx.ceilings(tensor_fp16=problem.compute_unit == "tensor_fp16")
    compute_tflops = ceilings.tensor_fp16_tflops if problem.compute_unit == "tensor_fp16" else ceilings.fp32_tflops
    roofline = min(compute_tflops, flops / nbytes * ceilings.copy_gbps / 1e3)
    tflops = flops / (cand.median_ms * 1e-3) / 1e12
    result = BenchResult(
        sizes=sizes,
        candidate=cand,
        baseline=base,
        baseline_name=problem.baseline_name,
        pct_of_baseline=100 * base.median_ms / cand.median_ms,
        tflops=tflops,
        gbps=nbytes / (cand.median_ms * 1e-3) / 1e9,
        baseline_tflops=flops / (base.median_ms * 1e-3) / 1e12,
        roofline_tflops=roofline,
        pct_of_roofline=100 * tflops / roofline,
        rounds_checked=cand.samples + 1,
        max_rel_err=worst_rel_err,
        flops=flops,
        bytes_moved=nbytes,
    )
    if problem.flag_faster_than_baseline and result.pct_of_baseline > 100 + PLAUSIBILITY_MARGIN_PCT:
        result.flags.append(
            f"faster than {problem.baseline_name} ({result.pct_of_baseline:.1f}%): review before trusting"
        )
    if result.pct_of_roofline > 100 + PLAUSIBILITY_MARGIN_PCT:
        result.flags.append(f"above the measured roofline ({result.pct_of_roofline:.1f}%): review before trusting")
    if max(cand.rel_std_err, base.rel_std_err) > 2 * options.target_rel_std_err:
        result.flags.append(
            f"noisy: relative standard error {100 * max(cand.rel_std_err, base.rel_std_err):.2f}% after {cand.samples} rounds"
        )
    return result


def _summary(result: JudgeResult) -> str:
    text = f"correct at all {len(result.checks)} test shapes"
    for bench in result.benchmarks:
        text += (
            f"; {_label(bench.sizes)}: {bench.candidate.median_ms:.3f} ms, {bench.tflops:.2f} TFLOP/s, "
            f"{bench.pct_of_baseline:.1f}% of baseline"
        )
    return text

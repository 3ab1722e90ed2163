"""Timing for the GPU job: the candidate and the baseline, interleaved, round after round at one shape.

Each round draws a fresh input set into the same buffers, times the candidate and the baseline back to
back (alternating which goes first, L2 flushed before each, CUDA events), and then checks every timed
candidate output the way the correctness stage does, so a replayed or skipped computation fails. The
checks and the reference run outside the timed region, and only after both timed launches. The baseline
writes into the output buffers or returns arrays of its own (a library call without an out= variant); either
way what it answered is what gets checked, so no extra copy is timed on its side.

The candidate's rounds stop once its own median is pinned (kernels/samples.py `enough_rounds`); the baseline's
median, where its rounds have not pinned it yet, is pinned by launches of its own on the last round's inputs
(`_pin_baseline`): a library call of 0.1 ms beside a 100 ms starter costs nothing to time again, where one more
checked round of the starter costs a launch, an input set and a reference.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import cupy as cp
from cupy.cuda import runtime

from kernels import gpu
from kernels import plan as plan_mod
from kernels.baselines import Choice
from kernels.checks import (
    JobFailed,
    baseline_outputs,
    call_baseline,
    check_printed_output,
    compare_outputs,
    expected_after,
)
from kernels.inputs import Prepared, build_tensor_maps, input_faults, prepare, run_plan
from kernels.problems import Problem, Shape, poison_value
from kernels.results import BenchResult, ResolvedLaunch, Verdict
from kernels.samples import baseline_needs_more, enough_rounds, timing_stats

if TYPE_CHECKING:
    from kernels.payloads import JobOptions

PLAUSIBILITY_MARGIN_PCT = 5.0
WARM_UP_ROUND = -1  # the warm-up's input set: the baseline's untimed first launch at the shape
_ROUND_SEED_OFFSET = 1000  # SeedSequence takes no negative words, and the warm-up round is -1


@dataclass
class _Bench:
    """What stays the same through the rounds at one benchmark shape."""

    problem: Problem
    shape: Shape
    resolved: list[ResolvedLaunch]
    kernels: dict
    baseline: Callable
    choice: Choice  # which of the library's ways `baseline` is, and what each way measured
    options: JobOptions
    ctx: gpu.GpuContext

    @property
    def sizes(self) -> dict[str, int]:
        return self.shape.sizes


@dataclass
class _Samples:
    """What the recorded rounds measured: each side's times, the candidate's worst rel_err, and where the rounds'
    time went (milliseconds added by part: inputs, warm_up (the baseline's untimed first launch), launches, checks,
    baseline_alone; the job's dict, summed over its shapes)."""

    candidate_ms: list[float] = field(default_factory=list)
    baseline_ms: list[float] = field(default_factory=list)
    worst_rel_err: float = 0.0
    parts_ms: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def part(self, name: str):
        """Adds the part's time, the GPU work it queued included (synchronised at its end)."""
        begin = time.perf_counter()
        yield
        runtime.deviceSynchronize()
        self.parts_ms[name] = self.parts_ms.get(name, 0.0) + (time.perf_counter() - begin) * 1e3


def bench_shape(
    problem: Problem,
    shape: Shape,
    launches,
    kernels,
    options: JobOptions,
    arch: str,
    ctx: gpu.GpuContext,
    parts_ms: dict[str, float] | None = None,
) -> BenchResult:
    """Time the candidate against the baseline at one benchmark shape, checking every timed output. Where the
    rounds' time went is added to `parts_ms` (by part, milliseconds)."""
    bench = _setup(problem, shape, launches, kernels, options, arch, ctx, ctx.sm_count)
    samples = _Samples(parts_ms=parts_ms if parts_ms is not None else {})
    deadline = time.perf_counter() + options.time_budget_s  # the warm-up round counts against the budget
    prepared = _warm_up(bench, samples)
    round_no = 0
    while not _enough(samples, options, deadline):
        prepared = _round(bench, round_no, prepared, samples)
        round_no += 1
    _pin_baseline(bench, prepared, samples, deadline)
    return _bench_result(bench, samples)


def _setup(
    problem: Problem, shape: Shape, launches, kernels, options: JobOptions, arch: str, ctx: gpu.GpuContext, sms: int
) -> _Bench:
    """Resolve the plan at this shape and look up the baseline once, before any round."""
    resolved = [plan_mod.resolve(launch, shape.sizes, arch, problem, sms) for launch in launches]
    way, choice = ctx.baselines.get(problem, shape.sizes, shape.seed, ctx)
    return _Bench(problem, shape, resolved, kernels, way.run, choice, options, ctx)


def _warm_up(bench: _Bench, samples: _Samples) -> Prepared:
    """An input set and one untimed launch of the baseline: it pays for the baseline's first use at this shape
    (cuBLAS heuristics, a library's plan, CuPy's kernel compilation) and allocates the buffers that the timed rounds
    then refill in place. The candidate has none to pay: its module was loaded and each of its kernels launched at
    the test shapes, and at a slow starter's 100 ms a launch an untimed round of its own was a tenth of the job. The
    first timed round draws inputs of its own, so the baseline's answer to these is worth nothing to it."""
    with samples.part("inputs"):
        prepared = _input_set(bench, WARM_UP_ROUND, None)
    with samples.part("warm_up"):  # apart from the rounds' launches: a library's first call at a shape can be long
        call_baseline(bench.problem, prepared, bench.ctx, bench.baseline)
    return prepared


def _round(bench: _Bench, round_no: int, previous: Prepared, samples: _Samples) -> Prepared:
    """A fresh input set, both sides timed back to back, every timed output checked, printed output capped."""
    with samples.part("inputs"):
        prepared = _input_set(bench, round_no, previous)
    with samples.part("launches"):
        outputs = _interleaved(bench, prepared, round_no, samples)
    with samples.part("checks"):
        _check_outputs(bench, prepared, outputs, round_no, samples)
        check_printed_output()
    return prepared


def _pin_baseline(bench: _Bench, prepared: Prepared, samples: _Samples, deadline: float) -> None:
    """Launches of the baseline alone on the last round's inputs, each timed as in the rounds (L2 flushed before
    it), until its median is pinned (`samples.baseline_needs_more`), within the shape's time budget or a quarter
    of it past the rounds, whichever ends later. Its answers need no check here (it answered right in the rounds)
    and may stay in device memory: the candidate does not run at this shape again."""
    options = bench.options
    until = max(deadline, time.perf_counter() + options.time_budget_s / 4)
    returned: dict = {}
    _, baseline = _sides(bench, prepared, returned)
    with samples.part("baseline_alone"):
        while baseline_needs_more(
            samples.baseline_ms,
            min_rounds=options.min_rounds,
            max_rounds=options.max_rounds,
            target_rel_std_err=options.target_rel_std_err,
            past_budget=time.perf_counter() > until,
        ):
            samples.baseline_ms.append(bench.ctx.time_ms(baseline))
            returned.clear()


def _input_set(bench: _Bench, round_no: int, previous: Prepared | None) -> Prepared:
    """Each round's inputs are drawn from a seed of their own, so an answer cached from an earlier round
    fails the check; they go into the previous round's buffers, so a kernel handed the same pointers
    every round and skipping work for them is caught too."""
    seed_words = [bench.options.seed, bench.shape.seed, round_no + _ROUND_SEED_OFFSET]
    prepared = prepare(bench.problem, bench.sizes, seed_words, reuse=previous)
    build_tensor_maps(prepared, bench.resolved)  # outside the timed region, for this set's buffers
    return prepared


def _sides(bench: _Bench, prepared: Prepared, returned: dict) -> tuple[Callable[[], None], Callable[[], None]]:
    """The candidate's and the baseline's launch of this input set, each writing the same output buffers (or
    the baseline returning arrays of its own, kept in `returned`). Both read their arguments when called:
    after `start` is recorded, while the held stream hides that host work."""

    def candidate() -> None:
        run_plan(bench.resolved, bench.kernels, prepared.args, prepared.tensor_maps)

    def baseline() -> None:
        returned["baseline"] = call_baseline(bench.problem, prepared, bench.ctx, bench.baseline)

    return candidate, baseline


def _candidate_first(round_no: int) -> bool:
    """Alternate which side goes first, so that whatever running second costs or gains (the state the
    other side leaves behind) falls on both alike: round 0 puts the candidate first."""
    return round_no % 2 == 0


def _interleaved(
    bench: _Bench, prepared: Prepared, round_no: int, samples: _Samples
) -> dict[str, dict[str, cp.ndarray]]:
    """Time both sides once, in this round's order, and return the timed outputs to check, by side (the
    candidate's first), each a dict by output name. The second side starts from the same outputs as the
    first. The first side's outputs are copied aside before the second overwrites them, except the
    baseline's when it goes first: no answer for this round's inputs may exist in device memory while the
    candidate runs, so they are poisoned (its own arrays included) before the candidate starts."""
    returned: dict = {}
    candidate, baseline = _sides(bench, prepared, returned)
    candidate_first = _candidate_first(round_no)
    order = [(candidate, samples.candidate_ms, "candidate"), (baseline, samples.baseline_ms, "baseline")]
    if not candidate_first:
        order.reverse()
    outputs = {}
    for position, (launch, times_ms, who) in enumerate(order):
        if position:
            prepared.reset_outputs()
        times_ms.append(bench.ctx.time_ms(launch))
        own_arrays = who == "baseline" and returned.get("baseline") is not None
        if who == "candidate":
            outs = prepared.outputs()
        else:
            outs = baseline_outputs(bench.problem, prepared, returned.pop("baseline"))
        if who == "candidate" or candidate_first:
            outputs[who] = {name: array.copy() for name, array in outs.items()} if position == 0 else outs
        elif own_arrays:  # the baseline went first with arrays of its own (the shared buffers are reset anyway)
            _poison(bench.problem, outs)
        if who == "baseline" and not candidate_first:
            del outs
            _scrub_torch_cache()
    return outputs


def _poison(problem: Problem, outs: dict[str, cp.ndarray]) -> None:
    for name, array in outs.items():
        array.fill(poison_value(problem.arg(name).dtype))


def _scrub_torch_cache() -> None:
    """Zero the device memory PyTorch's caching allocator holds free, after a PyTorch baseline went first:
    freed blocks stay mapped with their contents, and a baseline's intermediates can be nearly the answer
    (RMSNorm's FP32 values before the cast to BF16, the quantiser's FP32 quotients), which must not exist
    while the candidate runs. Outside the timed region; nothing to do where torch is not in use."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return
    stream = cp.cuda.get_current_stream().ptr
    for segment in torch.cuda.memory_snapshot():
        address = segment["address"]
        for block in segment["blocks"]:  # in address order, covering the segment
            if block["state"] == "inactive":
                runtime.memsetAsync(address, 0, block["size"], stream)
            address += block["size"]


def _check_outputs(
    bench: _Bench, prepared: Prepared, outputs: dict[str, dict[str, cp.ndarray]], round_no: int, samples: _Samples
) -> None:
    """The same checks as at the test shapes, on every timed output, after both timed launches (so either
    side is preceded by the same light work) and with the reference computed only now. Where the
    baseline went first its outputs went unchecked; they are checked in every round where it goes second,
    the first timed round included. A wrong baseline is the judge's fault, not the reader's."""
    _check_inputs(prepared, round_no)
    expected = expected_after(prepared)
    for who, outs in outputs.items():
        check = compare_outputs(bench.problem, outs, expected, bench.sizes, contract=who == "candidate")
        if not check.passed:
            verdict = Verdict.WRONG_ANSWER if who == "candidate" else Verdict.INTERNAL_ERROR
            raise JobFailed(verdict, f"{who} output of timed round {round_no + 1} is wrong: {check.message}")
        if who == "candidate":
            samples.worst_rel_err = max(samples.worst_rel_err, check.rel_err)


def _check_inputs(prepared: Prepared, round_no: int) -> None:
    fault = input_faults(prepared)
    if fault:
        raise JobFailed(Verdict.WRONG_ANSWER, f"candidate in timed round {round_no + 1}: {fault}")


def _enough(samples: _Samples, options: JobOptions, deadline: float) -> bool:
    return enough_rounds(
        samples.candidate_ms,
        min_rounds=options.min_rounds,
        max_rounds=options.max_rounds,
        target_rel_std_err=options.target_rel_std_err,
        past_budget=time.perf_counter() > deadline,
    )


def _bench_result(bench: _Bench, samples: _Samples) -> BenchResult:
    problem, sizes, ctx, options = bench.problem, bench.sizes, bench.ctx, bench.options
    cand, base = timing_stats(samples.candidate_ms), timing_stats(samples.baseline_ms)
    flops, nbytes = problem.flops(sizes), problem.bytes_moved(sizes)
    ceilings = ctx.ceilings_for(problem.compute_unit)
    tflops = flops / (cand.median_ms * 1e-3) / 1e12
    gbps = nbytes / (cand.median_ms * 1e-3) / 1e9
    bandwidth_bound_tflops = flops / nbytes * ceilings.copy_gbps / 1e3
    if problem.is_memory_bound:
        # Bytes over the measured copy bandwidth alone: the fewest bytes the problem must move, at the best
        # rate this GPU's memory was seen to move them.
        roofline_gbps = ceilings.copy_gbps
        roofline_tflops = bandwidth_bound_tflops
        pct_of_roofline = 100 * gbps / roofline_gbps
    else:
        roofline_gbps = None
        compute_tflops = {
            "tensor_fp16": ceilings.tensor_fp16_tflops,
            "tensor_bf16": ceilings.tensor_bf16_tflops,
        }.get(problem.compute_unit, ceilings.fp32_tflops)
        roofline_tflops = min(compute_tflops, bandwidth_bound_tflops)
        pct_of_roofline = 100 * tflops / roofline_tflops
    result = BenchResult(
        sizes=sizes,
        candidate=cand,
        baseline=base,
        baseline_name=bench.choice.name,
        baseline_tried_ms=bench.choice.tried_ms,
        pct_of_baseline=100 * base.median_ms / cand.median_ms,
        tflops=tflops,
        gbps=gbps,
        baseline_tflops=flops / (base.median_ms * 1e-3) / 1e12,
        roofline_tflops=roofline_tflops,
        pct_of_roofline=pct_of_roofline,
        rounds_checked=cand.samples,
        max_rel_err=samples.worst_rel_err,
        flops=flops,
        bytes_moved=nbytes,
        unit=problem.unit,
        baseline_gbps=nbytes / (base.median_ms * 1e-3) / 1e9,
        roofline_gbps=roofline_gbps,
    )
    if problem.flag_faster_than_baseline and result.pct_of_baseline > 100 + PLAUSIBILITY_MARGIN_PCT:
        result.flags.append(
            f"faster than {result.baseline_name} ({result.pct_of_baseline:.1f}%): review before trusting"
        )
    if result.pct_of_roofline > 100 + PLAUSIBILITY_MARGIN_PCT:
        result.flags.append(f"above the measured roofline ({result.pct_of_roofline:.1f}%): review before trusting")
    worst = max(cand.median_rel_std_err, base.median_rel_std_err)
    if worst > 2 * options.target_rel_std_err:
        result.flags.append(
            f"noisy: the median's relative standard error {100 * worst:.2f}% after {cand.samples} rounds"
        )
    return result

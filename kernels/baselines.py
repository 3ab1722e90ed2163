"""The baseline is the fastest of the library's ways to do the problem on this GPU, chosen per benchmark shape.

A reader's "% of cuBLAS" must mean the best the library does on that GPU: cuBLAS's GemmEx runs one algorithm
of its own choosing, cuBLASLt's heuristic offers several (one of which PyTorch runs), and SDPA has three
backends whose order differs by shape. A problem's reference.py lists its ways in `baseline_candidates(sizes)`
(name and a function with `baseline`'s signature); a problem without the list has one way, its `baseline`.

`choose` runs every way on the judge's own input set for the shape: each is checked once against the reference
(a way that breaks the contract is dropped, with its reason), then all are timed exactly as the timed rounds time
the baseline (L2 flushed, stream held, CUDA events; `GpuContext.time_ms`), round-robin for ROUNDS rounds with the
order rotating, and the lowest median wins. The worker's child that measures the ceilings chooses, in its setup
(alone on the GPU, before any submission ran in that process), for every problem's benchmark shapes not yet
chosen on this device identity; the parent keeps the choices and hands them to every later child
(kernels/ceilings.py), past the ceilings' age, so every job of a worker compares with the same call and the
choosing is paid once per worker. A process without handed choices (the CLI, a cold worker) chooses on first
use, for its own job only. The result records the winner's name and every way's
median (`BenchResult.baseline_name`, `baseline_tried_ms`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kernels.problems import Problem

ROUNDS = 9  # each way's median of 9 flushed launches; ways within a few percent are all fine to keep


@dataclass(frozen=True)
class Candidate:
    name: str
    run: Callable[..., Any]  # (inputs, out, sizes, params, ctx), as a reference.py's `baseline`


@dataclass
class Choice:
    name: str
    tried_ms: dict[str, float] = field(default_factory=dict)  # each way that passed: its median
    dropped: dict[str, str] = field(default_factory=dict)  # each way that failed: why

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tried_ms": self.tried_ms, "dropped": self.dropped}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Choice:
        return cls(data["name"], dict(data.get("tried_ms") or {}), dict(data.get("dropped") or {}))


def candidates(problem: Problem, sizes: dict[str, int]) -> list[Candidate]:
    listed = getattr(problem.module(), "baseline_candidates", None)
    if listed is None:
        return [Candidate(problem.baseline_name, problem.module().baseline)]
    return listed(sizes)


def key(problem: Problem, sizes: dict[str, int]) -> str:
    return problem.name + ":" + ",".join(f"{name}={sizes[name]}" for name in sorted(sizes))


def fastest(medians: dict[str, float]) -> str:
    """The way with the lowest median (the first listed on a tie)."""
    return min(medians, key=lambda name: medians[name])


def choose(problem: Problem, sizes: dict[str, int], seed: int, ctx) -> Choice:
    """Check, then time, every way at this shape on one input set; see the module's docstring."""
    ways = candidates(problem, sizes)
    if len(ways) == 1:
        return Choice(ways[0].name)
    prepared, passing, dropped = checked_ways(problem, sizes, seed, ctx, ways)
    medians = {name: statistics.median(samples) for name, samples in time_ways(prepared, passing, ROUNDS, ctx).items()}
    return Choice(fastest(medians), medians, dropped)


def checked_ways(problem: Problem, sizes: dict[str, int], seed: int, ctx, ways: list[Candidate]):
    """The judge's input set for this shape, the ways whose answer passes the check on it (as a baseline's must
    in every timed round), and why each other way was dropped."""
    from kernels.checks import JobFailed, baseline_outputs, call_baseline, compare_outputs, expected_after
    from kernels.inputs import prepare

    prepared = prepare(problem, sizes, [seed, 0])
    passing, dropped, expected = [], {}, None
    for way in ways:
        prepared.reset_outputs()
        try:
            outs = baseline_outputs(problem, prepared, call_baseline(problem, prepared, ctx, way.run))
            # Library ways are trusted code: one reference serves them all (attention's at seq 16384 is the
            # costliest part of choosing).
            expected = expected or expected_after(prepared)
            check = compare_outputs(problem, outs, expected, sizes, contract=False)
        except (RuntimeError, ImportError, JobFailed) as exc:  # a library refusing the shape, or missing
            dropped[way.name] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        if check.passed:
            passing.append(way)
        else:
            dropped[way.name] = check.message[:300]
    if not passing:
        raise RuntimeError(f"{problem.name}: no library way passed at {sizes}: {dropped}")
    return prepared, passing, dropped


def time_ways(prepared, ways: list[Candidate], rounds: int, ctx) -> dict[str, list[float]]:
    """Each way timed as the timed rounds time the baseline, round-robin with the order rotating, after one
    round that is not kept (first use: autotuning, workspace). Returns each way's times."""
    from kernels.checks import call_baseline

    times: dict[str, list[float]] = {way.name: [] for way in ways}
    for round_no in range(rounds + 1):
        rotation = round_no % len(ways)
        for way in ways[rotation:] + ways[:rotation]:
            prepared.reset_outputs()
            elapsed = ctx.time_ms(lambda way=way: call_baseline(prepared.problem, prepared, ctx, way.run))
            if round_no:
                times[way.name].append(elapsed)
    return times


class Chosen:
    """The choices a process knows: handed by the setup payload, or made here on first use."""

    def __init__(self) -> None:
        self.choices: dict[str, Choice] = {}

    def keep(self, handed: dict[str, dict] | None) -> None:
        for name, data in (handed or {}).items():
            self.choices[name] = Choice.from_dict(data)

    def to_dict(self) -> dict[str, dict]:
        return {name: choice.to_dict() for name, choice in self.choices.items()}

    def choose_all(self, problems: list[Problem], ctx) -> None:
        """Every benchmark shape of every problem with more than one way (the measuring setup). A problem none of
        whose ways runs here (PyTorch missing on a node) is left unchosen, so that it fails its own jobs (as an
        internal error, naming the cause), not the worker's start."""
        for problem in problems:
            for shape in problem.benchmarks:
                try:
                    self.get(problem, shape.sizes, shape.seed, ctx)
                except (RuntimeError, ImportError):
                    break

    def known(self, problem: Problem, sizes: dict[str, int]) -> Candidate | None:
        """The way chosen at this shape if this process was handed it or chose it already; None: not chosen here
        (choosing measures, alone on the device: never in passing)."""
        choice = self.choices.get(key(problem, sizes))
        ways = {way.name: way for way in candidates(problem, sizes)} if choice else {}
        return ways.get(choice.name) if choice else None

    def get(self, problem: Problem, sizes: dict[str, int], seed: int, ctx) -> tuple[Candidate, Choice]:
        """The way to time at this shape, and the choice that named it."""
        name = key(problem, sizes)
        ways = {way.name: way for way in candidates(problem, sizes)}
        choice = self.choices.get(name)
        if choice is None or choice.name not in ways:  # not handed on, or a name this version no longer has
            choice = self.choices[name] = choose(problem, sizes, seed, ctx)
        return ways[choice.name], choice

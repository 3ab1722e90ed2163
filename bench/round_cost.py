"""Where a checked timed round's own work goes, part by part, at each benchmark shape (issue 45).

    python3 bench/round_cost.py [--problem paged_decode,attention] [--rounds 5]

A timed round is an input set, two timed launches, and the checks of the candidate's outputs (kernels/timing.py).
The launches are the kernels' own; the rest is the judge's, and it is what makes a round of a fast kernel cost tens
of milliseconds. This times that rest in one process (no sandbox, no device lock: nothing else runs), each part
between device synchronisations, the median of `--rounds` input sets per shape:

    draw       the problem's make_inputs alone (the random draws and their conversions)
    prepare    a whole input set into the reused buffers: draw, copy, outputs reset, workspaces refilled, fingerprints
    fingerprint  the fingerprints of the read inputs, once
    faults     inputs.input_faults: guard bands and fingerprints after a launch
    after      checks.inputs_after: the inputs for the reference, fingerprints matched again
    reference  checks.expected_of: the reference (and element scales, magnitudes) from them
    compare    compare.compare_outputs of the baseline's answer against it

Needs a GPU (and PyTorch for the PyTorch baselines).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable


def _timed(part: Callable[..., object], *args, **kwargs) -> tuple[object, float]:
    from cupy.cuda import runtime

    runtime.deviceSynchronize()
    begin = time.perf_counter()
    value = part(*args, **kwargs)
    runtime.deviceSynchronize()
    return value, (time.perf_counter() - begin) * 1e3


def shape_costs(problem, shape, rounds: int, ctx) -> dict[str, float]:
    """Median milliseconds of each part over `rounds` input sets at one benchmark shape."""
    from kernels import inputs

    prepared = inputs.prepare(problem, shape.sizes, [1, shape.seed, 0])
    times: dict[str, list[float]] = {}
    for round_no in range(1, rounds + 1):
        prepared, parts = _one_round(problem, shape, [1, shape.seed, round_no], prepared, ctx)
        for name, ms in parts.items():
            times.setdefault(name, []).append(ms)
    return {name: statistics.median(ms) for name, ms in times.items()}


def _one_round(problem, shape, seed_words: list[int], previous, ctx):
    """One input set into `previous`'s buffers, the baseline's answer, then each checking part timed."""
    from kernels import inputs
    from kernels.checks import baseline_outputs, call_baseline, expected_of, inputs_after
    from kernels.compare import compare_outputs
    from kernels.fingerprint import fingerprint

    sizes, parts = shape.sizes, {}
    _, parts["draw"] = _timed(inputs.make_inputs, problem, sizes, previous.seed, previous.layout_seed)
    prepared, parts["prepare"] = _timed(inputs.prepare, problem, sizes, seed_words, reuse=previous)
    arrays = [prepared.buffers[name].array for name in inputs.read_inputs(problem)]
    _, parts["fingerprint"] = _timed(lambda: [fingerprint(array, prepared.key) for array in arrays])
    outs = baseline_outputs(problem, prepared, call_baseline(problem, prepared, ctx))
    _, parts["faults"] = _timed(inputs.input_faults, prepared)
    given, parts["after"] = _timed(inputs_after, prepared)
    expected, parts["reference"] = _timed(expected_of, problem, given, sizes)
    _, parts["compare"] = _timed(compare_outputs, problem, outs, expected, sizes, contract=False)
    return prepared, parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="paged_decode,attention", help="comma-separated, or all")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from kernels import gpu, problems

    ctx = gpu.context()
    names = problems.available() if args.problem == "all" else args.problem.split(",")
    parts = ("draw", "prepare", "fingerprint", "faults", "after", "reference", "compare")
    print(f"| problem | shape | {' | '.join(parts)} |  (median ms of {args.rounds} input sets)")
    print("| --- | --- |" + " --- |" * len(parts))
    for name in names:
        problem = problems.load(name)
        for shape in problem.benchmarks:
            costs = shape_costs(problem, shape, args.rounds, ctx)
            label = " x ".join(f"{k}={v}" for k, v in shape.sizes.items())
            print(f"| {name} | {label} | " + " | ".join(f"{costs[p]:.1f}" for p in parts) + " |", flush=True)


if __name__ == "__main__":
    main()

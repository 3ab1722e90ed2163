"""How steady each library way of a baseline is: every way at every benchmark shape, timed the judge's way.

    PYTHONPATH=. python3 bench/baseline_steady.py [--problems attention,bf16_gemm] [--rounds 30] [--hold-us 300,3000]

For each problem with several library ways (kernels/baselines.py) and each benchmark shape: the judge's own input
set, each way checked once, then `rounds` rounds in which every way runs once (order rotating), each launch timed
by `GpuContext.time_ms` (L2 flushed, stream held, CUDA events). Printed per way: median, quartiles, min and max,
for each stream-hold length asked for (a longer hold shows whether host-side work of the library leaks into the
timed region). Run it twice, in two processes, to see whether the medians agree from one process to the next.
GPU only.
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="sgemm,hgemm,bf16_gemm,attention")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--hold-us", default="300", help="stream-hold lengths to try, microseconds")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    from kernels import baselines, gpu, problems

    ctx = gpu.context()
    figures = []
    for name in args.problems.split(","):
        problem = problems.load(name)
        for shape in problem.benchmarks:
            ways = baselines.candidates(problem, shape.sizes)
            prepared, passing, dropped = baselines.checked_ways(problem, shape.sizes, shape.seed, ctx, ways)
            for way_name, why in dropped.items():
                print(f"  {way_name}: dropped: {why[:150]}")
            for hold_us in [int(h) for h in args.hold_us.split(",")]:
                gpu.HOLD_BEFORE_TIMING_NS = hold_us * 1000
                times = baselines.time_ways(prepared, passing, args.rounds, ctx)
                label = "x".join(str(v) for v in shape.sizes.values())
                print(f"{name} {label} hold {hold_us} us:")
                for way_name, samples in sorted(times.items(), key=lambda kv: np.median(kv[1])):
                    q = np.percentile(samples, [0, 25, 50, 75, 100])
                    print(
                        f"  {q[2]:9.4f} ms  IQR {q[1]:.4f}-{q[3]:.4f}  min {q[0]:.4f} max {q[4]:.4f}  {way_name}",
                        flush=True,
                    )
                    figures.append(
                        {"problem": name, "sizes": shape.sizes, "hold_us": hold_us, "way": way_name, "samples": samples}
                    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out)


if __name__ == "__main__":
    main()

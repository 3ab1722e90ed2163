"""Where a spare's setup time goes, and what its GPU work would do to a timed launch beside it (issue 30).

    python3 bench/setup_cost.py [--problem sgemm] [--profile 25] [--disturb-s 20]

1. parts: a fresh spawned child (as the pool's spares are) makes its context step by step and rehearses the
   problem part by part with nothing beside it, each part's wall time printed; then another fresh child does
   the same under cProfile, and the functions with the most cumulative time are printed.
2. generators: seeding cupy.random.default_rng (XORWOW: 256,000 states, each set by curand_init with its own
   subsequence) against Philox4x3210 (counter-based), and drawing the problem's first test shape and its first
   benchmark shape's inputs with each: host wall and GPU time, medians of 10.
3. disturbance: this process times a short kernel back to back (L2 flushed, as GpuContext.time_ms does but with
   no lock) while fresh children beside it, one after another, make their context, or make it and rehearse,
   each reporting when its GPU phase began and ended. Launches are classed by what overlapped them: quiet (no
   child in its GPU phase), context, rehearsal; median, p99 and max per class, so that what the device lock
   keeps out is measured, not assumed.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import multiprocessing
import pstats
import statistics
import time


def context_parts() -> dict[str, float]:
    """The steps of gpu._make_context one by one, with the CUDA context's creation on its own."""
    import cupy as cp
    from cupy.cuda import runtime
    from cupy_backends.cuda.libs import cublas

    parts, last = {}, time.perf_counter()

    def lap(name: str) -> None:
        nonlocal last
        now = time.perf_counter()
        parts[name] = (now - last) * 1e3
        last = now

    runtime.free(0)  # makes the primary context
    lap("CUDA context")
    runtime.deviceSetLimit(0x01, 64 * 1024)
    lap("printf FIFO limit")
    handle = cublas.create()
    cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
    lap("cuBLAS handle")
    l2 = runtime.getDeviceProperties(runtime.getDevice())["l2CacheSize"]
    cp.empty(max(2 * l2, 64 << 20), dtype=cp.uint8)
    lap("flush buffer")
    return parts


def child_parts(problem_name: str, queue) -> None:
    began = time.perf_counter()
    import cupy  # noqa: F401

    from kernels import checks, gpu, problems

    imported = (time.perf_counter() - began) * 1e3
    parts = {"imports": imported, **context_parts()}
    ctx = gpu.context()  # the rest of the context (device facts) on the primary context made above
    problem = problems.load(problem_name)
    timer = Timer()
    checks.rehearse(problem, ctx, step=timer.step)
    queue.put({**parts, **{f"rehearsal: {k}": v for k, v in timer.spent.items()}})


def child_profile(problem_name: str, top: int, queue) -> None:
    profile = cProfile.Profile()
    profile.enable()
    import cupy  # noqa: F401

    from kernels import checks, gpu, problems

    ctx = gpu.context()
    checks.rehearse(problems.load(problem_name), ctx)
    profile.disable()
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(top)
    queue.put(out.getvalue())


class Timer:
    """The `step` that checks.rehearse takes, recording each part's wall time (no lock: nothing runs beside)."""

    def __init__(self):
        self.spent: dict[str, float] = {}

    @contextlib.contextmanager
    def step(self, name: str, locked: bool = True):
        began = time.perf_counter()
        yield
        self.spent[name] = (time.perf_counter() - began) * 1e3


def in_child(target, *args):
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=target, args=(*args, queue))
    process.start()
    value = queue.get(timeout=300)
    process.join()
    return value


def generators(problem_name: str) -> None:
    import cupy as cp

    from kernels import problems

    problem = problems.load(problem_name)
    module = problem.module()
    makers = {
        "XORWOW (default_rng)": lambda seed: cp.random.default_rng(seed),
        "Philox4x3210": lambda seed: cp.random.Generator(cp.random.Philox4x3210(seed)),
    }
    print("| generator | seeding wall / GPU ms | test shape draw wall / GPU ms | benchmark shape draw wall / GPU ms |")
    print("| --- | --- | --- | --- |")
    for name, make in makers.items():
        row = [name]
        for sizes in (None, problem.tests[0].sizes, problem.benchmarks[0].sizes):
            walls, gpus = [], []
            for seed in range(11):
                start, end = cp.cuda.Event(), cp.cuda.Event()
                cp.cuda.Device().synchronize()
                began = time.perf_counter()
                start.record()
                rng = make(seed + 1)
                if sizes is not None:
                    module.make_inputs(sizes, rng, problem.params)
                end.record()
                end.synchronize()
                if seed:  # the first pays for loading the generator's kernels
                    walls.append((time.perf_counter() - began) * 1e3)
                    gpus.append(cp.cuda.get_elapsed_time(start, end))
            row.append(f"{statistics.median(walls):.2f} / {statistics.median(gpus):.2f}")
        print("| " + " | ".join(row) + " |", flush=True)


def beside(problem_name: str, rehearse: bool, queue) -> None:
    """A spare's GPU phase with no lock: reports its [begin, end] on the shared monotonic clock."""
    import cupy  # noqa: F401

    from kernels import checks, gpu, problems

    problem = problems.load(problem_name) if rehearse else None
    began = time.monotonic()
    ctx = gpu.context()
    made = time.monotonic()
    if problem is not None:
        checks.rehearse(problem, ctx)
    queue.put((began, made, time.monotonic()))


def disturbance(problem_name: str, seconds: float) -> None:
    import cupy as cp

    from kernels import gpu

    ctx = gpu.context()
    x = cp.ones(64 << 20, dtype=cp.float32)  # 256 MiB: read and written, about 0.2 ms
    y = cp.empty_like(x)

    def timed() -> float:
        ctx.flush_l2()
        ctx.hold_stream()
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        cp.multiply(x, 2.0, out=y)
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end)

    spawn = multiprocessing.get_context("spawn")
    launches: list[tuple[float, float, float]] = []  # (asked, answered, ms)
    windows: list[tuple[str, float, float]] = []
    for mode in ("quiet", "context", "rehearsal"):
        queue = spawn.Queue()
        child = None
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if mode != "quiet" and (child is None or not child.is_alive()):
                if child is not None:
                    began, made, ended = queue.get(timeout=60)
                    windows.append(("context", began, made))
                    if mode == "rehearsal":
                        windows.append(("rehearsal", made, ended))
                child = spawn.Process(target=beside, args=(problem_name, mode == "rehearsal", queue))
                child.start()
            asked = time.monotonic()
            ms = timed()
            launches.append((asked, time.monotonic(), ms))
        if child is not None:  # its window, if its GPU phase began before the last launch
            began, made, ended = queue.get(timeout=120)
            windows += [("context", began, made), ("rehearsal", made, ended)]
            child.join()
    print("| launches overlapping | n | median ms | p99 ms | max ms |")
    print("| --- | --- | --- | --- | --- |")
    classes: dict[str, list[float]] = {"quiet": [], "context": [], "rehearsal": []}
    for asked, answered, ms in launches:
        hit = [kind for kind, begin, end in windows if begin < answered and end > asked]
        classes[hit[0] if hit else "quiet"].append(ms)
    for kind, values in classes.items():
        if values:
            values.sort()
            p99 = values[min(len(values) - 1, int(0.99 * len(values)))]
            print(f"| {kind} | {len(values)} | {statistics.median(values):.4f} | {p99:.4f} | {values[-1]:.4f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="sgemm")
    parser.add_argument("--profile", type=int, default=25, help="functions to print from the profile (0: none)")
    parser.add_argument("--disturb-s", type=float, default=20.0, help="seconds per mode of the disturbance test")
    args = parser.parse_args()
    for run in range(2):
        parts = in_child(child_parts, args.problem)
        print(f"fresh child {run + 1}, ms: " + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()), flush=True)
    if args.profile:
        print(in_child(child_profile, args.problem, args.profile), flush=True)
    generators(args.problem)
    if args.disturb_s:
        disturbance(args.problem, args.disturb_s)


if __name__ == "__main__":
    main()

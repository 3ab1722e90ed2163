"""Timed launches under a loaded CPU: the judge's fixed 300 us hold against a hold released by the host (issue 30).

    python3 bench/timed_hold.py [--seconds 4] [--burners 32] [--target 0.005]

The judge holds its stream with a kernel that spins for a fixed 300 us (kernels/gpu.py, HOLD_BEFORE_TIMING_NS)
so that recording `start` and issuing the launch from Python happen while the GPU is busy. If the host is
descheduled for longer than that between `start` and the launch (16 cores shared with NVRTC compiles and spares
importing CuPy), the GPU idles inside the timed region and the round reads slow. The alternative measured here
holds the stream with a kernel that spins until the host writes a flag in mapped host memory, written once
`start`, the launch and `end` are all queued (nvbench's "blocking kernel"; a time-out ends the spin and is
counted, so a launch that waits for the stream can never hang the timing).

For each load (quiet; `--burners` processes spinning on the CPU), hold (fixed, released) and operation (a 4 MiB
multiply of a few microseconds, a 256 MiB one of about 0.3 ms, cuBLAS SGEMM at 4096^3 of about 5 ms), it times
launches back to back for `--seconds`, L2 flushed before each as the judge does, and prints: median, p99 and max
ms; the share of launches more than 1% and 5% over the median; the host's time from `start` to `end` queued (p50,
p99, max, and the share over 300 us, which the fixed hold cannot cover); and, replaying the launches as a judge's
rounds (alternate launches standing for the candidate and the baseline), the mean rounds per job under the
stopping rule on the mean's standard error and on the median's (kernels/samples.py).
"""

from __future__ import annotations

import argparse
import ctypes
import multiprocessing
import os
import time

import numpy as np

RELEASED_HOLD_SOURCE = r"""
extern "C" __global__ void hold_until_released(const volatile unsigned int* released, unsigned int* timed_out,
                                               unsigned long long timeout_ns) {
    unsigned long long start, now;  // %globaltimer counts nanoseconds, whatever the SM clock does
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*released == 0u) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            *timed_out = 1u;
            return;
        }
    }
}
"""
FIXED_HOLD_NS = 300_000
RELEASE_TIMEOUT_NS = 50_000_000


class ReleasedHold:
    """A one-thread kernel spinning on a word of mapped host memory until the host sets it (or 50 ms pass).
    With unified addressing the host pointer of cudaHostAlloc'd memory is valid in kernels as it is."""

    def __init__(self):
        import cupy as cp
        from cupy.cuda import runtime

        self.address = runtime.hostAlloc(8, runtime.hostAllocMapped)
        self.words = np.ctypeslib.as_array((ctypes.c_uint32 * 2).from_address(self.address))
        self.kernel = cp.RawKernel(RELEASED_HOLD_SOURCE, "hold_until_released")
        self.timeouts = 0

    def hold(self) -> None:
        self.words[:] = 0
        args = (np.uint64(self.address), np.uint64(self.address + 4), np.uint64(RELEASE_TIMEOUT_NS))
        self.kernel((1,), (1,), args)

    def release(self) -> None:
        self.words[0] = 1

    def check(self) -> bool:
        """After the stream has finished: whether the spin ended by its time-out (the launch waited for it)."""
        if self.words[1]:
            self.timeouts += 1
            return False
        return True


def operations():
    import cupy as cp

    small_x = cp.ones(1 << 20, dtype=cp.float32)
    small_y = cp.empty_like(small_x)
    big_x = cp.ones(64 << 20, dtype=cp.float32)
    big_y = cp.empty_like(big_x)
    a = cp.random.default_rng(1).standard_normal((4096, 4096), dtype=cp.float32)
    b = cp.random.default_rng(2).standard_normal((4096, 4096), dtype=cp.float32)
    c = cp.empty_like(a)
    return {
        "multiply 4 MiB": lambda: cp.multiply(small_x, 2.0, out=small_y),
        "multiply 256 MiB": lambda: cp.multiply(big_x, 2.0, out=big_y),
        "SGEMM 4096^3": lambda: cp.matmul(a, b, out=c),
    }


def time_launches(ctx, launch, hold: str, released: ReleasedHold, seconds: float):
    """(GPU ms, host us from start recorded to end queued) per valid launch, for `seconds`."""
    import cupy as cp

    times, host_us = [], []
    for _ in range(3):  # first uses: module loading, cuBLAS heuristics
        launch()
    cp.cuda.get_current_stream().synchronize()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        ctx.flush_l2()
        if hold == "fixed":
            ctx.hold_stream()
        else:
            released.hold()
        start, end = cp.cuda.Event(), cp.cuda.Event()
        issued = time.perf_counter()
        start.record()
        launch()
        end.record()
        queued = time.perf_counter()
        if hold == "released":
            released.release()
        end.synchronize()
        if hold == "released" and not released.check():
            continue
        times.append(cp.cuda.get_elapsed_time(start, end))
        host_us.append((queued - issued) * 1e6)
    return times, host_us


def rounds_per_job(times: list[float], target: float) -> tuple[float, float]:
    """Replay the launches as judge rounds (even ones the candidate, odd ones the baseline), job after job, and
    return the mean rounds a job took under the mean's and the median's stopping rule (the judge's defaults:
    10 to 100 rounds; no time budget), a job ending once both sides' medians are settled."""
    from kernels.samples import mean_rel_std_err, median_rel_std_err, settled

    def jobs(rse) -> float:
        candidate, baseline, taken = [], [], []
        for cand, base in zip(times[0::2], times[1::2], strict=False):
            candidate.append(cand)
            baseline.append(base)
            done = all(
                settled(side, min_rounds=10, target_rel_std_err=target, rel_std_err=rse)
                for side in (candidate, baseline)
            )
            if done or len(candidate) >= 100:
                taken.append(len(candidate))
                candidate, baseline = [], []
        return float(np.mean(taken)) if taken else float("nan")

    return jobs(mean_rel_std_err), jobs(median_rel_std_err)


def burn() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="per load, hold and operation")
    parser.add_argument("--burners", type=int, default=2 * (os.cpu_count() or 8), help="busy processes when loaded")
    parser.add_argument("--target", type=float, default=0.005, help="the judge's target relative standard error")
    args = parser.parse_args()

    from kernels import gpu

    ctx = gpu.context()
    released = ReleasedHold()
    ops = operations()
    print(f"fixed hold {FIXED_HOLD_NS / 1e3:.0f} us; released hold time-out {RELEASE_TIMEOUT_NS / 1e6:.0f} ms")
    print(
        "| load | hold | operation | launches | median ms | p99 ms | max ms | >1% / >5% over median "
        "| host us p50 / p99 / max | host > 300 us | rounds per job, mean rule / median rule |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    spawn = multiprocessing.get_context("spawn")
    for load in ("quiet", "loaded"):
        burners = [spawn.Process(target=burn, daemon=True) for _ in range(args.burners if load == "loaded" else 0)]
        for process in burners:
            process.start()
        try:
            for hold in ("fixed", "released"):
                for name, launch in ops.items():
                    times, host_us = time_launches(ctx, launch, hold, released, args.seconds)
                    values, host = np.asarray(times), np.asarray(host_us)
                    median = float(np.median(values))
                    slow1, slow5 = (100 * np.mean(values > median * f) for f in (1.01, 1.05))
                    mean_rule, median_rule = rounds_per_job(times, args.target)
                    print(
                        f"| {load} | {hold} | {name} | {len(values)} | {median:.4f} "
                        f"| {np.percentile(values, 99):.4f} | {values.max():.4f} | {slow1:.1f}% / {slow5:.1f}% "
                        f"| {np.median(host):.0f} / {np.percentile(host, 99):.0f} / {host.max():.0f} "
                        f"| {100 * np.mean(host > FIXED_HOLD_NS / 1e3):.2f}% | {mean_rule:.1f} / {median_rule:.1f} |",
                        flush=True,
                    )
        finally:
            for process in burners:
                process.kill()
    print(f"released holds ended by their time-out (launch dropped): {released.timeouts}")


if __name__ == "__main__":
    main()

"""What a side's timed rounds say: the median and its spread, and whether enough rounds are in.

No CUDA here (kernels/timing.py times the rounds), so the statistics are tested on any machine.

The judge reports the median, so the stopping rule follows the median's standard error, not the mean's. Kernel
times cluster with a slow tail (a round stretched by the host, an interrupt, a clock dip): one such round in ten
moves the median by less than the spread of the others but multiplies the sample's standard deviation, and under
the mean's standard error a job kept timing for dozens of rounds (up to the hundred-round cap) to dilute it
(BENCHMARKS.md, "the pool at 88.8 a minute": timed rounds p50 0.34 s, p95 0.77 s, max 2.6 s). The median's
standard error is estimated from the median absolute deviation (MAD), which such rounds barely move: the spread's
sigma is 1.4826 x MAD for normally distributed times, and a median's standard error is sqrt(pi / 2) = 1.2533
times a mean's.
"""

from __future__ import annotations

import math

import numpy as np

from kernels.results import TimingStats

_SIGMA_PER_MAD = 1.4826
_MEDIAN_SE_PER_MEAN_SE = math.sqrt(math.pi / 2)


def mean_rel_std_err(samples: list[float]) -> float:
    """The mean's standard error over the mean (kept in results as rel_std_err, as before)."""
    if len(samples) < 2:
        return float("inf")
    values = np.asarray(samples)
    return float(values.std(ddof=1) / np.sqrt(len(values)) / values.mean())


def median_rel_std_err(samples: list[float]) -> float:
    """The median's standard error over the median, from the median absolute deviation (see above)."""
    if len(samples) < 2:
        return float("inf")
    values = np.asarray(samples)
    median = float(np.median(values))
    mad = float(np.median(np.abs(values - median)))
    return _MEDIAN_SE_PER_MEAN_SE * _SIGMA_PER_MAD * mad / math.sqrt(len(values)) / median


# A kernel whose rounds all agree with their median within the target needs no more of them to pin the median
# down: with three rounds each within 0.5% of it, the figure is known to 0.5% already. Slow kernels are steady, and
# each of their rounds costs what ten rounds of a library call do (README, "Capacity of the GPU pool").
STEADY_ROUNDS = 3


def farthest_from_median(samples: list[float], strays: int = 0) -> float:
    """max |round - median| / median over the rounds, the `strays` farthest left out: how far the farthest round
    lies from the figure reported."""
    if len(samples) < 2:
        return float("inf")
    values = np.asarray(samples)
    median = np.median(values)
    distances = np.sort(np.abs(values - median))
    return float(distances[len(distances) - 1 - strays] / median)


def settled(
    samples: list[float], *, min_rounds: int, target_rel_std_err: float, rel_std_err=median_rel_std_err
) -> bool:
    """Whether one side's median is pinned to the target: STEADY_ROUNDS rounds that all lie within it of their
    median (a steady kernel), or, from STEADY_ROUNDS + 1 rounds on, all but one (a round stretched by an interrupt
    or a clock step moves the median of four or more by no more than to its neighbour, which lies within the
    target: a 180 ms kernel timed to ten rounds for one such round cost a second and a half); else min_rounds in
    and the median's relative standard error within it (`rel_std_err`: the mean's rule, for comparison)."""
    n = len(samples)
    if n < STEADY_ROUNDS:
        return False
    strays = 1 if n > STEADY_ROUNDS else 0
    if farthest_from_median(samples, strays) <= target_rel_std_err:
        return True
    return n >= min_rounds and rel_std_err(samples) <= target_rel_std_err


def enough_rounds(
    candidate_ms: list[float],
    *,
    min_rounds: int,
    max_rounds: int,
    target_rel_std_err: float,
    past_budget: bool,
    rel_std_err=median_rel_std_err,
) -> bool:
    """Whether the checked rounds at one shape may stop (every one of them timed the candidate on fresh inputs and
    was checked): at max_rounds, past the time budget once there are STEADY_ROUNDS, or once the candidate's median
    is `settled`. The candidate alone decides: each of its rounds costs a fresh input set and a reference, while
    the library's figure, which is often the noisier one (a 0.1 ms call beside a 100 ms starter), is pinned by
    launches of its own that cost neither (`baseline_needs_more`)."""
    n = len(candidate_ms)
    if n >= max_rounds:
        return True
    if n < STEADY_ROUNDS:
        return False
    return past_budget or settled(
        candidate_ms, min_rounds=min_rounds, target_rel_std_err=target_rel_std_err, rel_std_err=rel_std_err
    )


def baseline_needs_more(
    baseline_ms: list[float], *, min_rounds: int, max_rounds: int, target_rel_std_err: float, past_budget: bool
) -> bool:
    """Whether the baseline, after the checked rounds, needs launches of its own to pin its median: until it is
    `settled`, up to max_rounds in all or the shape's time budget."""
    if len(baseline_ms) >= max_rounds or past_budget:
        return False
    return not settled(baseline_ms, min_rounds=min_rounds, target_rel_std_err=target_rel_std_err)


def timing_stats(samples: list[float]) -> TimingStats:
    values = np.asarray(samples)
    q25, median, q75 = np.percentile(values, [25, 50, 75])
    return TimingStats(
        samples=len(values),
        median_ms=float(median),
        q25_ms=float(q25),
        q75_ms=float(q75),
        min_ms=float(values.min()),
        mean_ms=float(values.mean()),
        rel_std_err=mean_rel_std_err(samples),
        median_rel_std_err=median_rel_std_err(samples),
    )

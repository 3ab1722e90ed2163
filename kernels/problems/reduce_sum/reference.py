"""reduce_sum: out[0] = sum(x); reference in float64 (exact enough to judge an FP32 sum against); baseline
CUB's device-wide reduction through CuPy. Array-module generic (NumPy or CuPy, from the inputs).

Inputs: each call draws one of four families, all of mean zero (so that the sum stays small next to its terms,
and any term lost or added shows): uniform in [-1, 1); heavy-tailed, +-2^u with u uniform in [-24, 12); uniform
with 30% exact zeros and some runs of 4096 zeros; uniform with rare spikes of +-10^4 (one in 10^4). Some
subnormals are mixed into every family.

The tolerance (problem.toml: reduction = 1, so 16 u(FP32) relative to the scale) is measured against the scale
max(|sum|, N^(1/4) ||x||_2) that `magnitude` gives. Why that scale: an FP32 sum errs by about u times the root
sum of squares of its partial sums; for terms of random sign a partial sum of k terms is about sqrt(k) rms(x),
so a pairwise or blocked sum (a thread's chain of a few thousand, then trees or a few thousand atomics) errs
about u ||x||_2 sqrt(log N) to u ||x||_2 sqrt(chain length), while one running sum of all N terms errs about
u ||x||_2 sqrt(N / 6). 16 N^(1/4) admits chains of 1536 sqrt(N) terms and fails the single running sum from
N of about 2^22 up; a lost term of rms size shows once a few are lost (at N = 2^28 the bound is about 1.2,
against a correct kernel's 0.02 and CUB's alike)."""

from kernels.problems import dtypes

FAMILIES = 4
SPIKE = 1.0e4


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    n = sizes["N"]
    family = dtypes.pick(rng, FAMILIES)
    x = dtypes.signed_powers(rng, (n,), -24.0, 12.0) if family == 1 else dtypes.uniform(rng, (n,))
    if family == 2:
        x = dtypes.sprinkle(rng, x, 0.3, 0.0)
        runs = rng.random((n + 4095) // 4096, dtype=xp.float32) < 0.1
        x = xp.where(xp.repeat(runs, 4096)[:n], xp.float32(0.0), x).astype(xp.float32)
    if family == 3:
        x = dtypes.sprinkle(rng, x, 1e-4, dtypes.signed_powers(rng, (n,), 13.29, 13.30))  # +-1e4
    x = dtypes.sprinkle(rng, x, 1e-3, dtypes.subnormals(rng, (n,)))
    return {"x": x, "out": xp.empty((1,), dtype=xp.float32)}


def reference(inputs, sizes, params):
    xp = dtypes.xp_of(inputs["x"])
    return xp.sum(inputs["x"].astype(xp.float64), keepdims=True)


def magnitude(inputs, sizes, params):
    """N^(1/4) ||x||_2: the size of a correct FP32 sum's rounding error, over 16 u (see the module's text)."""
    xp = dtypes.xp_of(inputs["x"])
    x = inputs["x"].astype(xp.float64)
    return xp.sqrt(xp.sum(x * x, keepdims=True)) * float(sizes["N"]) ** 0.25


def baseline(inputs, out, sizes, params, ctx):
    """cub::DeviceReduce::Sum over x into an array of CuPy's (0-d), returned as the answer: writing it into
    `out` would add a launch of its own to the time."""
    from cupy.cuda import cub

    total = cub.cub_reduction(inputs["x"], cub.CUPY_CUB_SUM)
    if total is None:
        raise RuntimeError("CUB cannot reduce this array")
    return total.reshape(1)

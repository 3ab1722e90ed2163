"""reduce_sum: out[0] = sum(x); reference in float64 (exact enough to judge an FP32 sum against); baseline
CUB's device-wide reduction through CuPy. Array-module generic (NumPy or CuPy, from the inputs)."""

from kernels.problems import dtypes


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    return {"x": dtypes.uniform(rng, (sizes["N"],)), "out": xp.empty((1,), dtype=xp.float32)}


def reference(inputs, sizes, params):
    xp = dtypes.xp_of(inputs["x"])
    return xp.sum(inputs["x"].astype(xp.float64), keepdims=True)


def magnitude(inputs, sizes, params):
    """sum |x|: the scale of the terms, which stands in for |sum| where the random signs cancel it out."""
    xp = dtypes.xp_of(inputs["x"])
    return xp.sum(xp.abs(inputs["x"].astype(xp.float64)), keepdims=True)


def baseline(inputs, out, sizes, params, ctx):
    """cub::DeviceReduce::Sum over x into an array of CuPy's (0-d), returned as the answer: writing it into
    `out` would add a launch of its own to the time."""
    from cupy.cuda import cub

    total = cub.cub_reduction(inputs["x"], cub.CUPY_CUB_SUM)
    if total is None:
        raise RuntimeError("CUB cannot reduce this array")
    return total.reshape(1)

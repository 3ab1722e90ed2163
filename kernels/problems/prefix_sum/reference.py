"""prefix_sum: inclusive int32 scan, checked exactly; reference in int64 (then int32: the partial sums stay far
inside its range); baseline CUB's device-wide inclusive scan, as torch.cumsum runs it for a 1-D tensor (from x
into y: CuPy's CUB scan works in place only, which would add a copy of x to the baseline's time).
Array-module generic (NumPy or CuPy, from the inputs) but for the baseline."""

from kernels.problems import dtypes

LOW, HIGH = -1000, 1000


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    n = sizes["N"]
    return {"x": dtypes.integers(rng, (n,), LOW, HIGH), "y": xp.empty((n,), dtype=xp.int32)}


def reference(inputs, sizes, params):
    xp = dtypes.xp_of(inputs["x"])
    return xp.cumsum(inputs["x"].astype(xp.int64)).astype(xp.int32)


def baseline(inputs, out, sizes, params, ctx):
    from kernels.problems import torch_bridge

    torch = torch_bridge.torch()
    with torch_bridge.on_current_stream():
        torch.cumsum(torch_bridge.as_tensor(inputs["x"]), 0, dtype=torch.int32, out=torch_bridge.as_tensor(out))

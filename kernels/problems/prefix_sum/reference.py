"""prefix_sum: inclusive int32 scan, checked exactly; reference in int64 (then int32: the partial sums stay far
inside its range); baseline torch.cumsum from x into y. Array-module generic (NumPy or CuPy, from the inputs) but
for the baseline.

Why not CUB through CuPy: CuPy's CUB scan (cupy.cuda.cub.device_scan, and cupy.cumsum on top of it) works in
place only, so the baseline would have to copy x into y first. On the H200 at N = 2^28 (L2 flushed, median of 7):
CUB's in-place scan alone 0.684 ms (3.14 TB/s counting 8 bytes per element), torch.cumsum 0.938 ms (2.29 TB/s),
copy + CUB scan 1.190 ms. torch.cumsum is the fastest library scan from x into y that can be timed here; CUB's
own speed is the 0.684 ms."""

from kernels.problems import dtypes

LOW, HIGH = -1000, 1000
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def make_inputs(sizes, rng, params):
    """One family per call: small values in [-1000, 1000]; any int32 (the partial sums wrap around, as int32
    addition does in the kernel and in the reference alike); or mostly zeros with rare values of any size."""
    xp = dtypes.xp_of(rng)
    n = sizes["N"]
    family = dtypes.pick(rng, 3)
    low, high = (LOW, HIGH) if family == 0 else (INT32_MIN, INT32_MAX)
    x = dtypes.integers(rng, (n,), low, high)
    if family == 2:
        x = xp.where(rng.random((n,), dtype=xp.float32) < 0.99, xp.int32(0), x).astype(xp.int32)
    return {"x": x, "y": xp.empty((n,), dtype=xp.int32)}


def reference(inputs, sizes, params):
    xp = dtypes.xp_of(inputs["x"])
    return xp.cumsum(inputs["x"].astype(xp.int64)).astype(xp.int32)


def baseline(inputs, out, sizes, params, ctx):
    from kernels.problems import torch_bridge

    torch = torch_bridge.torch()
    with torch_bridge.on_current_stream():
        torch.cumsum(torch_bridge.as_tensor(inputs["x"]), 0, dtype=torch.int32, out=torch_bridge.as_tensor(out))

"""rmsnorm: BF16 in and out, FP32 inside; reference in float64 from the BF16 values; baseline PyTorch's
rms_norm (through the DLPack bridge). Array-module generic (NumPy or CuPy, from the inputs) but for the baseline.

Every call draws each row's kind: uniform in [-1, 1), or heavy-tailed (+-2^u, u uniform in [-12, 4): a few
elements carry the sum of squares), or all zeros (y = 0); then a row scale 10^u, u uniform in [-12, 10): rows of
tiny values, where mean(x^2) is comparable to eps or below it, test that eps is added where the contract says,
and large ones that the sum of squares is FP32 (their squares overflow BF16's precision, not its range). About one
element in 500 is a subnormal, one in 50 an exact zero. w is uniform in [-2, 2) with exact zeros."""

import numpy as np

from kernels.problems import dtypes

KINDS = 3  # uniform, heavy-tailed, zeros


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    rows, hidden = sizes["rows"], sizes["hidden"]
    kind = rng.integers(0, KINDS, size=(rows, 1))
    x = dtypes.uniform(rng, (rows, hidden))
    x = xp.where(kind == 1, dtypes.signed_powers(rng, (rows, hidden), -12.0, 4.0), x)
    x = xp.where(kind == 2, xp.float32(0.0), x)
    x = x * xp.power(xp.float32(10.0), dtypes.uniform(rng, (rows, 1), low=-12.0, high=10.0))
    x = dtypes.sprinkle(rng, x, 0.02, 0.0)
    x = dtypes.sprinkle(rng, x, 0.002, dtypes.subnormals(rng, (rows, hidden)))
    w = dtypes.sprinkle(rng, dtypes.uniform(rng, (hidden,), low=-2.0, high=2.0), 0.02, 0.0)
    return {
        "x": dtypes.bf16_from_f32(x),
        "w": dtypes.bf16_from_f32(w),
        "y": xp.empty((rows, hidden), dtype=xp.uint16),
    }


def reference(inputs, sizes, params):
    xp = dtypes.xp_of(inputs["x"])
    x = dtypes.f32_from_bf16(inputs["x"]).astype(xp.float64)
    w = dtypes.f32_from_bf16(inputs["w"]).astype(xp.float64)
    eps = float(np.float32(params["eps"]))  # the kernel is given eps as an FP32 value
    inv_rms = 1.0 / xp.sqrt(xp.mean(x * x, axis=1, keepdims=True) + eps)
    return x * inv_rms * w


def baseline(inputs, out, sizes, params, ctx):
    """torch's rms_norm has no out= variant: its own output array is returned, and checked."""
    from kernels.problems import torch_bridge

    torch = torch_bridge.torch()
    with torch_bridge.on_current_stream():
        x = torch_bridge.as_tensor(inputs["x"], "bfloat16")
        w = torch_bridge.as_tensor(inputs["w"], "bfloat16")
        y = torch.nn.functional.rms_norm(x, (sizes["hidden"],), weight=w, eps=params["eps"])
    return torch_bridge.as_cupy(y)

"""rmsnorm: BF16 in and out, FP32 inside; reference in float64 from the BF16 values; baseline PyTorch's
rms_norm (through the DLPack bridge). Array-module generic (NumPy or CuPy, from the inputs) but for the baseline.

Each row of x is uniform in [-1, 1) times a row scale 10^u, u uniform in [-3, 1): rows of tiny values, where
mean(x^2) is comparable to eps, test that eps is added where the contract says. w is uniform in [-2, 2)."""

import numpy as np

from kernels.problems import dtypes


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    rows, hidden = sizes["rows"], sizes["hidden"]
    x = dtypes.uniform(rng, (rows, hidden))
    x *= xp.power(xp.float32(10.0), dtypes.uniform(rng, (rows, 1), low=-3.0, high=1.0))
    return {
        "x": dtypes.bf16_from_f32(x),
        "w": dtypes.uniform(rng, (hidden,), "bfloat16", low=-2.0, high=2.0),
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

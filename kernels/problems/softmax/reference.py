"""softmax: row softmax in FP32; reference in float64; baseline PyTorch's softmax (through the DLPack bridge).
Array-module generic (NumPy or CuPy, from the inputs) but for the baseline.

Every row draws its own kind at every call, so a row's kind, offset and spread change from launch to launch:
- spread: uniform in [-s, s) with s = 10^v, v uniform in [-1, 3.3) (up to about +-2000 around its offset);
- spike: the same, plus one element anywhere in the row that stands 100 to 1000 above the rest (a maximum taken
  over part of the row, or kept from an earlier launch, leaves exp(x - m) to overflow: inf / inf);
- heavy: +-2^u, u uniform in [-8, 11);
- flat: one value repeated (every output 1 / cols).
Each row is then shifted by an offset uniform in [-10^4, 10^4): without the shift by the row's maximum, exp
overflows or underflows (NaN either way)."""

from kernels.problems import dtypes

KINDS = 4
OFFSET = 1.0e4


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    rows, cols = sizes["rows"], sizes["cols"]
    kind = rng.integers(0, KINDS, size=(rows, 1))
    spread = xp.power(xp.float32(10.0), dtypes.uniform(rng, (rows, 1), low=-1.0, high=3.3))
    x = dtypes.uniform(rng, (rows, cols)) * spread
    spike_at = xp.arange(cols)[None, :] == rng.integers(0, cols, size=(rows, 1))
    spike = spread + dtypes.uniform(rng, (rows, 1), low=100.0, high=1000.0)
    x = xp.where((kind == 1) & spike_at, spike, x)
    x = xp.where(kind == 2, dtypes.signed_powers(rng, (rows, cols), -8.0, 11.0), x)
    x = xp.where(kind == 3, dtypes.uniform(rng, (rows, 1), low=-100.0, high=100.0), x)
    x = x + dtypes.uniform(rng, (rows, 1), low=-OFFSET, high=OFFSET)
    return {"x": x.astype(xp.float32), "y": xp.empty((rows, cols), dtype=xp.float32)}


def reference(inputs, sizes, params):
    xp = dtypes.xp_of(inputs["x"])
    x = inputs["x"].astype(xp.float64)
    e = xp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def baseline(inputs, out, sizes, params, ctx):
    """torch.softmax has no out= variant: its own output array is returned, and checked."""
    from kernels.problems import torch_bridge

    torch = torch_bridge.torch()
    with torch_bridge.on_current_stream():
        y = torch.softmax(torch_bridge.as_tensor(inputs["x"]), dim=1)
    return torch_bridge.as_cupy(y)

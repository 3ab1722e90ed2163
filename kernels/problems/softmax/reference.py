"""softmax: row softmax in FP32; reference in float64; baseline PyTorch's softmax (through the DLPack bridge).
Array-module generic (NumPy or CuPy, from the inputs) but for the baseline.

Rows come in four kinds, by index: r % 4 == 0 uniform in [-4, 4); 1 the same near +9995 (up to 9999); 2 uniform
in [-20, 20) (most of the row's mass in a few elements); 3 near -9995. Without the shift by the row's maximum,
kind 1 overflows (inf / inf) and kind 3 underflows (0 / 0): both give NaN."""

from kernels.problems import dtypes

BIG = 9995.0  # |x| stays under 1e4 with the [-4, 4) spread added


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    rows, cols = sizes["rows"], sizes["cols"]
    x = dtypes.uniform(rng, (rows, cols), low=-4.0, high=4.0)
    kind = xp.arange(rows) % 4
    spread = xp.where(kind == 2, 5.0, 1.0).astype(xp.float32)
    offset = xp.where(kind == 1, BIG, xp.where(kind == 3, -BIG, 0.0)).astype(xp.float32)
    x *= spread[:, None]
    x += offset[:, None]
    return {"x": x, "y": xp.empty((rows, cols), dtype=xp.float32)}


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

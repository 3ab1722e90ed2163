"""gemv: y = x W^T for B vectors, BF16 in and out, FP32 accumulation; reference in float64 from the BF16 values
(their products are exact there); baseline PyTorch's matmul, which calls cuBLAS. Array-module generic (NumPy or
CuPy, from the inputs) but for the baseline.

Every call: W uniform in [-1, 1) times a row scale 10^u (u uniform in [-2, 2)), with 5% exact zeros and 1 in 8
of its 8 x 64 tiles all zero; x uniform in [-1, 1) with outlier channels (1%, +-2^u, u in [4, 8): the activation
outliers of LLMs), 5% exact zeros and 0.2% subnormals."""

from kernels.problems import dtypes


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    n, k, b = sizes["N"], sizes["K"], sizes["B"]
    w = dtypes.uniform(rng, (n, k)) * xp.power(xp.float32(10.0), dtypes.uniform(rng, (n, 1), low=-2.0, high=2.0))
    w = dtypes.zero_tiles(rng, dtypes.sprinkle(rng, w, 0.05, 0.0), 8, 0.125)
    x = dtypes.sprinkle(rng, dtypes.uniform(rng, (b, k)), 0.01, dtypes.signed_powers(rng, (b, k), 4.0, 8.0))
    x = dtypes.sprinkle(rng, dtypes.sprinkle(rng, x, 0.05, 0.0), 0.002, dtypes.subnormals(rng, (b, k)))
    return {
        "W": dtypes.bf16_from_f32(w),
        "x": dtypes.bf16_from_f32(x),
        "y": xp.empty((b, n), dtype=xp.uint16),
    }


def _operands(inputs):
    xp = dtypes.xp_of(inputs["W"])
    w = dtypes.f32_from_bf16(inputs["W"]).astype(xp.float64)
    x = dtypes.f32_from_bf16(inputs["x"]).astype(xp.float64)
    return xp, w, x


def reference(inputs, sizes, params):
    _, w, x = _operands(inputs)
    return x @ w.T


def magnitude(inputs, sizes, params):
    """|x| |W|^T: how large each output's terms are, whatever cancels."""
    xp, w, x = _operands(inputs)
    return xp.abs(x) @ xp.abs(w).T


def baseline(inputs, out, sizes, params, ctx):
    """y (B x N) = x (B x K) @ W^T, written into `out` by cuBLAS (the bridge turns reduced-precision
    reductions off, so the accumulation is FP32)."""
    from kernels.problems import torch_bridge

    torch = torch_bridge.torch()
    with torch_bridge.on_current_stream():
        w = torch_bridge.as_tensor(inputs["W"], "bfloat16")
        x = torch_bridge.as_tensor(inputs["x"], "bfloat16")
        torch.matmul(x, w.t(), out=torch_bridge.as_tensor(out, "bfloat16"))

"""swiglu: out = silu(gate) * up in BF16, FP32 inside; reference in float64 from the BF16 values; baseline
PyTorch's silu and multiply (through the DLPack bridge). Array-module generic (NumPy or CuPy, from the inputs)
but for the baseline.

Every element draws its kind at every call: gate uniform in [-6, 6) (silu's curved part), +-2^u with u uniform in
[-8, 7) (both tails, out to +-128, where an approximation of the sigmoid tuned on [-6, 6] fails), or +-(10 to 100);
up uniform in [-2, 2) or +-2^u, u in [-10, 6). About 2% of each are exact zeros and 0.2% subnormals."""

from kernels.problems import dtypes


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    shape = (sizes["tokens"], sizes["inter"])
    kind = rng.integers(0, 3, size=shape)
    gate = dtypes.uniform(rng, shape, low=-6.0, high=6.0)
    gate = xp.where(kind == 1, dtypes.signed_powers(rng, shape, -8.0, 7.0), gate)
    tails = dtypes.uniform(rng, shape, low=10.0, high=100.0)
    gate = xp.where(kind == 2, xp.where(rng.random(shape, dtype=xp.float32) < 0.5, -tails, tails), gate)
    up = dtypes.uniform(rng, shape, low=-2.0, high=2.0)
    up = xp.where(rng.random(shape, dtype=xp.float32) < 0.3, dtypes.signed_powers(rng, shape, -10.0, 6.0), up)
    return {
        "gate": dtypes.bf16_from_f32(_zeros_and_subnormals(rng, gate)),
        "up": dtypes.bf16_from_f32(_zeros_and_subnormals(rng, up)),
        "out": xp.empty(shape, dtype=xp.uint16),
    }


def _zeros_and_subnormals(rng, values):
    values = dtypes.sprinkle(rng, values, 0.02, 0.0)
    return dtypes.sprinkle(rng, values, 0.002, dtypes.subnormals(rng, values.shape))


def reference(inputs, sizes, params):
    xp = dtypes.xp_of(inputs["gate"])
    g = dtypes.f32_from_bf16(inputs["gate"]).astype(xp.float64)
    u = dtypes.f32_from_bf16(inputs["up"]).astype(xp.float64)
    return g / (1.0 + xp.exp(-g)) * u


def baseline(inputs, out, sizes, params, ctx):
    """silu into a temporary (BF16), then the product written into `out`: PyTorch's eager SwiGLU."""
    from kernels.problems import torch_bridge

    torch = torch_bridge.torch()
    with torch_bridge.on_current_stream():
        gate = torch_bridge.as_tensor(inputs["gate"], "bfloat16")
        up = torch_bridge.as_tensor(inputs["up"], "bfloat16")
        torch.mul(torch.nn.functional.silu(gate), up, out=torch_bridge.as_tensor(out, "bfloat16"))

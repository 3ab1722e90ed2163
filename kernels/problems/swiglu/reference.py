"""swiglu: out = silu(gate) * up in BF16, FP32 inside; reference in float64 from the BF16 values; baseline
PyTorch's silu and multiply (through the DLPack bridge). Array-module generic (NumPy or CuPy, from the inputs)
but for the baseline. gate is uniform in [-6, 6) (silu's curved part and both tails), up in [-2, 2)."""

from kernels.problems import dtypes


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    shape = (sizes["tokens"], sizes["inter"])
    return {
        "gate": dtypes.uniform(rng, shape, "bfloat16", low=-6.0, high=6.0),
        "up": dtypes.uniform(rng, shape, "bfloat16", low=-2.0, high=2.0),
        "out": xp.empty(shape, dtype=xp.uint16),
    }


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

"""fp8_quant: per-row E4M3 codes and FP32 scales, both checked exactly; baseline PyTorch eager (through the
DLPack bridge). Array-module generic (NumPy or CuPy, from the inputs) but for the baseline.

The reference does not use FP32 division: it divides in float64 and rounds the quotient to float32, which is
the correctly rounded FP32 quotient (float64 carries more than 2 * 24 + 2 bits, so the double rounding cannot
differ), and encodes it with dtypes.e4m3_encode.

Rows come in kinds, drawn anew for every row at every call: 0 and 4 uniform in [-1, 1) times 10^u (u uniform in [-8,
8), per row); 1 exact ties: half the elements are midpoints between neighbouring E4M3 values times 2^k (k in [-20,
20] per row), the others uniform below 448 * 2^k, and one element is +-448 * 2^k, so amax = 448 * 2^k, the scale is
2^k exactly and every midpoint is an exact tie (truncation, or rounding half away from zero, picks the wrong code);
5 near ties: amax is one of the BF16 values for which some x <= amax gets another code from x * (1 / scale) than
from x / scale (`reciprocal_traps`), half the elements are such x (random signs), the others uniform below amax, all
times 2^k; 2 and 6 magnitudes 2^u, u uniform in [-20, 0) (random signs), times 10^u'; 3 zeros (amax = 0: the scale
is 1e-12 / 448); 7 uniform in [-1, 1) times 1e-13 (amax below the 1e-12 floor)."""

import functools

import numpy as np

from kernels.problems import dtypes

AMAX_FLOOR = np.float32(1e-12)
E4M3_MAX = np.float32(dtypes.E4M3_MAX)


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    rows, cols = sizes["rows"], sizes["cols"]
    kind = rng.integers(0, 8, size=(rows, 1))  # drawn at every call: a row changes kind from launch to launch
    decades = xp.power(xp.float32(10.0), dtypes.uniform(rng, (rows, 1), low=-8.0, high=8.0))
    linear = dtypes.uniform(rng, (rows, cols))
    signs = xp.where(dtypes.uniform(rng, (rows, cols)) < 0, xp.float32(-1.0), xp.float32(1.0))
    spread = signs * xp.exp2(dtypes.uniform(rng, (rows, cols), low=-20.0, high=0.0))
    x = xp.where(kind % 4 == 0, linear * decades, spread * decades)
    x = xp.where(kind == 1, _ties(xp, rng, rows, cols, linear, signs), x)
    x = xp.where(kind == 5, _near_ties(xp, rng, rows, cols, linear, signs), x)
    x = xp.where(kind == 3, xp.float32(0.0), x)
    x = xp.where(kind == 7, linear * xp.float32(1e-13), x)
    return {
        "x": dtypes.bf16_from_f32(x),
        "q": xp.empty((rows, cols), dtype=xp.uint8),
        "scales": xp.empty((rows,), dtype=xp.float32),
    }


def _ties(xp, rng, rows, cols, linear, signs):
    """Rows whose amax is 448 * 2^k and whose other elements are half E4M3 midpoints times 2^k, half uniform."""
    values = xp.asarray(dtypes.E4M3_VALUES)
    lower = rng.integers(0, 0x7E, size=(rows, cols), dtype=xp.int64)  # codes 0..0x7D; the next is finite too
    midpoints = (values[lower] + values[lower + 1]) * xp.float32(0.5) * signs  # 5 significant bits: exact
    plain = linear * E4M3_MAX
    body = xp.where(rng.integers(0, 2, size=(rows, cols), dtype=xp.int64) == 0, midpoints, plain)
    at_amax = xp.arange(cols)[None, :] == rng.integers(0, cols, size=(rows, 1), dtype=xp.int64)
    body = xp.where(at_amax, E4M3_MAX * signs, body)
    return body * xp.exp2(rng.integers(-20, 21, size=(rows, 1), dtype=xp.int64).astype(xp.float32))


def _near_ties(xp, rng, rows, cols, linear, signs):
    """Rows whose elements are half `reciprocal_traps` values of the row's amax, half uniform below it, one the
    amax itself, all times 2^k."""
    amaxes, traps = (xp.asarray(a) for a in reciprocal_traps())
    which = rng.integers(0, len(amaxes), size=(rows, 1), dtype=xp.int64)
    amax = amaxes[which]
    trapped = traps[which, rng.integers(0, traps.shape[1], size=(rows, cols), dtype=xp.int64)] * signs
    body = xp.where(rng.integers(0, 2, size=(rows, cols), dtype=xp.int64) == 0, trapped, linear * amax)
    at_amax = xp.arange(cols)[None, :] == rng.integers(0, cols, size=(rows, 1), dtype=xp.int64)
    body = xp.where(at_amax, amax * signs, body)
    return body * xp.exp2(rng.integers(-20, 21, size=(rows, 1), dtype=xp.int64).astype(xp.float32))


@functools.cache
def reciprocal_traps() -> tuple[np.ndarray, np.ndarray]:
    """The BF16 values amax in (1, 2) for which some BF16 x in (0, amax] gets another E4M3 code from
    x * (1 / scale) than from x / scale (scale = amax / 448, both FP32), and those x: (amaxes, traps), traps[i]
    holding amaxes[i]'s x values repeated to a common length. About one amax in six has any. Scaling amax and x
    by a power of two scales the scale alike and changes neither code, so these serve at every magnitude."""
    xs = dtypes.f32_from_bf16(np.arange(0x0080, 0x4000, dtype=np.uint16))  # the positive normal BF16 below 2
    amaxes, traps = [], []
    for amax in dtypes.f32_from_bf16(np.arange(0x3F81, 0x4000, dtype=np.uint16)):
        scale = amax / E4M3_MAX
        x = xs[xs <= amax]
        differ = dtypes.e4m3_encode(x / scale) != dtypes.e4m3_encode(x * (np.float32(1.0) / scale))
        if differ.any():
            amaxes.append(amax)
            traps.append(x[differ])
    width = max(len(t) for t in traps)
    return np.array(amaxes, dtype=np.float32), np.stack([np.resize(t, width) for t in traps])


def reference(inputs, sizes, params):
    xp = dtypes.xp_of(inputs["x"])
    x = dtypes.f32_from_bf16(inputs["x"])
    amax = xp.abs(x).max(axis=1)
    scales = (xp.maximum(amax, AMAX_FLOOR).astype(xp.float64) / float(E4M3_MAX)).astype(xp.float32)
    quotients = (x.astype(xp.float64) / scales.astype(xp.float64)[:, None]).astype(xp.float32)
    return {"q": dtypes.e4m3_encode(quotients), "scales": scales}


def baseline(inputs, outs, sizes, params, ctx):
    """A per-row FP8 quantiser as PyTorch code writes it. The divisor 448 is a CUDA tensor, not a Python number:
    PyTorch turns division by a CPU scalar into a multiplication by its reciprocal, which rounds differently.
    The cast to float8_e4m3fn rounds to nearest even and agrees with the satfinite conversion
    below 464: here |x / scale| <= 448 but for the scale's rounding (448.00003 at most). Its own arrays are
    returned, and checked."""
    from kernels.problems import torch_bridge

    torch = torch_bridge.torch()
    with torch_bridge.on_current_stream():
        x = torch_bridge.as_tensor(inputs["x"], "bfloat16").float()
        divisor = torch.full((), float(E4M3_MAX), dtype=torch.float32, device=x.device)
        scales = torch.clamp(x.abs().amax(dim=1), min=float(AMAX_FLOOR)) / divisor
        q = (x / scales[:, None]).to(torch.float8_e4m3fn)
    return {"q": torch_bridge.as_cupy(q), "scales": torch_bridge.as_cupy(scales)}

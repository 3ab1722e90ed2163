"""Element types without a native array dtype, and random inputs of every element type the problems use.

BF16 is held as its uint16 bit pattern and FP8 E4M3 as its uint8 code (kernels/problems/__init__.py,
STORAGE_DTYPES). Every function here is array-module generic: it works on NumPy arrays (the CPU tests) and on
CuPy arrays (the judge, on the GPU), picking the module from its argument, and rounds exactly as the CUDA
conversions do, in integer arithmetic on the bits, so the CPU tests check the very code the judge runs.

    bf16_from_f32(x) -> uint16        round to nearest, ties to even (__float2bfloat16_rn); NaN stays NaN
    f32_from_bf16(bits) -> float32    exact
    e4m3_encode(x) -> uint8           round to nearest, ties to even, saturated to +-448 (the satfinite
                                      conversion, __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
                                      NaN becomes the code 0x7F
    e4m3_decode(codes) -> float32     exact (0x7F and 0xFF are NaN)
    uniform(rng, shape, dtype, low, high)   uniform values in [low, high) in the stored form of `dtype`
    integers(rng, shape, low, high)         int32 uniform in [low, high], both ends included
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

E4M3_MAX = 448.0  # the largest finite E4M3 value, 1.75 * 2^8
E4M3_NAN = 0x7F  # the NaN code a conversion produces (0xFF, its negative twin, is NaN too)
# Storage of each element type (the same table as kernels/problems STORAGE_DTYPES, kept here so that this
# module imports nothing of the judge).
STORED = {"float32": "float32", "float16": "float16", "bfloat16": "uint16", "float8_e4m3": "uint8", "int32": "int32"}

_F32_EXP_BIAS = 127
_E4M3_EXP_BIAS = 7
_E4M3_MIN_NORMAL_BITS = 0x3C800000  # 2^-6 as float32 bits: below it E4M3 is subnormal (steps of 2^-9)


def xp_of(obj) -> ModuleType:
    """CuPy for CuPy arrays and generators, NumPy for everything else (CuPy is only imported when in use)."""
    if type(obj).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return np


def bf16_from_f32(x):
    """float32 -> BF16 bits (uint16), rounded to nearest, ties to even; overflow gives infinity as in CUDA; a NaN
    stays a NaN (its top half, made quiet).

    Written for the GPU's memory traffic, not for brevity: the judge converts multi-gigabyte caches with it every
    timed round (issue 45). On the GPU it is one elementwise kernel (read 4 bytes, write 2: `_CUPY_KERNELS`); on the
    CPU the same integer formula in place on one temporary. tests/kernels/test_problem_format.py holds the CPU path
    to the plain formula bit for bit, tests/kernels/test_gpu_dtypes.py the GPU path to the CPU's."""
    xp = xp_of(x)
    if xp is not np:
        return _cupy_kernel("bf16_from_f32")(xp.ascontiguousarray(x, dtype=xp.float32))
    bits = xp.ascontiguousarray(x, dtype=xp.float32).view(xp.uint32)
    # Adding 0x7FFF (+1 when the kept part is odd) carries into bit 16 exactly when the dropped half is over
    # one half, or exactly one half with an odd kept part: round to nearest even, in integers.
    rounded = bits >> xp.uint32(16)
    rounded &= xp.uint32(1)
    rounded += xp.uint32(0x7FFF)
    rounded += bits
    rounded >>= xp.uint32(16)
    is_nan = (bits & xp.uint32(0x7FFFFFFF)) > xp.uint32(0x7F800000)
    if bool(is_nan.any()):  # rare: only a problem's planted NaNs (uniform draws have none)
        rounded = xp.where(is_nan, (bits >> xp.uint32(16)) | xp.uint32(0x0040), rounded)
    return rounded.astype(xp.uint16)


def f32_from_bf16(bits):
    """BF16 bits (uint16) -> float32, exact: the bits are the top half of the float32."""
    xp = xp_of(bits)
    if xp is not np:
        return _cupy_kernel("f32_from_bf16")(xp.ascontiguousarray(bits, dtype=xp.uint16))
    wide = xp.ascontiguousarray(bits, dtype=xp.uint16).astype(xp.uint32)
    wide <<= xp.uint32(16)  # in place: one array, not two
    return wide.view(xp.float32)


# The GPU's versions of the conversions above, one pass each over the array (CuPy compiles each once per process
# and keeps it in its kernel cache). The rounding is the CPU path's integer formula; the scaling of a uniform draw
# is two separately rounded float32 operations (__fmul_rn, __fadd_rn: never contracted into one FMA), as NumPy
# computes `values *= high - low; values += low`.
_ROUND_BF16 = """
    unsigned int bits = __float_as_uint(v);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
        out = (unsigned short)((bits >> 16) | 0x0040u);
    } else {
        out = (unsigned short)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
    }
"""
_CUPY_KERNELS = {
    "bf16_from_f32": ("float32 x", "uint16 out", "float v = x;" + _ROUND_BF16),
    "f32_from_bf16": ("uint16 b", "float32 out", "out = __uint_as_float(((unsigned int)b) << 16);"),
    "uniform_bf16": (
        "float32 x, float32 scale, float32 low",
        "uint16 out",
        "float v = __fadd_rn(__fmul_rn(x, scale), low);" + _ROUND_BF16,
    ),
}
_cupy_compiled: dict = {}


def _cupy_kernel(name: str):
    if name not in _cupy_compiled:
        import cupy

        params, out, body = _CUPY_KERNELS[name]
        _cupy_compiled[name] = cupy.ElementwiseKernel(params, out, body, f"kernels_dtypes_{name}")
    return _cupy_compiled[name]


def e4m3_encode(x):
    """float32 -> E4M3 codes (uint8): nearest, ties to even, |x| > 448 saturated to 448, NaN -> 0x7F.

    Normal range (|x| >= 2^-6): the float32 bits with the exponent rebased from bias 127 to bias 7, shifted
    right by the 20 mantissa bits E4M3 drops, then rounded up when the dropped bits are over one half or
    exactly one half with an odd code (a carry into the exponent is the right result). Subnormal range: the
    value in units of 2^-9 (exact: a power-of-two scaling), rounded half to even by rint; 8 units is 2^-6,
    code 0x08, so both ranges meet."""
    xp = xp_of(x)
    x = xp.ascontiguousarray(x, dtype=xp.float32)
    bits = x.view(xp.uint32)
    sign = ((bits >> xp.uint32(24)) & xp.uint32(0x80)).astype(xp.uint8)
    mag = bits & xp.uint32(0x7FFFFFFF)
    # Normal range only: below 2^-6 the subtraction would wrap, and those elements take the other branch.
    rebased = xp.maximum(mag, xp.uint32(_E4M3_MIN_NORMAL_BITS)) - xp.uint32((_F32_EXP_BIAS - _E4M3_EXP_BIAS) << 23)
    code = rebased >> xp.uint32(20)
    dropped = rebased & xp.uint32(0xFFFFF)
    half = xp.uint32(0x80000)
    up = (dropped > half) | ((dropped == half) & ((code & xp.uint32(1)) == xp.uint32(1)))
    normal = code + up.astype(xp.uint32)
    # fmin also turns NaN and infinities (decided by the normal branch) into a harmless 2^-6 here.
    tiny = xp.fmin(xp.abs(x), xp.float32(2.0**-6))
    subnormal = xp.rint(tiny * xp.float32(512.0)).astype(xp.uint32)
    code = xp.where(mag < xp.uint32(_E4M3_MIN_NORMAL_BITS), subnormal, normal)
    code = xp.minimum(code, xp.uint32(0x7E)).astype(xp.uint8)  # 0x7E = 448; infinities saturate too
    code = code | sign
    return xp.where(mag > xp.uint32(0x7F800000), xp.uint8(E4M3_NAN), code)


def _e4m3_table() -> np.ndarray:
    """The value of each of the 256 codes, float32 (exact: at most 4 significant bits)."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp, mant = (codes >> 3) & 0xF, codes & 0x7
    magnitude = np.where(exp == 0, mant * 2.0**-9, (1 + mant / 8) * 2.0 ** (exp - _E4M3_EXP_BIAS))
    values = sign * magnitude
    values[(codes & 0x7F) == 0x7F] = np.nan
    return values.astype(np.float32)


E4M3_VALUES = _e4m3_table()


def e4m3_decode(codes):
    """E4M3 codes (uint8) -> float32, exact."""
    xp = xp_of(codes)
    return xp.asarray(E4M3_VALUES)[xp.asarray(codes, dtype=xp.uint8).astype(xp.intp)]


def uniform(rng, shape, dtype: str = "float32", low: float = -1.0, high: float = 1.0):
    """Uniform values in [low, high) (drawn in float32, then rounded to the element type: BF16 and FP8 by
    round to nearest even), returned as the type's stored array (uint16 bits, uint8 codes)."""
    xp = xp_of(rng)
    values = rng.random(shape, dtype=xp.float32)
    if dtype == "bfloat16" and xp is not np:  # one pass from the draw to the bits (issue 45: caches of gigabytes)
        return _cupy_kernel("uniform_bf16")(values, xp.float32(high - low), xp.float32(low))
    values *= xp.float32(high - low)
    values += xp.float32(low)
    if dtype == "float32":
        return values
    if dtype == "float16":
        return values.astype(xp.float16)
    if dtype == "bfloat16":
        return bf16_from_f32(values)
    if dtype == "float8_e4m3":
        return e4m3_encode(values)
    raise ValueError(f"uniform: no floating element type {dtype!r}")


def integers(rng, shape, low: int, high: int):
    """int32 uniform in [low, high], both ends included."""
    xp = xp_of(rng)
    return rng.integers(low, high + 1, size=shape, dtype=xp.int64).astype(xp.int32)


# ---- adversarial input families (issue 26) ------------------------------------------------------------------
# Each call of a problem's make_inputs draws its own mixture from the generator, so every round (and every
# misaligned round) sees other values in other places: a kernel cannot learn the inputs from one launch, and
# a shortcut that holds for one family (no zeros, a narrow range, the maximum in a fixed place) fails on another.

# BF16 subnormals run from 2^-133 to just under 2^-126 (FP32's too): values there test that a kernel does not
# turn them into NaN or garbage; flushing them to zero is allowed (compare.element_allowance).
SUBNORMAL_EXPONENTS = (-133.0, -127.0)


def signed_powers(rng, shape, low_exp: float, high_exp: float):
    """float32 values +-2^u, u uniform in [low_exp, high_exp), random signs: every binade between equally
    likely, a heavy-tailed spread where a few values dwarf the rest."""
    xp = xp_of(rng)
    magnitude = xp.exp2(uniform(rng, shape, low=low_exp, high=high_exp))
    return xp.where(rng.random(shape, dtype=xp.float32) < 0.5, -magnitude, magnitude).astype(xp.float32)


def sprinkle(rng, values, fraction: float, fill):
    """`values` (float32) with a random `fraction` of its elements replaced by `fill` (a scalar or an array of
    the same shape)."""
    xp = xp_of(rng)
    chosen = rng.random(values.shape, dtype=xp.float32) < fraction
    return xp.where(chosen, xp.asarray(fill, dtype=xp.float32), values).astype(xp.float32)


def zero_tiles(rng, values, tile: int, fraction: float):
    """A 2-D float32 `values` with a random `fraction` of its tile x tile blocks (ragged at the edges) set to
    exact zeros: a kernel that guesses a tile is zero from one element, or skips the zero ones wrongly, shows."""
    xp = xp_of(rng)
    rows, cols = values.shape
    blocks = rng.random(((rows + tile - 1) // tile, (cols + tile - 1) // tile), dtype=xp.float32) < fraction
    mask = xp.repeat(xp.repeat(blocks, tile, axis=0), tile, axis=1)[:rows, :cols]
    return xp.where(mask, xp.float32(0.0), values).astype(xp.float32)


def subnormals(rng, shape):
    """float32 values in the subnormal range of FP32 and BF16, random signs."""
    return signed_powers(rng, shape, *SUBNORMAL_EXPONENTS)


def pick(rng, count: int) -> int:
    """One of `count` families, drawn from the generator (so the seed, secret on ranked runs, decides it)."""
    return int(rng.integers(0, count))

"""The issue-14 problems' maths on the CPU: the problem definitions as PROBLEMS14 states them, the element-type
conversions of kernels/problems/dtypes.py against brute-force searches over every code, each reference against
an independent computation (its make_inputs and reference are array-module generic, so they run here on NumPy),
the inputs doing what they are there for (large logits, exact and near FP8 ties, rows where eps matters), the
kernel argument lists of every submission file, and the known-bad submissions compiling. On the GPU (marker
`gpu`): every known-bad submission gets the verdict its manifest names."""

import itertools
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from kernels import compiler, problems
from kernels.problems import dtypes
from kernels.results import Verdict

from .conftest import BAD, read

NEW = ["transpose", "reduce_sum", "prefix_sum", "softmax", "rmsnorm", "swiglu", "gemv", "fp8_quant"]
ISSUE15 = ["bf16_gemm"]  # its bad files are checked in test_hopper_plans.py (kernels take tensor maps too)
ISSUE16 = ["attention", "paged_decode"]  # their maths and mistakes: test_attention.py, test_paged_decode.py
MANIFEST = tomllib.loads((BAD / "manifest.toml").read_text())["bad"]
REFERENCE_RUNGS = Path(__file__).parents[2] / "kernels" / "reference"

# PROBLEMS14.md: the kernel parameters in order, the test shapes and the benchmark shapes.
CONTRACTS = {
    "transpose": (
        "int M, int N, const float* in, float* out",
        [(1, 1), (17, 33), (1000, 999), (4097, 31), (31, 4097)],
        [(8192, 8192)],
    ),
    "reduce_sum": (
        "int N, const float* x, float* out, float* workspace",
        [(1,), (1000,), (4097,), (1048579,)],
        [(2**28,)],
    ),
    "prefix_sum": (
        "int N, const int* x, int* y, int* workspace",
        [(1,), (1000,), (4097,), (1048579,)],
        [(2**28,)],
    ),
    "softmax": (
        "int rows, int cols, const float* x, float* y",
        [(1, 1), (3, 1000), (17, 4097), (64, 33333)],
        [(4096, 4096), (32, 131072)],
    ),
    "rmsnorm": (
        "int rows, int hidden, float eps, const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y",
        [(1, 1), (3, 1000), (17, 4097), (129, 8191)],
        [(8192, 4096)],
    ),
    "swiglu": (
        "int tokens, int inter, const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out",
        [(1, 1), (3, 1000), (17, 4097), (129, 8191)],
        [(8192, 14336)],
    ),
    "gemv": (
        "int N, int K, int B, const __nv_bfloat16* W, const __nv_bfloat16* x, __nv_bfloat16* y",
        [(1, 1, 1), (1000, 999, 1), (4097, 33, 8), (257, 4099, 8)],
        [(8192, 8192, 1), (8192, 8192, 8)],
    ),
    "fp8_quant": (
        "int rows, int cols, const __nv_bfloat16* x, __nv_fp8_e4m3* q, float* scales",
        [(1, 1), (3, 1000), (17, 4097), (129, 8191)],
        [(8192, 8192)],
    ),
}


def inputs_and_reference(name, shape):
    problem = problems.load(name)
    module = problem.module()
    inputs = module.make_inputs(shape.sizes, np.random.default_rng(shape.seed), problem.params)
    return problem, inputs, module.reference(inputs, shape.sizes, problem.params)


# --- the problem definitions -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NEW)
def test_each_problem_loads_with_the_contract_of_problems14(name):
    signature, tests, benchmarks = CONTRACTS[name]
    problem = problems.load(name)
    assert problem.signature() == signature
    assert [tuple(s.sizes.values()) for s in problem.tests] == tests
    assert [tuple(s.sizes.values()) for s in problem.benchmarks] == benchmarks
    assert problem.compute_unit == "memory" and problem.unit == "GB/s" and problem.baseline_name
    seeds = [s.seed for s in problem.tests + problem.benchmarks]
    assert len(set(seeds)) == len(seeds)
    for sizes in problem.all_shapes():
        assert problem.bytes_moved(sizes) > 0 and problem.flops(sizes) >= 0
    module = problem.module()
    assert callable(module.make_inputs) and callable(module.reference) and callable(module.baseline)


def test_seeds_are_unique_across_all_problems():
    seeds = [
        s.seed for name in problems.available() for s in problems.load(name).tests + problems.load(name).benchmarks
    ]
    assert len(set(seeds)) == len(seeds)


def test_bytes_count_each_input_read_once_and_each_output_written_once():
    expected = {
        "transpose": 2 * 4 * 8192 * 8192,
        "reduce_sum": 4 * 2**28 + 4,
        "prefix_sum": 8 * 2**28,
        "softmax": 8 * 4096 * 4096,
        "rmsnorm": 2 * (2 * 8192 * 4096 + 4096),
        "swiglu": 6 * 8192 * 14336,
        "gemv": 2 * (8192 * 8192 + 8192 + 8192),  # B = 1
        "fp8_quant": 3 * 8192 * 8192 + 4 * 8192,
    }
    for name, nbytes in expected.items():
        problem = problems.load(name)
        assert problem.bytes_moved(problem.benchmarks[0].sizes) == nbytes, name


def test_outputs_workspaces_and_exactness():
    load = problems.load
    assert load("transpose").is_exact("out") and load("prefix_sum").is_exact("y")
    assert load("fp8_quant").outputs == ("q", "scales") and all(map(load("fp8_quant").is_exact, ("q", "scales")))
    assert [w.name for w in load("reduce_sum").workspaces] == ["workspace"]
    assert load("reduce_sum").workspace_count("workspace", {"N": 1}) == 65536
    assert load("prefix_sum").workspace_count("workspace", {"N": 1}) == 1048576
    assert load("rmsnorm").params == {"eps": 1e-6}
    for name in ("softmax", "rmsnorm", "swiglu", "gemv", "reduce_sum"):
        assert not load(name).is_exact(load(name).output)


# --- BF16 -------------------------------------------------------------------------------------------------------


def bf16_brute_force(x: np.ndarray) -> np.ndarray:
    """The nearest BF16 code by search over every non-negative finite code (plus infinity standing at 2^128,
    where IEEE rounding puts the overflow threshold), ties to the even code; NaN -> a quiet NaN."""
    codes = np.arange(0x7F81, dtype=np.uint32)
    values = (codes << 16).view(np.float32).astype(np.float64)
    values[0x7F80] = 2.0**128
    with np.errstate(invalid="ignore"):  # signalling NaNs among the random bit patterns
        magnitude = np.abs(x.astype(np.float64))
    above = np.clip(np.searchsorted(values, magnitude), 1, len(values) - 1)
    below = above - 1
    d_below, d_above = magnitude - values[below], values[above] - magnitude
    pick = np.where((d_above < d_below) | ((d_above == d_below) & (above % 2 == 0)), above, below)
    pick = np.where(magnitude <= values[0], 0, pick).astype(np.uint32)
    sign = (x.view(np.uint32) >> 16) & 0x8000
    nan = (x.view(np.uint32) >> 16) & 0xFFFF | 0x40
    return np.where(np.isnan(x), nan, pick | sign).astype(np.uint16)


def random_floats(rng, n: int) -> np.ndarray:
    """float32 values of every kind: random bit patterns, exact BF16 midpoints, and specials."""
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    midpoints = (rng.integers(0, 2**16, size=n, dtype=np.uint64).astype(np.uint32) << 16) | 0x8000
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3.4028235e38, -3.4028235e38, 1e-45, 1e-40])
    return np.concatenate([bits.view(np.float32), midpoints.view(np.float32), specials.astype(np.float32)])


def test_bf16_from_f32_is_round_to_nearest_even_by_brute_force():
    x = random_floats(np.random.default_rng(1), 200_000)
    got, want = dtypes.bf16_from_f32(x), bf16_brute_force(x)
    finite = ~np.isnan(x)
    assert np.array_equal(got[finite], want[finite])
    assert np.isnan(dtypes.f32_from_bf16(got[~finite])).all()


def test_bf16_known_values():
    f = np.float32
    table = {
        1.0: 0x3F80,
        1 + 2**-8: 0x3F80,  # a tie: to the even code
        1 + 3 * 2**-8: 0x3F82,  # a tie: to the even code, upwards
        1 + 2**-8 + 2**-20: 0x3F81,  # just over the tie
        -2.0: 0xC000,
        3.4028235e38: 0x7F80,  # over the largest BF16 plus half an ulp: infinity, as __float2bfloat16_rn
        1e-45: 0x0000,
    }
    for value, code in table.items():
        assert int(dtypes.bf16_from_f32(np.array([value], f))[0]) == code, value
    codes = np.arange(0x7F80, dtype=np.uint16)  # every finite non-negative code survives the round trip
    assert np.array_equal(dtypes.bf16_from_f32(dtypes.f32_from_bf16(codes)), codes)
    assert np.array_equal(dtypes.bf16_from_f32(dtypes.f32_from_bf16(codes | 0x8000)), codes | 0x8000)


# --- FP8 E4M3 ---------------------------------------------------------------------------------------------------


def e4m3_value(code: int) -> float:
    """One code's value from the format's definition: sign, 4 exponent bits (bias 7), 3 mantissa bits."""
    code = int(code)
    sign = -1.0 if code & 0x80 else 1.0
    exponent, mantissa = (code >> 3) & 0xF, code & 0x7
    if exponent == 0xF and mantissa == 0x7:
        return math.nan
    if exponent == 0:
        return sign * mantissa * 2.0**-9
    return sign * (1 + mantissa / 8) * 2.0 ** (exponent - 7)


def e4m3_brute_force(x: np.ndarray) -> np.ndarray:
    """Search over all 256 codes: the finite code of x's sign nearest to x, ties to the even code; beyond 448
    (infinities included) 448 (satfinite); NaN -> 0x7F."""
    values = np.array([e4m3_value(c) for c in range(256)])
    out = np.empty(x.shape, dtype=np.uint8)
    for i, v in enumerate(x.astype(np.float64)):
        if np.isnan(v):
            out[i] = 0x7F
            continue
        sign = 0x80 if np.signbit(v) else 0
        if abs(v) > 448:  # satfinite: past the largest finite value, that value
            out[i] = sign | 0x7E
            continue
        candidates = list(range(sign, sign + 0x7F))  # 0x7F / 0xFF (NaN) excluded
        distances = [abs(values[c] - v) for c in candidates]
        best = min(distances)
        nearest = [c for c, d in zip(candidates, distances, strict=True) if d == best]
        out[i] = next((c for c in nearest if c % 2 == 0), nearest[0])
    return out


def e4m3_test_values(rng) -> np.ndarray:
    finite = np.array([e4m3_value(c) for c in range(256) if c & 0x7F != 0x7F])
    positive = np.unique(np.abs(finite))
    midpoints = (positive[:-1] + positive[1:]) / 2  # every tie, subnormal ones included
    near = np.concatenate([np.nextafter(midpoints.astype(np.float32), np.float32(np.inf)),
                           np.nextafter(midpoints.astype(np.float32), np.float32(0))])  # fmt: skip
    magnitudes = np.exp2(rng.uniform(-14, 10, size=3000))
    specials = [0.0, -0.0, 448.0, 449.0, 463.9, 464.0, 464.1, 480.0, 1e30, np.inf, -np.inf, np.nan, 2.0**-10, 1e-45]
    values = np.concatenate([finite, midpoints, near, magnitudes, specials]).astype(np.float32)
    signs = np.where(rng.random(values.size) < 0.5, -1, 1).astype(np.float32)
    return np.concatenate([values, values * signs])


def test_e4m3_encode_is_nearest_even_with_saturation_by_brute_force():
    x = e4m3_test_values(np.random.default_rng(2))
    assert np.array_equal(dtypes.e4m3_encode(x), e4m3_brute_force(x))


def test_e4m3_known_codes_and_decode():
    f = np.float32
    table = [(448.0, 0x7E), (-448.0, 0xFE), (1.0, 0x38), (-2.0, 0xC0), (2.0**-6, 0x08), (2.0**-9, 0x01)]
    table += [(0.0, 0x00), (-0.0, 0x80), (1.0625, 0x38), (1.1875, 0x3A), (3 * 2.0**-10, 0x02), (2.0**-10, 0x00)]
    table += [(464.0, 0x7E), (1e9, 0x7E), (-np.inf, 0xFE), (np.nan, 0x7F)]
    for value, code in table:
        assert int(dtypes.e4m3_encode(np.array([value], f))[0]) == code, value
    codes = np.arange(256, dtype=np.uint8)
    decoded = dtypes.e4m3_decode(codes)
    assert np.array_equal(np.isnan(decoded), (codes & 0x7F) == 0x7F)
    finite = ~np.isnan(decoded)
    assert np.array_equal(decoded[finite], np.array([e4m3_value(c) for c in codes[finite]], dtype=np.float32))
    assert np.array_equal(dtypes.e4m3_encode(decoded[finite]), codes[finite])  # every finite code round-trips


def test_generators_give_the_stored_types_and_ranges():
    rng = np.random.default_rng(3)
    u = dtypes.uniform(rng, (1000,), low=-3.0, high=5.0)
    assert u.dtype == np.float32 and u.min() >= -3 and u.max() < 5 and u.std() > 1
    b = dtypes.uniform(rng, (10, 100), "bfloat16")
    assert b.dtype == np.uint16 and b.shape == (10, 100) and np.abs(dtypes.f32_from_bf16(b)).max() <= 1
    q = dtypes.uniform(rng, (100,), "float8_e4m3", low=0, high=448)
    assert q.dtype == np.uint8 and (q <= 0x7E).all()
    assert dtypes.uniform(rng, (3,), "float16").dtype == np.float16
    i = dtypes.integers(rng, (100_000,), -1000, 1000)
    assert i.dtype == np.int32 and i.min() == -1000 and i.max() == 1000
    with pytest.raises(ValueError):
        dtypes.uniform(rng, (3,), "int32")


# --- the references against independent computations ------------------------------------------------------------


def test_transpose_reference_and_inputs():
    for shape in problems.load("transpose").tests:
        _, inputs, ref = inputs_and_reference("transpose", shape)
        m, n = shape.sizes["M"], shape.sizes["N"]
        assert ref.shape == (n, m) and ref.dtype == np.float32
        i, j = m // 2, n - 1
        assert ref[j, i] == inputs["in"][i, j] and ref[0, m - 1] == inputs["in"][m - 1, 0]


def test_reduce_sum_reference_is_the_exact_sum():
    for shape in problems.load("reduce_sum").tests:
        _, inputs, ref = inputs_and_reference("reduce_sum", shape)
        assert ref.shape == (1,) and ref.dtype == np.float64
        assert ref[0] == pytest.approx(math.fsum(inputs["x"].tolist()), rel=1e-12, abs=1e-9)


def test_prefix_sum_reference_is_the_inclusive_scan():
    for shape in problems.load("prefix_sum").tests[:3]:
        _, inputs, ref = inputs_and_reference("prefix_sum", shape)
        wrapped = [(v + 2**31) % 2**32 - 2**31 for v in itertools.accumulate(inputs["x"].tolist())]  # int32 sums
        assert ref.dtype == np.int32 and ref.tolist() == wrapped


def test_prefix_sum_draws_small_full_range_and_sparse_inputs():
    module = problems.load("prefix_sum").module()
    drawn = [module.make_inputs({"N": 4097}, np.random.default_rng(seed), {})["x"] for seed in range(30)]
    assert any(np.abs(x).max() <= 1000 for x in drawn)
    assert any(np.abs(x.astype(np.int64)).max() > 2**30 and (x == 0).mean() < 0.1 for x in drawn)
    assert any((x == 0).mean() > 0.9 for x in drawn)


def test_softmax_reference_and_the_large_logits():
    for shape in problems.load("softmax").tests:
        _, inputs, ref = inputs_and_reference("softmax", shape)
        x = inputs["x"].astype(np.float64)
        assert np.isfinite(ref).all() and np.allclose(ref.sum(axis=1), 1.0, rtol=1e-12)
        row = x.shape[0] // 2
        top = x[row].max()
        e = [math.exp(v - top) for v in x[row]]
        assert ref[row, 0] == pytest.approx(e[0] / math.fsum(e), rel=1e-12)
        assert np.abs(x).max() <= 1.6e4
    _, inputs, _ = inputs_and_reference("softmax", problems.load("softmax").tests[-1])  # 64 x 33333
    x = inputs["x"].astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # offsets up to +-1e4: without the shift, inf / inf, 0 / 0
        unshifted = np.exp(inputs["x"]) / np.exp(inputs["x"]).sum(axis=1, keepdims=True)
    assert np.isnan(unshifted).all(axis=1).mean() > 0.8
    spreads = x.max(axis=1) - x.min(axis=1)
    assert spreads.max() > 500  # far beyond exp's range of 88
    # Rows whose maximum stands far above the first 256 elements: a partial maximum overflows exp there.
    assert ((x.max(axis=1) - x[:, :256].max(axis=1)) > 88).sum() >= 3


def test_softmax_rows_change_kind_between_calls():
    module = problems.load("softmax").module()
    sizes = {"rows": 64, "cols": 1000}
    first, second = (module.make_inputs(sizes, np.random.default_rng(seed), {})["x"] for seed in (1, 2))
    offsets = first.mean(axis=1) - second.mean(axis=1)
    assert (np.abs(offsets) > 100).mean() > 0.8  # a row's maximum from one launch is wrong in the next


def test_rmsnorm_reference_row_by_row_and_eps_matters():
    problem = problems.load("rmsnorm")
    eps = float(np.float32(1e-6))
    for shape in problem.tests:
        _, inputs, ref = inputs_and_reference("rmsnorm", shape)
        x = dtypes.f32_from_bf16(inputs["x"]).astype(np.float64)
        w = dtypes.f32_from_bf16(inputs["w"]).astype(np.float64)
        r, c = x.shape[0] - 1, x.shape[1] // 3
        inv_rms = 1 / math.sqrt(math.fsum((x[r] ** 2).tolist()) / x.shape[1] + eps)
        assert ref[r, c] == pytest.approx(x[r, c] * inv_rms * w[c], rel=1e-12)
    mean_squares = (x**2).mean(axis=1)
    assert (mean_squares < 10 * eps).any() and (mean_squares > 1e4 * eps).any()  # rows where eps counts, and not


def test_swiglu_reference_element_by_element():
    for shape in problems.load("swiglu").tests[:3]:
        _, inputs, ref = inputs_and_reference("swiglu", shape)
        g = dtypes.f32_from_bf16(inputs["gate"]).astype(np.float64).ravel()
        u = dtypes.f32_from_bf16(inputs["up"]).astype(np.float64).ravel()
        want = [gi / (1 + math.exp(-gi)) * ui for gi, ui in zip(g, u, strict=True)]
        assert np.allclose(ref.ravel(), want, rtol=1e-13, atol=0)
        if g.size > 100:
            assert g.min() < -5 and g.max() > 5


def test_gemv_reference_as_dot_products():
    for shape in problems.load("gemv").tests:
        _, inputs, ref = inputs_and_reference("gemv", shape)
        n_, k_, b_ = shape.sizes["N"], shape.sizes["K"], shape.sizes["B"]
        w = dtypes.f32_from_bf16(inputs["W"]).astype(np.float64)
        x = dtypes.f32_from_bf16(inputs["x"]).astype(np.float64)
        assert ref.shape == (b_, n_)
        for b, n in {(0, 0), (b_ - 1, n_ - 1), (b_ // 2, n_ // 2)}:
            assert ref[b, n] == pytest.approx(math.fsum((w[n] * x[b]).tolist()), rel=1e-9, abs=1e-12)
        assert w.shape == (n_, k_)


def fp8_twin(x_bits: np.ndarray, reciprocal: bool = False):
    """fp8_quant as a kernel computes it, in NumPy FP32 (IEEE division, as NVRTC's default)."""
    x = dtypes.f32_from_bf16(x_bits)
    scales = np.maximum(np.abs(x).max(axis=1), np.float32(1e-12)) / np.float32(448.0)
    v = x * (np.float32(1) / scales)[:, None] if reciprocal else x / scales[:, None]
    return dtypes.e4m3_encode(v), scales, v


@pytest.mark.parametrize("index", range(4))
def test_fp8_quant_reference_equals_fp32_division(index):
    """The reference divides in float64 and rounds to float32; that is the correctly rounded FP32 quotient."""
    shape = problems.load("fp8_quant").tests[index]
    _, inputs, ref = inputs_and_reference("fp8_quant", shape)
    codes, scales, _ = fp8_twin(inputs["x"])
    assert ref["q"].dtype == np.uint8 and ref["scales"].dtype == np.float32
    assert np.array_equal(ref["scales"].view(np.uint32), scales.view(np.uint32))
    assert np.array_equal(ref["q"], codes)


def test_fp8_quant_inputs_catch_truncation_half_away_and_the_reciprocal():
    problem = problems.load("fp8_quant")
    _, inputs, ref = inputs_and_reference("fp8_quant", problem.tests[3])
    codes, scales, quotients = fp8_twin(inputs["x"])
    positive = np.unique(np.abs(dtypes.E4M3_VALUES[(np.arange(256) & 0x7F) != 0x7F]))
    midpoints = (positive[:-1] + positive[1:]) / 2
    ties = np.isin(np.abs(quotients), midpoints)
    assert (ties.mean(axis=1) > 0.3).sum() >= 5  # rows of exact ties, a power-of-two scale
    assert (ref["q"][ties] & 1 == 0).all()  # resolved to the even code
    up = dtypes.e4m3_encode(np.nextafter(np.abs(quotients[ties]), np.float32(np.inf)))
    assert (up != ref["q"][ties] & 0x7F).mean() > 0.4  # half away from zero differs on the odd-below ties
    reciprocal, _, _ = fp8_twin(inputs["x"], reciprocal=True)
    differs = (reciprocal != ref["q"]).sum(axis=1)
    assert (differs > 100).sum() >= 5  # the near-tie rows catch x * (1 / scale)
    zero = (inputs["x"] == 0).all(axis=1)
    assert zero.sum() >= 5 and (ref["q"][zero] == 0).all()
    assert (scales[zero] == np.float32(1e-12) / np.float32(448)).all()  # zero rows
    assert np.abs(quotients).max() < 449  # 448 but for the scale's rounding: saturation never needed
    magnitudes = np.log10(scales[scales > 1e-14])
    assert magnitudes.max() - magnitudes.min() > 10  # rows many orders of magnitude apart


def test_fp8_reciprocal_traps_are_what_they_claim():
    from kernels.problems.fp8_quant.reference import reciprocal_traps

    amaxes, traps = reciprocal_traps()
    assert len(amaxes) > 10 and ((amaxes > 1) & (amaxes < 2)).all()
    for amax, xs in zip(amaxes, traps, strict=True):
        scale = amax / np.float32(448)
        assert (xs <= amax).all() and np.array_equal(dtypes.f32_from_bf16(dtypes.bf16_from_f32(xs)), xs)
        assert (dtypes.e4m3_encode(xs / scale) != dtypes.e4m3_encode(xs * (np.float32(1) / scale))).all()


# --- submission files ------------------------------------------------------------------------------------------


def kernel_parameters(source: str) -> dict[str, str]:
    """Each __global__ kernel's parameter list, normalised ("const float* x, int N")."""
    source = re.sub(r"//[^\n]*|/\*.*?\*/", " ", source, flags=re.S)
    qualifiers = r"(?:(?:__launch_bounds__|__cluster_dims__)\s*\([^)]*\)\s*|void\s+|extern\s+\"C\"\s+)*"
    found = {}
    for match in re.finditer(r"__global__\s+" + qualifiers + r"(\w+)\s*\(([^)]*)\)", source):
        params = [
            re.sub(r"\s*\*\s*", "* ", " ".join(p.replace("__restrict__", "").split())) for p in match[2].split(",")
        ]
        found[match[1]] = ", ".join(p.strip() for p in params)
    return found


def submission_files():
    files = [(problems.PROBLEMS_DIR / name / "example.cu", name) for name in NEW + ISSUE16]
    files += [(BAD / entry["file"], entry["problem"]) for entry in MANIFEST if entry["problem"] in NEW + ISSUE16]
    # The rungs (NN_*.cu); a sweep's template (sweep_*.cu) is not a submission until its variables are filled.
    files += [
        (path, name) for name in NEW + ISSUE16 for path in sorted((REFERENCE_RUNGS / name).glob("[0-9][0-9]_*.cu"))
    ]
    return files


@pytest.mark.parametrize("path, name", submission_files(), ids=lambda v: getattr(v, "name", v))
def test_every_kernel_takes_the_problems_arguments_in_order(path, name):
    """Examples, reference rungs and known-bad files: each kernel's parameters are the problem's, in order."""
    kernels = kernel_parameters(read(path))
    assert kernels, path
    for kernel, params in kernels.items():
        # A Hopper kernel takes its plan's tensor maps after the problem's arguments (the judge appends them).
        params = re.sub(r"(, const __grid_constant__ CUtensorMap \w+)+$", "", params)
        assert params == problems.load(name).signature(), (path.name, kernel)


def test_the_manifest_lists_every_issue14_bad_file():
    listed = {entry["file"] for entry in MANIFEST}
    on_disk = {p.name for p in BAD.glob("*__*.cu")}
    assert listed == on_disk
    for entry in MANIFEST:
        assert entry["problem"] in NEW + ISSUE15 + ISSUE16 and entry["file"].startswith(entry["problem"] + "__")
        assert Verdict(entry["verdict"]) and entry["what"]
    assert {entry["problem"] for entry in MANIFEST} == set(NEW + ISSUE15 + ISSUE16)


@pytest.mark.slow  # NVRTC in a worker process, about a second each
@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["file"])
def test_each_bad_file_compiles_with_a_valid_plan(entry):
    result = compiler.compile_submission(read(BAD / entry["file"]), entry["problem"], arch="sm_90")
    if entry["verdict"] == Verdict.PLAN_ERROR.value:  # refused on the CPU, before NVRTC and any GPU
        assert result.verdict is Verdict.PLAN_ERROR and entry["message"] in result.message, result.message
        return
    assert result.verdict is Verdict.COMPILED, (result.message, result.log)
    assert entry["verdict"] != Verdict.COMPILED.value

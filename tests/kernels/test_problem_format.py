"""problem.toml's keys for issue 14 (several outputs, exact outputs, workspaces, BF16 / FP8 / int32 pointers,
memory-bound problems) and the comparison of outputs, on the CPU: the judge's own comparison (kernels/compare.py)
runs on NumPy arrays here exactly as it runs on CuPy arrays on the GPU."""

import copy

import numpy as np
import pytest

from kernels import problems
from kernels.compare import E4M3_VALUES, compare_outputs, expected_from, to_float64
from kernels.problems import TOLERANCE_FACTOR, ProblemError, dtypes, parse, poison_value

U32, U16, U8 = 2.0**-24, 2.0**-11, 2.0**-8  # unit roundoff of float32, float16, bfloat16

# A quantiser-like problem: a BF16 input, an FP8 output, an exact float32 output, a workspace.
BASE = {
    "name": "toy",
    "title": "toy",
    "statement": "toy",
    "sizes": ["rows", "cols"],
    "args": [
        {"name": "rows", "type": "int"},
        {"name": "cols", "type": "int"},
        {"name": "eps", "type": "float", "value": 1e-6},
        {"name": "x", "type": "const __nv_bfloat16*"},
        {"name": "q", "type": "__nv_fp8_e4m3*"},
        {"name": "scales", "type": "float*"},
        {"name": "y", "type": "__nv_bfloat16*"},
        {"name": "workspace", "type": "int*", "workspace": "cdiv(rows * cols, 1024) + 1"},
    ],
    "outputs": ["q", "scales", "y"],
    "exact": ["scales"],
    "accumulate_dtype": "float32",
    "reduction": "cols",
    "compute_unit": "memory",
    "unit": "GB/s",
    "baseline": "none",
    "flops": "0",
    "bytes": "2 * rows * cols + rows * cols + 4 * rows + 2 * rows * cols",
    "tests": [{"rows": 1, "cols": 1, "seed": 1}, {"rows": 17, "cols": 4097, "seed": 2}],
    "benchmarks": [{"rows": 8192, "cols": 8192, "seed": 3}],
}


def toy(**changes):
    data = copy.deepcopy(BASE)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return parse(data)


def with_arg(name, **fields):
    args = copy.deepcopy(BASE["args"])
    for arg in args:
        if arg["name"] == name:
            arg.update(fields)
            for key in [k for k, v in fields.items() if v is None]:
                del arg[key]
    return args


# ---- loading ----------------------------------------------------------------------------------------------


def test_new_keys_load():
    problem = toy()
    assert problem.outputs == problem.output_names == ("q", "scales", "y") and problem.output == "q"
    assert [w.name for w in problem.workspaces] == ["workspace"]
    assert problem.is_exact("q") and problem.is_exact("scales") and not problem.is_exact("y")
    assert problem.is_memory_bound and problem.unit == "GB/s"
    assert problem.params == {"eps": 1e-6}
    assert problem.signature() == (
        "int rows, int cols, float eps, const __nv_bfloat16* x, __nv_fp8_e4m3* q, float* scales, "
        "__nv_bfloat16* y, int* workspace"
    )


def test_old_single_output_key_still_loads():
    args = [a for a in BASE["args"] if a["name"] not in ("q", "scales")]
    problem = toy(outputs=None, output="y", exact=None, args=args)
    assert problem.outputs == ("y",) and problem.output == "y" and problem.exact == ()
    for name in ("sgemm", "hgemm", "vector_add"):
        old = problems.load(name)
        assert old.outputs == ("C",) and not old.workspaces and old.unit == "TFLOP/s"


@pytest.mark.parametrize(
    "pointer, dtype, storage",
    [
        ("float*", "float32", "float32"),
        ("const __half*", "float16", "float16"),
        ("const __nv_bfloat16*", "bfloat16", "uint16"),
        ("__nv_bfloat16*", "bfloat16", "uint16"),
        ("__nv_fp8_e4m3*", "float8_e4m3", "uint8"),
        ("const __nv_fp8_e4m3*", "float8_e4m3", "uint8"),
        ("int*", "int32", "int32"),
        ("const int*", "int32", "int32"),
    ],
)
def test_pointer_types_and_their_storage(pointer, dtype, storage):
    spec = problems.ArgSpec("p", pointer)
    assert spec.dtype == dtype and spec.storage_dtype == storage


def test_poison_values():
    assert np.isnan(poison_value("float32")) and poison_value("float32").dtype == np.float32
    assert np.isnan(poison_value("float16")) and poison_value("float16").dtype == np.float16
    assert poison_value("bfloat16") == 0x7FC0 and poison_value("bfloat16").dtype == np.uint16
    assert np.isnan(to_float64(np.array([poison_value("bfloat16")]), "bfloat16")[0])
    assert poison_value("int32").dtype == np.int32 and np.uint32(poison_value("int32").view(np.uint32)) == 0xA5A5A5A5
    assert poison_value("float8_e4m3") == 0x7F and np.isnan(E4M3_VALUES[0x7F])


def test_workspace_count_is_resolved_at_every_shape():
    problem = toy()
    assert problem.workspace_count("workspace", {"rows": 1, "cols": 1}) == 2
    assert problem.workspace_count("workspace", {"rows": 17, "cols": 4097}) == 69 + 1
    assert toy(args=with_arg("workspace", workspace="65536")).workspace_count("workspace", {"rows": 1, "cols": 1}) == (
        65536
    )


@pytest.mark.parametrize(
    "changes, fragment",
    [
        ({"output": "y"}, "either output (one) or outputs"),
        ({"outputs": None}, "names no output"),
        ({"outputs": []}, "outputs is empty"),
        ({"outputs": ["q", "q"]}, "names one output twice"),
        ({"outputs": ["x"]}, "output 'x' must be a writable (non-const) pointer"),
        ({"outputs": ["nope"]}, "output 'nope' is not an argument"),
        ({"outputs": ["q", "scales", "y", "workspace"]}, "output 'workspace' must be a writable"),
        ({"exact": ["x"]}, "exact names 'x', which is not one of the outputs"),
        ({"exact": "scales"}, "exact must be a list"),
        ({"outputs": ["q", "y"], "exact": []}, "'scales' is a writable pointer but neither an output nor a workspace"),
        ({"args": with_arg("workspace", type="const int*")}, "workspace 'workspace' must be a writable"),
        ({"args": with_arg("workspace", workspace="rows - 1")}, "workspace 'workspace' would hold 0 elements"),
        ({"args": with_arg("workspace", workspace="cdiv(rows, P)")}, "unknown name 'P'"),
        ({"args": with_arg("x", type="const double*")}, "unsupported type 'const double*'"),
        ({"args": with_arg("x", dims="rows")}, "unknown keys ['dims']"),
        ({"args": with_arg("x", shape="rows")}, "has shape 'rows', not a list of expressions"),
        ({"args": with_arg("eps", shape=["rows"])}, "only arrays (pointers that are not workspaces) have a shape"),
        ({"args": with_arg("workspace", shape=["rows"])}, "only arrays (pointers that are not workspaces)"),
        ({"args": with_arg("x", shape=["rows - 1", "cols"])}, "every extent must be at least 1"),
        ({"args": with_arg("x", value=1.0)}, "pointer 'x' cannot have a value"),
        ({"args": with_arg("eps", value="small")}, "not a number"),
        ({"colour": "blue"}, "unknown keys ['colour']"),
        ({"flops": None}, "lacks 'flops'"),
        ({"compute_unit": "fp64"}, "unknown compute_unit 'fp64'"),
        ({"unit": "GiB/s"}, "unknown unit 'GiB/s'"),
        ({"accumulate_dtype": "float8"}, "unknown accumulate_dtype"),
        ({"compute_unit": "fp32"}, "flops = 0; it must be positive"),
        ({"bytes": "rows - 1"}, "bytes = 0; it must be positive"),
        ({"tests": [{"rows": 1, "seed": 1}]}, "lacks cols"),
        ({"benchmarks": []}, "needs test and benchmark shapes"),
        ({"output_is_input": "yes"}, "output_is_input must be true or false"),
    ],
)
def test_validation_errors_say_what_is_wrong(changes, fragment):
    with pytest.raises(ProblemError) as error:
        toy(**changes)
    assert fragment in str(error.value)
    assert str(error.value).startswith("toy")


# ---- tolerance -------------------------------------------------------------------------------------------


def test_tolerance_per_output_type():
    problem = toy()
    sizes = {"rows": 3, "cols": 1024}
    assert problem.tolerance(sizes, "q") == 0.0  # FP8: always exact
    assert problem.tolerance(sizes, "scales") == 0.0  # listed in exact
    # BF16 output of an FP32 sum: the sum's bound plus one BF16 rounding.
    assert problem.tolerance(sizes, "y") == pytest.approx(TOLERANCE_FACTOR * U32 * 32 + U8)
    fp16 = toy(args=with_arg("y", type="__half*"))
    assert fp16.tolerance(sizes, "y") == pytest.approx(TOLERANCE_FACTOR * U32 * 32 + U16)
    # A float32 output of a float32 sum: the output's rounding is one the sum's bound already counts.
    fp32 = toy(args=with_arg("y", type="float*"))
    assert fp32.tolerance(sizes, "y") == pytest.approx(TOLERANCE_FACTOR * U32 * 32)
    assert toy(args=with_arg("q", type="int*")).tolerance(sizes, "q") == 0.0  # int32: always exact
    assert toy(exact=["scales", "y"]).tolerance(sizes, "y") == 0.0
    assert problem.tolerance(sizes) == problem.tolerance(sizes, "q")  # the first output by default


def bf16(values):
    """float32 -> BF16 bit patterns, rounded to nearest even (NaN aside, which these tests do not make)."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def gemv_problem():
    return parse(
        {
            **{k: BASE[k] for k in ("title", "statement", "compute_unit", "unit", "baseline", "flops")},
            "name": "gemv_like",
            "sizes": ["N", "K", "B"],
            "args": [
                {"name": "N", "type": "int"},
                {"name": "K", "type": "int"},
                {"name": "B", "type": "int"},
                {"name": "W", "type": "const __nv_bfloat16*"},
                {"name": "x", "type": "const __nv_bfloat16*"},
                {"name": "y", "type": "__nv_bfloat16*"},
            ],
            "outputs": ["y"],
            "reduction": "K",
            "bytes": "2 * (N * K + B * K + B * N)",
            "tests": [{"N": 257, "K": 4099, "B": 8, "seed": 1}],
            "benchmarks": [{"N": 8192, "K": 8192, "B": 8, "seed": 2}],
        }
    )


@pytest.mark.parametrize("K", [33, 999, 4099])
def test_a_bf16_rounded_answer_passes_and_a_bf16_accumulated_one_fails(K):
    """GEMV with BF16 operands and a BF16 output: the FP32 sum rounded once to BF16 lands within the
    tolerance; the same sum kept in BF16 after every addition (an accumulator of the output's type) does not."""
    problem = gemv_problem()
    sizes = {"N": 257, "K": K, "B": 8}
    rng = np.random.default_rng(K)
    W = bf16(rng.uniform(-1, 1, (257, K)))
    x = bf16(rng.uniform(-1, 1, (8, K)))
    w32, x32 = bf16_value(W), bf16_value(x)
    reference = x32.astype(np.float64) @ w32.astype(np.float64).T  # exact products, float64 sums: B x N
    terms = np.abs(x32.astype(np.float64)) @ np.abs(w32.astype(np.float64)).T  # the problem's magnitude(), as judged
    expected = expected_from(problem, reference, terms, sizes, {"y": (8 * 257,)})

    fp32_sum = (x32 @ w32.T).astype(np.float32)
    good = compare_outputs(problem, {"y": bf16(fp32_sum).ravel()}, expected, sizes)
    assert good.passed, good.message
    assert good.rel_err < U8  # one BF16 rounding, at most u relative to each element

    acc = np.zeros((8, 257), dtype=np.float32)
    for k in range(K):  # a BF16 accumulator: every partial sum rounded to BF16
        acc = bf16_value(bf16(acc + np.outer(x32[:, k], w32[:, k]).astype(np.float32)))
    bad = compare_outputs(problem, {"y": bf16(acc).ravel()}, expected, sizes)
    assert not bad.passed and bad.rel_err > problem.tolerance(sizes, "y")
    assert "rel_err" in bad.message


def test_rmsnorm_like_rows_rounded_once_pass_and_a_bf16_sum_of_squares_fails():
    """y = bf16(x * rsqrt(mean(x^2) + eps) * w) for BF16 x and w: computed in FP32 and rounded once it passes;
    with the sum of squares kept in BF16 (an accumulator of the storage type) the scale of whole rows is off."""
    problem = toy()
    rows, cols = 17, 4097
    sizes = {"rows": rows, "cols": cols}
    rng = np.random.default_rng(7)
    x32 = bf16_value(bf16(rng.uniform(-1, 1, (rows, cols))))
    w32 = bf16_value(bf16(rng.uniform(-1, 1, cols)))
    x64 = x32.astype(np.float64)
    reference = x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + 1e-6) * w32.astype(np.float64)
    others = {"q": np.zeros((rows, cols), np.uint8), "scales": np.ones(rows, np.float32)}
    shapes = {"q": (rows, cols), "scales": (rows,), "y": (rows, cols)}
    expected = expected_from(problem, {**others, "y": reference}, None, sizes, shapes)

    inv_rms = np.float32(1) / np.sqrt((x32 * x32).sum(axis=1, dtype=np.float32) / np.float32(cols) + np.float32(1e-6))
    good = compare_outputs(problem, {**others, "y": bf16(x32 * inv_rms[:, None] * w32)}, expected, sizes)
    assert good.passed, good.message

    sum_sq = np.zeros(rows, dtype=np.float32)
    for c in range(cols):
        sum_sq = bf16_value(bf16(sum_sq + x32[:, c] * x32[:, c]))
    inv_rms = np.float32(1) / np.sqrt(sum_sq / np.float32(cols) + np.float32(1e-6))
    bad = compare_outputs(problem, {**others, "y": bf16(x32 * inv_rms[:, None] * w32)}, expected, sizes)
    assert not bad.passed and bad.output == "y" and "y: " in bad.message, bad.message


# ---- exact outputs and several outputs ---------------------------------------------------------------------


def scan_problem():
    return parse(
        {
            **{k: BASE[k] for k in ("title", "statement", "compute_unit", "unit", "baseline", "flops")},
            "name": "scan_like",
            "sizes": ["N"],
            "args": [
                {"name": "N", "type": "int"},
                {"name": "x", "type": "const int*"},
                {"name": "y", "type": "int*"},
                {"name": "workspace", "type": "int*", "workspace": "1048576"},
            ],
            "outputs": ["y"],
            "bytes": "8 * N",
            "tests": [{"N": 4097, "seed": 1}],
            "benchmarks": [{"N": 268435456, "seed": 2}],
        }
    )


def test_exact_int_output_counts_differences_and_names_the_first_few():
    problem = scan_problem()
    sizes = {"N": 4097}
    x = np.random.default_rng(1).integers(-1000, 1001, 4097).astype(np.int32)
    ref = np.cumsum(x, dtype=np.int64).astype(np.int32)
    expected = expected_from(problem, ref, None, sizes, {"y": (4097,)})
    assert compare_outputs(problem, {"y": ref.copy()}, expected, sizes).passed

    out = ref.copy()
    out[[5, 6, 100, 2000, 3000, 4000, 4096]] += 1
    out[4096] = poison_value("int32")
    check = compare_outputs(problem, {"y": out}, expected, sizes)
    assert not check.passed and check.bad_count == 7 and check.tolerance == 0.0
    assert check.first_bad_index == [5] and check.first_bad_value == ref[5] + 1 and check.first_bad_expected == ref[5]
    assert check.nonfinite_count == 1  # the element left holding 0xA5A5A5A5
    assert "7 of 4097 elements differ (compared bit for bit), at [5], [6], [100], [2000], [3000], ..." in check.message
    assert "1 elements still 0xA5A5A5A5 (never written?)" in check.message


def test_exact_float_output_fails_one_ulp_off():
    problem = toy()
    sizes = {"rows": 17, "cols": 4097}
    scales = np.random.default_rng(2).uniform(0, 1, 17).astype(np.float32) / np.float32(448)
    q = np.random.default_rng(3).integers(0, 256, (17, 4097)).astype(np.uint8)
    q[q == 0x7F] = 0x7E
    q[q == 0xFF] = 0xFE
    y = np.zeros((17, 4097))
    expected = expected_from(
        problem, {"q": q, "scales": scales, "y": y}, None, sizes, {"q": q.shape, "scales": (17,), "y": y.shape}
    )
    outs = {"q": q.copy(), "scales": scales.copy(), "y": bf16(y)}
    passed = compare_outputs(problem, outs, expected, sizes)
    assert passed.passed and passed.message.endswith(
        "q: ok, bit-exact; scales: ok, bit-exact; y: ok, rel_err 0.00e+00 <= 3.97e-03"
    )

    outs["scales"][3] = np.nextafter(scales[3], np.float32(1))
    check = compare_outputs(problem, outs, expected, sizes)
    assert not check.passed and check.output == "scales" and check.bad_count == 1 and check.first_bad_index == [3]
    assert "q: ok, bit-exact; scales: 1 of 17 elements differ" in check.message

    outs["scales"][3] = scales[3]
    outs["q"][2, 5] = 0x7F  # left as poison
    check = compare_outputs(problem, outs, expected, sizes)
    assert not check.passed and check.output == "q" and check.first_bad_index == [2, 5]
    assert check.first_bad_value is None and "1 elements still NaN (never written?)" in check.message


def test_an_unwritten_bf16_output_is_reported_as_nan():
    problem = toy()
    sizes = {"rows": 1, "cols": 1}
    shapes = {"q": (1, 1), "scales": (1,), "y": (1, 1)}
    values = {"q": np.zeros((1, 1), np.uint8), "scales": np.ones(1, np.float32), "y": np.ones((1, 1))}
    expected = expected_from(problem, values, None, sizes, shapes)
    outs = {"q": values["q"], "scales": values["scales"], "y": np.full((1, 1), poison_value("bfloat16"))}
    check = compare_outputs(problem, outs, expected, sizes)
    assert not check.passed and check.output == "y" and check.nonfinite_count == 1
    assert "y: 1 elements NaN/Inf (never written?)" in check.message


def test_reference_must_give_every_output_in_the_right_dtype():
    problem = toy()
    sizes = {"rows": 1, "cols": 1}
    shapes = {"q": (1, 1), "scales": (1,), "y": (1, 1)}
    good = {"q": np.zeros(1, np.uint8), "scales": np.ones(1, np.float32), "y": np.ones(1)}
    with pytest.raises(ValueError, match="reference\\(\\) gave no 'y'"):
        expected_from(problem, {"q": good["q"], "scales": good["scales"]}, None, sizes, shapes)
    with pytest.raises(ValueError, match="must give a dict by output name"):
        expected_from(problem, good["y"], None, sizes, shapes)
    with pytest.raises(ValueError, match="exact output 'scales' is float64"):
        expected_from(problem, {**good, "scales": np.ones(1)}, None, sizes, shapes)
    with pytest.raises(ValueError, match="has 2 elements"):
        expected_from(problem, {**good, "y": np.ones(2)}, None, sizes, shapes)
    expected = expected_from(problem, {**good, "q": np.zeros(1, np.int8)}, None, sizes, shapes)
    assert expected["q"].values.dtype == np.uint8 and expected["q"].values.shape == (1, 1)


def test_e4m3_values():
    assert E4M3_VALUES[0x7E] == 448 and E4M3_VALUES[0xFE] == -448
    assert E4M3_VALUES[0x38] == 1.0 and E4M3_VALUES[0x01] == 2.0**-9 and E4M3_VALUES[0x08] == 2.0**-6
    assert E4M3_VALUES[0x80] == 0 and np.signbit(E4M3_VALUES[0x80])
    assert np.isnan(E4M3_VALUES[[0x7F, 0xFF]]).all() and np.isfinite(np.delete(E4M3_VALUES, [0x7F, 0xFF])).all()


def test_the_judges_decoding_agrees_with_the_problems_helpers():
    dtypes = pytest.importorskip("kernels.problems.dtypes")
    codes = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(np.asarray(dtypes.e4m3_decode(codes), dtype=np.float64), E4M3_VALUES)
    bits = np.random.default_rng(0).integers(0, 1 << 16, 4096).astype(np.uint16)
    bits = bits[~np.isnan(bf16_value(bits))]
    np.testing.assert_array_equal(np.asarray(dtypes.f32_from_bf16(bits), np.float64), to_float64(bits, "bfloat16"))
    values = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(dtypes.bf16_from_f32(values)).view(np.uint16), bf16(values))


def test_workspace_garbage_is_garbage_for_every_type():
    """A float read from it is far from zero somewhere (unlike 0xA5 bytes, -2.9e-16), NaN/Inf appear, ints are
    large; the same key gives the same bytes, another key others."""
    raw = problems.garbage(4 * 65536, 7)
    assert raw.dtype == np.uint8 and raw.size == 4 * 65536
    floats, ints = raw.view(np.float32), raw.view(np.int32)
    assert not np.isfinite(floats).all() and np.nanmax(np.abs(floats[np.isfinite(floats)])) > 1e30
    with np.errstate(over="ignore", invalid="ignore"):  # the point: a sum over it is garbage too
        total = floats.sum(dtype=np.float32)
    assert not np.isfinite(total) or abs(total) > 1e30
    assert (np.abs(ints) > 1 << 24).mean() > 0.9
    assert np.array_equal(problems.garbage(4 * 65536, 7), raw) and not np.array_equal(
        problems.garbage(4 * 65536, 8), raw
    )
    assert np.array_equal(problems.garbage(5, 7), raw[:5])


def plain_bf16_from_f32(x: np.ndarray) -> np.ndarray:
    """The rounding written plainly, a new array per step: what dtypes.bf16_from_f32 computes in place."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) >> np.uint32(16)
    is_nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(is_nan, (bits >> np.uint32(16)) | np.uint32(0x0040), rounded).astype(np.uint16)


@pytest.mark.parametrize("with_nans", [False, True])
def test_bf16_rounding_in_place_is_the_plain_formula_bit_for_bit(with_nans):
    """Every kind of float32: random bit patterns (subnormals, infinities, NaNs with payloads), exact ties with odd
    and even kept parts, the largest finite values (which round to infinity) and signed zeros."""
    rng = np.random.default_rng(45)
    patterns = rng.integers(0, 2**32, size=1 << 20, dtype=np.uint64).astype(np.uint32)
    ties = (rng.integers(0, 2**16, size=4096, dtype=np.uint32) << np.uint32(16)) | np.uint32(0x8000)
    edges = np.array([0, 0x80000000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x00000001, 0x7F7F8000], np.uint32)
    bits = np.concatenate([patterns, ties, edges])
    if not with_nans:
        bits = bits[(bits & np.uint32(0x7FFFFFFF)) <= np.uint32(0x7F800000)]
    x = bits.view(np.float32)
    kept = x.copy()
    np.testing.assert_array_equal(dtypes.bf16_from_f32(x), plain_bf16_from_f32(x))
    np.testing.assert_array_equal(x.view(np.uint32), kept.view(np.uint32))  # the input is left as it was


def test_bf16_widening_is_exact_for_every_bit_pattern():
    every = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    wide = dtypes.f32_from_bf16(every)
    np.testing.assert_array_equal(wide.view(np.uint32), every.astype(np.uint32) << np.uint32(16))
    np.testing.assert_array_equal(dtypes.bf16_from_f32(wide[~np.isnan(wide)]), every[~np.isnan(wide)])

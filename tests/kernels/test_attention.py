"""The attention problem on the CPU: its definition (shapes, FLOPs, workspace), its reference against a direct
float64 computation, its inputs' large logits, and the judge's own comparison (kernels/compare.py, on NumPy
arrays) passing what correct kernels store and failing each mistake of the known-bad files in
tests/kernels/bad/attention__*.cu, reproduced here in NumPy. The kernels themselves need the GPU
(test_reference_ladder.py runs the rungs, test_problem_maths.py the bad files)."""

import math

import numpy as np
import pytest

from kernels import problems
from kernels.compare import compare_outputs, expected_from
from kernels.problems import dtypes, poison_value

PROBLEM = problems.load("attention")
MODULE = PROBLEM.module()
FP32_EXP_LIMIT = math.log(np.finfo(np.float32).max)  # 88.72: exp of more overflows FP32


def inputs_of(shape):
    return MODULE.make_inputs(shape.sizes, np.random.default_rng(shape.seed), PROBLEM.params)


def expected_of(inputs, sizes, element_scale=True):
    """The reference, and what the judge compares with (checks.expected_of, on NumPy)."""
    reference = MODULE.reference(inputs, sizes, PROBLEM.params)
    scale = MODULE.element_scale(inputs, sizes, PROBLEM.params) if element_scale else None
    return reference, expected_from(PROBLEM, reference, None, sizes, {"O": inputs["O"].shape}, scale)


def check(answer_f32, expected, sizes):
    """The judge's comparison of an FP32 answer rounded to BF16 once, as a kernel stores it."""
    return compare_outputs(PROBLEM, {"O": dtypes.bf16_from_f32(answer_f32.astype(np.float32))}, expected, sizes)


def values(inputs, name):
    return dtypes.f32_from_bf16(inputs[name]).astype(np.float64)


def logits(inputs, sizes):
    """Q K^T / sqrt(d) in float64, [batch, heads, seq, seq]."""
    return values(inputs, "Q") @ np.swapaxes(values(inputs, "K"), -1, -2) / math.sqrt(sizes["head_dim"])


def visible(sizes, last_key=lambda i, seq: i):
    """Which keys each query sees: j <= last_key(i) under the causal mask, every key otherwise."""
    seq = sizes["seq"]
    i, j = np.arange(seq)[:, None], np.arange(seq)[None, :]
    return j <= last_key(i, seq) if sizes["causal"] else np.ones((seq, seq), dtype=bool)


def attend(inputs, sizes, allowed, p_bf16=False):
    """softmax(S, over the allowed keys) V in float64; with p_bf16, P is rounded to BF16 before P V while the
    row sum keeps the unrounded FP32 P (what a tensor-core kernel such as rung 03 computes)."""
    s = np.where(allowed, logits(inputs, sizes), -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    total = p.sum(axis=-1, keepdims=True)
    if p_bf16:
        p = dtypes.f32_from_bf16(dtypes.bf16_from_f32(p.astype(np.float32))).astype(np.float64)
    return (p @ values(inputs, "V")) / total


# --- the definition ----------------------------------------------------------------------------------------------


def test_the_problem_as_the_issue_states_it():
    assert PROBLEM.size_names == ("batch", "heads", "seq", "head_dim", "causal")
    assert PROBLEM.signature() == (
        "int batch, int heads, int seq, int head_dim, int causal, const __nv_bfloat16* Q, "
        "const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O, float* S"
    )
    assert PROBLEM.outputs == ("O",) and PROBLEM.accumulate_dtype == "float32"
    assert PROBLEM.compute_unit == "tensor_bf16" and PROBLEM.unit == "TFLOP/s"
    for sizes in PROBLEM.all_shapes():
        b, h, s, d = sizes["batch"], sizes["heads"], sizes["seq"], sizes["head_dim"]
        assert d in (64, 128) and sizes["causal"] in (0, 1)
        full = 4 * b * h * s * s * d
        assert PROBLEM.flops(sizes) == (full // 2 if sizes["causal"] else full)
        assert PROBLEM.bytes_moved(sizes) == 4 * 2 * b * h * s * d
        assert PROBLEM.array_shape("O", sizes) == (b, h, s, d)
        # The scores of every head fit the workspace, and it stays within 8 GiB.
        assert PROBLEM.workspace_count("S", sizes) == b * h * s * s <= 2 * 2**30
        # BF16 output rounding plus FP32 accumulation over the keys.
        assert PROBLEM.tolerance(sizes) == pytest.approx(16 * 2.0**-24 * math.sqrt(s) + 2.0**-8)


def test_test_shapes_are_ragged_with_both_head_dims_and_both_masks_at_each_length():
    by_seq = {}
    for shape in PROBLEM.tests:
        by_seq.setdefault(shape.sizes["seq"], []).append(shape.sizes)
    assert sorted(by_seq) == [1, 17, 1000, 4097]
    for shapes in by_seq.values():
        assert {s["head_dim"] for s in shapes} == {64, 128} and {s["causal"] for s in shapes} == {0, 1}
    assert any(s.sizes["batch"] > 1 and s.sizes["heads"] > 1 for s in PROBLEM.tests)


def test_benchmarks_reach_seq_16384_at_head_dim_128_causal_and_not():
    long = {(s.sizes["causal"], s.sizes["head_dim"]) for s in PROBLEM.benchmarks if s.sizes["seq"] == 16384}
    assert long == {(0, 128), (1, 128)}
    assert {s.sizes["seq"] for s in PROBLEM.benchmarks} == {4096, 16384}


# --- the reference and the inputs --------------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [0, 1])
def test_the_reference_is_attention_computed_row_by_row_in_float64(causal):
    sizes = {"batch": 2, "heads": 2, "seq": 37, "head_dim": 64, "causal": causal}
    inputs = MODULE.make_inputs(sizes, np.random.default_rng(7), PROBLEM.params)
    q, k, v = (values(inputs, n) for n in ("Q", "K", "V"))
    ref = MODULE.reference(inputs, sizes, PROBLEM.params)
    assert ref.shape == (2, 2, 37, 64) and ref.dtype == np.float64
    for b in range(2):
        for h in range(2):
            for i in range(37):
                keys = i + 1 if causal else 37
                s = np.array([q[b, h, i] @ k[b, h, j] for j in range(keys)]) / 8.0
                w = np.exp(s - s.max())
                direct = (w[:, None] * v[b, h, :keys]).sum(axis=0) / w.sum()
                np.testing.assert_allclose(ref[b, h, i], direct, rtol=1e-12, atol=1e-14)
    if causal:  # the first query sees only the first key
        np.testing.assert_array_equal(ref[:, :, 0], v[:, :, 0])


@pytest.mark.parametrize("index", [i for i, t in enumerate(PROBLEM.tests) if t.sizes["seq"] >= 1000])
def test_the_checks_fp32_reference_is_far_inside_the_tolerance_of_float64(index):
    # The judge checks against the FP32 path (reference_and_element_scale): its error, element by element in each
    # element's own scale as the check measures it, must stay far inside the tolerance, hot rows and all.
    shape = PROBLEM.tests[index]
    sizes = shape.sizes
    inputs = inputs_of(shape)
    exact, exact_scale = MODULE.reference(inputs, sizes, PROBLEM.params), MODULE.element_scale(inputs, sizes, {})
    fast, fast_scale = MODULE.reference_and_element_scale(inputs, sizes, PROBLEM.params)
    assert fast.dtype == np.float32 and MODULE.CHECK_DTYPE == "float32"
    error = np.abs(fast - exact) / np.maximum(exact_scale, np.sqrt(np.mean(exact**2)))
    assert error.max() < PROBLEM.tolerance(sizes) / 50, (error.max(), PROBLEM.tolerance(sizes))
    assert np.abs(fast_scale - exact_scale).max() < 1e-4 * exact_scale.max()
    assert np.linalg.norm(fast - exact) / np.linalg.norm(exact) < PROBLEM.tolerance(sizes) / 100


@pytest.mark.parametrize("index", range(len(PROBLEM.tests)))
def test_inputs_have_logits_that_overflow_fp32_without_the_shift(index):
    shape = PROBLEM.tests[index]
    sizes = shape.sizes
    inputs = inputs_of(shape)
    for name in ("Q", "K", "V", "O"):
        assert inputs[name].dtype == np.uint16 and inputs[name].shape == PROBLEM.array_shape(name, sizes)
    s = np.where(visible(sizes), logits(inputs, sizes), -np.inf)
    if sizes["seq"] < 8:  # no hot row yet (row 3 of every 8)
        assert s.max() < 10
        return
    assert s.max() > FP32_EXP_LIMIT + 30 and s.max() < 200
    # Negative hot queries: their hot keys lie near -128 or below.
    assert (s < -FP32_EXP_LIMIT).any()


# --- the comparison ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(len(PROBLEM.tests)))
def test_correct_answers_pass_and_the_poison_fails(index):
    """The reference rounded to BF16 once passes, and so does a tensor-core kernel's answer (P rounded to BF16
    for P V, sums in FP32); the NaN poison fails."""
    shape = PROBLEM.tests[index]
    inputs = inputs_of(shape)
    reference, expected = expected_of(inputs, shape.sizes)
    result = check(reference, expected, shape.sizes)
    assert result.passed, result.message
    result = check(attend(inputs, shape.sizes, visible(shape.sizes), p_bf16=True), expected, shape.sizes)
    assert result.passed, result.message
    assert result.rel_err < 0.75 * result.tolerance, result.message  # with room for FP32 rounding on the GPU
    poisoned = np.full_like(inputs["O"], poison_value("bfloat16"))
    assert not compare_outputs(PROBLEM, {"O": poisoned}, expected, shape.sizes).passed


def test_the_element_scale_is_what_lets_a_correct_causal_answer_pass():
    """At seq 4097, causal, the first rows are single values of V while rms(O) is 0.06: measured in rms(O), a
    tensor-core answer is off by more than ten tolerances on a few early elements. Each element's own scale,
    softmax-weighted |V|, stays near 0.5 on every row: measured in it the answer passes with room, and the
    rows past the first still carry the norm test."""
    shape = next(s for s in PROBLEM.tests if s.sizes["seq"] == 4097 and s.sizes["causal"])
    inputs = inputs_of(shape)
    answer = attend(inputs, shape.sizes, visible(shape.sizes), p_bf16=True)
    _, by_rms = expected_of(inputs, shape.sizes, element_scale=False)
    result = check(answer, by_rms, shape.sizes)
    assert not result.passed and result.bad_count > 0 and result.rel_err < result.tolerance, result.message
    _, expected = expected_of(inputs, shape.sizes)
    assert check(answer, expected, shape.sizes).passed
    scale = expected["O"].element_scale
    # Near mean |V| = 1/2 past the first rows (row 0 is |V[0]| itself, any value in [0, 1]).
    assert scale[:, :, 64:].min() > 0.1 and scale.max() <= 1.0 and 0.45 < np.median(scale) < 0.55


def bad_shapes(condition):
    return [s for s in PROBLEM.tests if condition(s.sizes)]


@pytest.mark.parametrize("shape", bad_shapes(lambda s: s["causal"] and s["seq"] > 1), ids=str)
def test_a_causal_mask_off_by_one_fails(shape):
    """attention__causal_off_by_one.cu: query i also sees key i + 1."""
    inputs = inputs_of(shape)
    _, expected = expected_of(inputs, shape.sizes)
    answer = attend(inputs, shape.sizes, visible(shape.sizes, lambda i, seq: np.minimum(i + 1, seq - 1)))
    result = check(answer, expected, shape.sizes)
    assert not result.passed and result.bad_count > 0, result.message


@pytest.mark.parametrize("shape", bad_shapes(lambda s: s["seq"] >= 17), ids=str)
def test_a_softmax_without_the_running_max_gives_nan(shape):
    """attention__no_running_max.cu: exp(s) in FP32, never shifted."""
    inputs = inputs_of(shape)
    _, expected = expected_of(inputs, shape.sizes)
    s = logits(inputs, shape.sizes).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.where(visible(shape.sizes), np.exp(s), np.float32(0))
        answer = (p @ values(inputs, "V").astype(np.float32)) / p.sum(axis=-1, keepdims=True)
    result = check(answer, expected, shape.sizes)
    assert not result.passed and result.nonfinite_count > 0, result.message


def bf16(x):
    return dtypes.f32_from_bf16(dtypes.bf16_from_f32(np.asarray(x, dtype=np.float32)))


@pytest.mark.parametrize("shape", bad_shapes(lambda s: s["seq"] == 1000), ids=str)
def test_softmax_statistics_in_bf16_fail(shape):
    """attention__bf16_statistics.cu, step by step over the keys as its loop runs: the running maximum and sum
    rounded to BF16 at every update, the output accumulator in FP32."""
    sizes = shape.sizes
    inputs = inputs_of(shape)
    _, expected = expected_of(inputs, sizes)
    seq = sizes["seq"]
    s = logits(inputs, sizes).astype(np.float32).reshape(-1, seq, seq)  # (heads, query, key)
    v = values(inputs, "V").astype(np.float32).reshape(-1, seq, sizes["head_dim"])
    m = np.full(s.shape[:2], -np.inf, dtype=np.float32)
    total = np.zeros(s.shape[:2], dtype=np.float32)
    acc = np.zeros(v.shape, dtype=np.float32)
    rows = np.arange(seq)
    with np.errstate(invalid="ignore", over="ignore"):  # exp(m - dot) of the rows not taking the branch
        for j in range(seq):
            seen = (rows >= j) if sizes["causal"] else np.ones(seq, dtype=bool)
            dot = np.where(seen, s[:, :, j], -np.inf)
            grow = dot > m
            shrink = np.where(grow, np.exp(m - dot), np.float32(1))
            total = np.where(grow, bf16(total * shrink), total)
            acc *= shrink[..., None]
            m = np.where(grow, bf16(dot), m)
            p = np.where(seen, np.exp(dot - m), np.float32(0)).astype(np.float32)
            total = np.where(seen, bf16(total + p), total)
            acc += p[..., None] * v[:, j][:, None, :]
    answer = (acc / total[..., None]).reshape(inputs["O"].shape)
    result = check(answer, expected, sizes)
    assert not result.passed and result.rel_err > 10 * result.tolerance, result.message


@pytest.mark.parametrize("shape", bad_shapes(lambda s: not s["causal"] and s["seq"] > 64), ids=str)
def test_skipping_key_blocks_in_a_non_causal_run_fails(shape):
    """attention__noncausal_skips_blocks.cu: keys past the query's own block of 64 are dropped although causal
    is 0 (at seq <= 64 that drops nothing: those shapes pass, the longer ones fail)."""
    inputs = inputs_of(shape)
    _, expected = expected_of(inputs, shape.sizes)
    seq = shape.sizes["seq"]
    i, j = np.arange(seq)[:, None], np.arange(seq)[None, :]
    answer = attend(inputs, shape.sizes, j < (i // 64 + 1) * 64)
    result = check(answer, expected, shape.sizes)
    assert not result.passed and result.bad_count > 0, result.message


def test_every_known_bad_attention_file_is_reproduced_here():
    import tomllib

    from .conftest import BAD

    listed = {e["file"] for e in tomllib.loads((BAD / "manifest.toml").read_text())["bad"]}
    attention = {p.name for p in BAD.glob("attention__*.cu")}
    assert attention == {
        "attention__causal_off_by_one.cu",
        "attention__no_running_max.cu",
        "attention__bf16_statistics.cu",
        "attention__noncausal_skips_blocks.cu",
    }
    assert attention <= listed

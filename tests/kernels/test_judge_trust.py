"""Issue 26 on the CPU: the checks that a careless or dishonest kernel must not slip through, each shown to catch
its mistake and to pass the right answer, with the judge's own code on NumPy arrays (kernels/compare.py, the
problems' generators and references, the guard-band pattern, the poison page index). The same mistakes as CUDA
kernels are in tests/kernels/bad/manifest.toml, judged on the H200 (tests/kernels/test_gpu_problems.py)."""

import numpy as np
import pytest

from kernels import problems
from kernels.compare import compare_outputs, expected_from, half_ulp
from kernels.inputs import _guard_band_host
from kernels.problems import dtypes

F32_MAX = np.finfo(np.float32).max


def judged(name, sizes, answer_of, seed=7):
    """The judge's comparison of `answer_of(inputs, exact)` (stored-dtype outputs by name) at `sizes`."""
    problem = problems.load(name)
    module = problem.module()
    inputs = module.make_inputs(sizes, np.random.default_rng(seed), problem.params)
    reference = module.reference(inputs, sizes, problem.params)
    magnitude = module.magnitude(inputs, sizes, problem.params) if hasattr(module, "magnitude") else None
    scale = module.element_scale(inputs, sizes, problem.params) if hasattr(module, "element_scale") else None
    shapes = {name: inputs[name].shape for name in problem.outputs}
    expected = expected_from(problem, reference, magnitude, sizes, shapes, scale)
    return compare_outputs(problem, answer_of(inputs, reference), expected, sizes)


# --- guard bands ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16", "uint16", "int32", "uint8"])
def test_guard_bands_start_at_the_array_with_the_pattern_and_mirror_before_it(dtype):
    pattern = problems.guard_pattern(dtype)
    size = pattern.itemsize
    back = _guard_band_host(np.dtype(dtype).str, 64 * size, False).view(dtype)
    front = _guard_band_host(np.dtype(dtype).str, 64 * size, True).view(dtype)
    k = len(pattern)
    assert back[:k].tobytes() == pattern.tobytes()  # element 0 past the end is the pattern's first
    assert front[::-1][:k].tobytes() == pattern.tobytes()  # element -1 before the start too


def test_an_over_read_poisons_a_sum_a_maximum_and_a_sum_of_squares():
    band = _guard_band_host(np.dtype("float32").str, 64, False).view(np.float32)
    x = np.random.default_rng(1).uniform(-1, 1, 1000).astype(np.float32)
    for extra in (1, 2, 3):  # however far past the end a kernel reads
        read = np.concatenate([x, band[:extra]])
        with np.errstate(over="ignore", invalid="ignore"):
            assert not np.isfinite(read.sum()) or abs(read.sum()) > 1e30
            assert np.isnan(read.max()) or read.max() == F32_MAX
            assert not np.isfinite((read * read).sum())
    bf16 = _guard_band_host(np.dtype("uint16").str, 8, False).view(np.uint16)
    assert dtypes.f32_from_bf16(bf16[:1])[0] > 3e38  # the largest finite BF16


def test_the_old_byte_pattern_was_next_to_zero():
    """What the guard bands held before issue 26: 0xA5 bytes, a value no sum notices."""
    assert abs(np.frombuffer(bytes([0xA5] * 4), np.float32)[0]) < 1e-15


# --- alignment -----------------------------------------------------------------------------------------------


def test_misaligned_rounds_place_each_array_at_its_promise_and_no_more():
    assert problems.load("reduce_sum").misaligned_offsets() == {"x": 4, "out": 4}
    assert problems.load("swiglu").misaligned_offsets() == {"gate": 2, "up": 2, "out": 2}
    assert set(problems.load("bf16_gemm").misaligned_offsets().values()) == {16}
    assert set(problems.load("paged_decode").misaligned_offsets().values()) == {16}
    assert problems.load("attention").misaligned_offsets() == {}  # 256-byte aligned by contract
    hgemm = problems.load("hgemm").misaligned_offsets()
    assert hgemm["A"] == 2 and hgemm["C"] == 4
    for offset in (2, 4, 16, 128):  # a multiple of the promise, never of twice it
        address = 512 * 77 + offset
        assert address % offset == 0 and address % (2 * offset) != 0


def test_an_alignment_that_is_not_a_power_of_two_is_refused():
    from kernels.problems import ProblemError, _alignment

    for bad in (3, 0, 512, True, "16"):
        with pytest.raises(ProblemError, match="alignment"):
            _alignment(bad, "p")
    assert _alignment(16, "p") == 16


# --- BF16 outputs: one correct rounding ----------------------------------------------------------------------


def test_half_ulp_of_bf16_values():
    values = np.array([1.0, 1.5, 2.0, -3.0, 0.0, 2.0**-126, 2.0**-130])
    expected = [2.0**-8, 2.0**-8, 2.0**-7, 2.0**-7, 2.0**-134, 2.0**-134, 2.0**-134]
    assert half_ulp(values, "bfloat16").tolist() == expected


def rounded(reference):
    """The correctly rounded BF16 of each exact value (through FP32, as an FP32 kernel's answer is)."""
    return dtypes.bf16_from_f32(np.asarray(reference, dtype=np.float32))


@pytest.mark.parametrize(
    "name, sizes",
    [
        ("rmsnorm", {"rows": 17, "hidden": 4097}),
        ("swiglu", {"tokens": 17, "inter": 4097}),
        ("gemv", {"N": 257, "K": 4099, "B": 8}),
        ("bf16_gemm", {"M": 127, "N": 264, "K": 136}),
        ("paged_decode", dict(problems.load("paged_decode").tests[3].sizes)),
    ],
)
def test_a_correctly_rounded_answer_passes_and_a_second_rounding_fails(name, sizes):
    output = problems.load(name).output
    assert judged(name, sizes, lambda inputs, ref: {output: rounded(ref)}).passed
    # A rounding to BF16 on the way: the value moved by up to half a BF16 unit before the final rounding, as a
    # C rounded between two split-K launches, BF16 partial sums or BF16 atomics move it.
    rng = np.random.default_rng(3)

    def twice(inputs, ref):
        shifted = ref * (1 + rng.uniform(-(2.0**-9), 2.0**-9, ref.shape))
        return {output: rounded(shifted)}

    check = judged(name, sizes, twice)
    assert not check.passed and check.bad_count > 0, check.message


def test_a_bf16_sum_of_squares_in_a_tree_fails_rmsnorm():
    sizes = {"rows": 17, "hidden": 4097}
    problem = problems.load("rmsnorm")

    def bf16_tree(inputs, ref):
        x = dtypes.f32_from_bf16(inputs["x"]).astype(np.float32)
        w = dtypes.f32_from_bf16(inputs["w"])
        squares = x * x
        width = 256  # per-thread FP32 sums, then a block tree whose partial sums are rounded to BF16
        padded = np.zeros((x.shape[0], -(-x.shape[1] // width) * width), np.float32)
        padded[:, : x.shape[1]] = squares
        partial = padded.reshape(x.shape[0], width, -1).sum(axis=2, dtype=np.float32)
        while partial.shape[1] > 1:
            partial = dtypes.f32_from_bf16(dtypes.bf16_from_f32(partial[:, ::2] + partial[:, 1::2]))
        inv = 1 / np.sqrt(partial[:, 0] / x.shape[1] + np.float32(problem.params["eps"]))
        return {"y": dtypes.bf16_from_f32((x * inv[:, None] * w).astype(np.float32))}

    assert not judged("rmsnorm", sizes, bf16_tree).passed


# --- reduce_sum: a bound from N^(1/4) ||x|| ------------------------------------------------------------------


def test_reduce_sum_bound_at_2_28_is_about_one_against_128_before():
    n = 2**28
    norm = np.sqrt(n / 3)  # ||x||_2 of uniform [-1, 1) values
    bound = 16 * 2.0**-24 * n**0.25 * norm
    assert 0.8 < bound < 1.5
    assert problems.load("reduce_sum").tolerance({"N": n}) == 16 * 2.0**-24  # relative to that scale
    old = 16 * 2.0**-24 * np.sqrt(n) * (n / 2 / np.sqrt(n))  # 16 u sqrt(N) relative to sum|x| / sqrt(N)
    assert old == pytest.approx(128)


def test_reduce_sum_a_tree_sum_passes_and_dropping_terms_fails():
    sizes = {"N": 2**22}

    def tree(inputs, ref):
        return {"out": np.array([inputs["x"].sum(dtype=np.float32)], np.float32)}  # NumPy sums pairwise

    def dropped(inputs, ref):
        return {"out": np.array([inputs["x"][:-4096].sum(dtype=np.float32)], np.float32)}

    for seed in range(6):  # every family
        assert judged("reduce_sum", sizes, tree, seed).passed
        assert not judged("reduce_sum", sizes, dropped, seed).passed


def test_reduce_sum_draws_every_family():
    module = problems.load("reduce_sum").module()
    drawn = [module.make_inputs({"N": 40000}, np.random.default_rng(s), {})["x"] for s in range(40)]
    assert any(np.abs(x).max() > 1000 for x in drawn)  # heavy tails or spikes
    assert any((x == 0).mean() > 0.3 for x in drawn)  # zeros
    assert all(np.isfinite(x).all() for x in drawn)
    assert any(((x != 0) & (np.abs(x) < 2.0**-126)).any() for x in drawn)  # subnormals


# --- families that break shortcuts ---------------------------------------------------------------------------


def test_swiglu_gates_reach_both_tails_and_a_clamped_sigmoid_fails():
    sizes = {"tokens": 17, "inter": 4097}
    inputs = problems.load("swiglu").module().make_inputs(sizes, np.random.default_rng(5), {})
    gate = dtypes.f32_from_bf16(inputs["gate"])
    assert gate.max() > 50 and gate.min() < -50 and (gate == 0).any()

    def clamped(inputs, ref):
        g = np.clip(dtypes.f32_from_bf16(inputs["gate"]).astype(np.float64), -8, 8)
        u = dtypes.f32_from_bf16(inputs["up"]).astype(np.float64)
        return {"out": rounded(g / (1 + np.exp(-g)) * u)}

    assert not judged("swiglu", sizes, clamped, 5).passed


def test_bf16_gemm_inputs_hold_zero_tiles_and_skipping_guessed_zero_tiles_fails():
    sizes = {"M": 127, "N": 264, "K": 136}
    inputs = problems.load("bf16_gemm").module().make_inputs(sizes, np.random.default_rng(9), {})
    a = dtypes.f32_from_bf16(inputs["A"])
    assert 0.1 < (a == 0).mean() < 0.4
    params = problems.load("bf16_gemm").params

    def skipping(inputs, ref):
        a = dtypes.f32_from_bf16(inputs["A"]).astype(np.float64)
        b = dtypes.f32_from_bf16(inputs["B"]).astype(np.float64)
        c = dtypes.f32_from_bf16(inputs["C"]).astype(np.float64)
        for k0 in range(0, a.shape[1], 16):  # a k-tile skipped where A's row starts it with a zero
            guessed = a[:, k0] == 0
            a[guessed, k0 : k0 + 16] = 0
        return {"C": rounded(params["alpha"] * a @ b + params["beta"] * c)}

    assert not judged("bf16_gemm", sizes, skipping, 9).passed


def test_paged_decode_poison_faults_in_32_and_64_bit_offsets():
    poison = problems.load("paged_decode").module().POISON_PAGE
    assert 0 < poison < 2**31
    for kv_heads in {sizes["kv_heads"] for sizes in problems.load("paged_decode").all_shapes()}:
        for unit_shift in range(25):  # elements, bytes, 16-byte chunks, rows: a power of two each
            offset = poison * kv_heads * 2**unit_shift
            wrapped = (offset + 2**31) % 2**32 - 2**31  # the same product in 32-bit int arithmetic
            assert abs(wrapped) >= 2**29, (kv_heads, unit_shift)
            assert offset >= 2**30
    assert (1 << 30) * 2048 % 2**32 == 0  # the old poison wrapped to page 0 at a 2048-element page stride


def test_a_library_baseline_keeps_its_own_rounding_and_a_reader_does_not():
    """PyTorch's eager SwiGLU rounds silu(gate) to BF16 before the product: as the baseline it is checked by the
    norm and the ten-tolerance element test (a wrong wiring still fails), as a reader's answer it fails."""
    problem = problems.load("swiglu")
    sizes = {"tokens": 17, "inter": 4097}
    inputs = problem.module().make_inputs(sizes, np.random.default_rng(11), {})
    g = dtypes.f32_from_bf16(inputs["gate"]).astype(np.float64)
    u = dtypes.f32_from_bf16(inputs["up"])
    silu = dtypes.f32_from_bf16(rounded(g / (1 + np.exp(-g))))
    eager = {"out": rounded(silu * u)}
    expected = expected_from(problem, problem.module().reference(inputs, sizes, {}), None, sizes, {"out": g.shape})
    assert compare_outputs(problem, eager, expected, sizes, contract=False).passed
    assert not compare_outputs(problem, eager, expected, sizes).passed
    wrong = {"out": rounded(g * u)}  # silu forgotten: no rule lets that through
    assert not compare_outputs(problem, wrong, expected, sizes, contract=False).passed


def test_a_far_tail_gate_flushed_to_zero_passes_swiglu_at_one_element():
    """silu(-100) * up is about -3.7e-42 * up; expf(100) overflows to inf in FP32 and g / inf is -0.0. That is what
    a correct FP32 kernel gives (the naive rung did, at 1 x 1, on the H200), and it must pass both tests."""
    problem = problems.load("swiglu")
    sizes = {"tokens": 1, "inter": 1}
    inputs = {
        "gate": dtypes.bf16_from_f32(np.array([[-100.0]], np.float32)),
        "up": dtypes.bf16_from_f32(np.array([[1.5]], np.float32)),
        "out": np.empty((1, 1), np.uint16),
    }
    reference = problem.module().reference(inputs, sizes, {})
    assert 0 < abs(reference[0, 0]) < 1e-40
    expected = expected_from(problem, reference, None, sizes, {"out": (1, 1)})
    flushed = {"out": dtypes.bf16_from_f32(np.array([[-0.0]], np.float32))}
    assert compare_outputs(problem, flushed, expected, sizes).passed
    assert not compare_outputs(problem, {"out": rounded(np.array([[1e-30]]))}, expected, sizes).passed

"""The paged_decode problem on the CPU: its definition, the inputs' structure (ragged contexts summing to the
shape's token count, shuffled pages, shared prefixes, poison past every context, garbage in the last page's
stale slots), the reference against a direct float64 computation token by token through the block table, and
the judge's own comparison (kernels/compare.py, on NumPy arrays) passing the right answers, rung 02's
split-and-combine order included, and failing each known-bad file's mistake reproduced in NumPy."""

import math
import tomllib

import numpy as np
import pytest

from kernels import plan, problems
from kernels.compare import compare_outputs, expected_from
from kernels.problems import dtypes

from .conftest import BAD

PROBLEM = problems.load("paged_decode")
MODULE = PROBLEM.module()
PS, D = MODULE.PAGE_SIZE, MODULE.HEAD_DIM


def inputs_of(shape):
    return MODULE.make_inputs(shape.sizes, np.random.default_rng(shape.seed), PROBLEM.params)


def check(answer, inputs, sizes):
    """The judge's comparison of a float answer, rounded to BF16 as a kernel's output is."""
    reference = MODULE.reference(inputs, sizes, PROBLEM.params)
    scale = MODULE.element_scale(inputs, sizes, PROBLEM.params)
    expected = expected_from(PROBLEM, reference, None, sizes, {"out": inputs["out"].shape}, scale)
    out = dtypes.bf16_from_f32(np.asarray(answer, dtype=np.float32))
    return compare_outputs(PROBLEM, {"out": out}, expected, sizes)


def cache_row(inputs, name, s, j, g):
    """K or V of sequence s's token j, kv head g, as float64: looked up through the block table by hand."""
    page = int(inputs["block_table"][s, j // PS])
    return dtypes.f32_from_bf16(inputs[name][page, j % PS, g]).astype(np.float64)


def direct(inputs, sizes, tokens_of=lambda s, ctx: ctx):
    """out[s, h] token by token in float64; `tokens_of` says how many tokens a (mistaken) kernel attends to."""
    heads, kv_heads = sizes["heads"], sizes["kv_heads"]
    scale = float(np.float32(PROBLEM.params["scale"]))
    q = dtypes.f32_from_bf16(inputs["q"]).astype(np.float64)
    out = np.empty(q.shape)
    for s in range(sizes["num_seqs"]):
        n = tokens_of(s, int(inputs["context_lens"][s]))
        for g in range(kv_heads):
            k = np.stack([cache_row(inputs, "k_cache", s, j, g) for j in range(n)])
            v = np.stack([cache_row(inputs, "v_cache", s, j, g) for j in range(n)])
            for h in range(g * (heads // kv_heads), (g + 1) * (heads // kv_heads)):
                x = [scale * math.fsum(q[s, h] * k[j]) for j in range(n)]
                w = np.array([math.exp(xj - max(x)) for xj in x])
                out[s, h] = (w @ v) / w.sum()
    return out


# --- the problem ----------------------------------------------------------------------------------------------


def test_the_problem_as_the_issue_states_it():
    assert PROBLEM.signature() == (
        "int num_seqs, int heads, int kv_heads, int max_pages, int page_size, int head_dim, float scale, "
        "const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache, "
        "const int* block_table, const int* context_lens, __nv_bfloat16* out, float* workspace"
    )
    assert PROBLEM.params == {"page_size": 16, "head_dim": 128, "scale": pytest.approx(1 / math.sqrt(128))}
    assert PROBLEM.outputs == ("out",) and PROBLEM.accumulate_dtype == "float32"
    assert PROBLEM.compute_unit == "memory" and PROBLEM.unit == "GB/s"
    assert not PROBLEM.flag_faster_than_baseline and "gather" in PROBLEM.baseline_name
    for shape in PROBLEM.benchmarks:
        sizes = shape.sizes
        assert (sizes["heads"], sizes["kv_heads"]) == (32, 8) and 64 <= sizes["num_seqs"] <= 256
        assert 1024 <= sizes["tokens"] // sizes["num_seqs"] <= 8192
        kv = sizes["tokens"] * sizes["kv_heads"] * D * 2 * 2  # K and V, 2 bytes each, once per sequence
        assert PROBLEM.bytes_moved(sizes) == kv + 2 * 2 * sizes["num_seqs"] * sizes["heads"] * D
        assert PROBLEM.flops(sizes) == 4 * sizes["tokens"] * sizes["heads"] * D
    assert PROBLEM.tolerance(PROBLEM.tests[0].sizes) == pytest.approx(16 * 2**-24 * math.sqrt(32) + 2**-8)


def test_the_workspace_holds_both_rungs_plans():
    """Rung 01 keeps 16 * max_pages scores per (sequence, head); rung 02 one partial of 130 floats per split of
    32 pages; the statement promises one per 4 pages."""
    for sizes in PROBLEM.all_shapes():
        per_head = PROBLEM.workspace_count("workspace", sizes) // (sizes["num_seqs"] * sizes["heads"])
        assert per_head == plan.evaluate("cdiv(max_pages, 4)", sizes) * 130
        assert per_head >= 16 * sizes["max_pages"] and per_head >= -(-sizes["max_pages"] // 32) * 130


def test_test_shapes_are_small_ragged_and_grouped():
    groups = {s.sizes["heads"] // s.sizes["kv_heads"] for s in PROBLEM.tests}
    assert {1, 4, 8} <= groups
    assert any(s.sizes["num_seqs"] == 1 for s in PROBLEM.tests)
    assert all(s.sizes["tokens"] <= 25000 for s in PROBLEM.tests)


# --- the inputs -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(len(PROBLEM.tests)))
def test_contexts_pages_and_poison(index):
    shape = PROBLEM.tests[index]
    sizes = shape.sizes
    inputs = inputs_of(shape)
    lens, table = inputs["context_lens"], inputs["block_table"]
    assert lens.dtype == np.int32 and table.dtype == np.int32
    assert lens.sum() == sizes["tokens"] and lens[0] == 1 and lens.min() >= 1
    owners = {}
    for s, n in enumerate(lens):
        pages = -(-int(n) // PS)
        assert pages < sizes["max_pages"]  # at least one poison entry in every row
        assert (table[s, :pages] >= 0).all() and (table[s, :pages] < sizes["num_pages"]).all()
        assert (table[s, pages:] == MODULE.POISON_PAGE).all()
        for p, page in enumerate(table[s, :pages]):
            owners.setdefault(int(page), []).append((s, p))
    for users in owners.values():
        if len(users) > 1:  # shared: the same prefix slot of sequences of one group, a full page for each
            assert len({p for _, p in users}) == 1 and len({s // MODULE.SHARE_GROUP for s, _ in users}) == 1
            assert all((users[0][1] + 1) * PS <= lens[s] for s, _ in users)
    # The poison page lies terabytes past the caches (1 kv head: 2^30 pages of 4 KiB): it cannot be mapped.
    assert MODULE.POISON_PAGE * PS * sizes["kv_heads"] * D * 2 >= 2**42


def test_some_pages_are_shared_most_contexts_end_mid_page_and_pages_are_shuffled():
    shared = mid_page = ordered = 0
    for shape in PROBLEM.tests:
        inputs = inputs_of(shape)
        lens, table = inputs["context_lens"], inputs["block_table"]
        used = np.concatenate([table[s, : -(-int(n) // PS)] for s, n in enumerate(lens)])
        shared += len(used) - len(np.unique(used))
        mid_page += int((lens % PS != 0).sum())
        ordered += int(all((np.diff(table[s, : -(-int(n) // PS)]) == 1).all() for s, n in enumerate(lens)))
    total = sum(s.sizes["num_seqs"] for s in PROBLEM.tests)
    assert shared >= 20 and mid_page >= total * 3 // 4 and ordered <= 2  # only one-page tables look ordered


def test_the_stale_slots_of_a_last_page_hold_large_garbage():
    inputs = inputs_of(PROBLEM.tests[3])
    for s, n in enumerate(inputs["context_lens"]):
        if n % PS:
            page = inputs["block_table"][s, n // PS]
            live, stale = np.split(dtypes.f32_from_bf16(inputs["k_cache"][page]), [n % PS])
            assert np.abs(stale).max() > 8 and np.abs(live).max() <= 1


def test_the_inputs_are_the_same_for_the_same_seed():
    shape = PROBLEM.tests[2]
    a, b = inputs_of(shape), inputs_of(shape)
    assert all(np.array_equal(a[name], b[name]) for name in a if name != "out")


def test_a_layout_generator_keeps_the_contexts_and_pages_while_the_values_change():
    # The judge's timed rounds at one shape pass the same layout generator and a fresh one for the values: the
    # kernel's work is the same from round to round, its inputs are not.
    sizes = PROBLEM.tests[3].sizes
    rounds = [
        MODULE.make_inputs(sizes, np.random.default_rng(seed), PROBLEM.params, layout_rng=np.random.default_rng(9))
        for seed in (1, 2)
    ]
    for name in ("context_lens", "block_table"):
        np.testing.assert_array_equal(rounds[0][name], rounds[1][name])
    for name in ("q", "k_cache", "v_cache"):
        assert not np.array_equal(rounds[0][name], rounds[1][name])
    other = MODULE.make_inputs(sizes, np.random.default_rng(1), PROBLEM.params, layout_rng=np.random.default_rng(10))
    assert not np.array_equal(other["context_lens"], rounds[0]["context_lens"])


# --- the reference and the comparison -------------------------------------------------------------------------


@pytest.mark.parametrize("index", [0, 1, 2, 5])
def test_the_reference_is_attention_through_the_block_table_token_by_token(index):
    shape = PROBLEM.tests[index]
    inputs = inputs_of(shape)
    reference = MODULE.reference(inputs, shape.sizes, PROBLEM.params)
    np.testing.assert_allclose(reference, direct(inputs, shape.sizes), rtol=1e-12, atol=1e-13)


def test_the_large_logits_overflow_fp32_without_the_shift():
    shape = PROBLEM.tests[2]
    inputs = inputs_of(shape)
    q = dtypes.f32_from_bf16(inputs["q"]).astype(np.float64)
    s, g = 3, 0  # a scaled-up sequence (s % 4 == 3)
    k = np.stack([cache_row(inputs, "k_cache", s, j, g) for j in range(inputs["context_lens"][s])])
    logits = PROBLEM.params["scale"] * (k @ q[s, 0])
    assert logits.max() > 89  # exp(89) > FP32's largest finite value


@pytest.mark.parametrize("index", range(len(PROBLEM.tests)))
def test_the_right_answer_passes_and_the_poison_fails(index):
    shape = PROBLEM.tests[index]
    inputs = inputs_of(shape)
    reference = MODULE.reference(inputs, shape.sizes, PROBLEM.params)
    assert check(reference, inputs, shape.sizes).passed
    expected = expected_from(PROBLEM, reference, None, shape.sizes, {"out": inputs["out"].shape})
    poisoned = np.full(inputs["out"].shape, problems.poison_value("bfloat16"))
    assert not compare_outputs(PROBLEM, {"out": poisoned}, expected, shape.sizes).passed


def split_kv(inputs, sizes, split_pages=32, warps=4):
    """Rung 02's order of operations in FP32: per split of 32 pages, warps taking every 4th page, an online
    softmax per page in the log2 domain, the warps then the splits combined with weights 2^(m_i - M)."""
    f32 = np.float32
    heads, kv_heads = sizes["heads"], sizes["kv_heads"]
    group = heads // kv_heads
    qscale = f32(PROBLEM.params["scale"]) * f32(1.4426950408889634)
    q = dtypes.f32_from_bf16(inputs["q"]) * qscale
    out = np.empty(q.shape, dtype=f32)

    def merge(parts):
        m = max(p[0] for p in parts)
        w = [f32(2.0) ** (p[0] - m) for p in parts]
        pairs = list(zip(w, parts, strict=True))
        return m, sum(wi * p[1] for wi, p in pairs), sum(wi * p[2] for wi, p in pairs)

    for s in range(sizes["num_seqs"]):
        ctx = int(inputs["context_lens"][s])
        pages = -(-ctx // PS)
        for h in range(heads):
            g = h // group
            splits = []
            for begin in range(0, pages, split_pages):
                parts = []
                for w in range(warps):
                    m, total, acc = f32(-np.inf), f32(0), np.zeros(D, f32)
                    for p in range(begin + w, min(pages, begin + split_pages), warps):
                        page = inputs["block_table"][s, p]
                        k = dtypes.f32_from_bf16(inputs["k_cache"][page, :, g])
                        v = dtypes.f32_from_bf16(inputs["v_cache"][page, :, g])
                        x = k @ q[s, h]
                        x[ctx - p * PS :] = -np.inf
                        m_new = max(m, x.max())
                        alpha = f32(2.0) ** (m - m_new)
                        e = f32(2.0) ** (x - m_new)
                        m, total = m_new, total * alpha + e.sum()
                        acc = acc * alpha + e[: ctx - p * PS] @ v[: ctx - p * PS]
                    parts.append((m, total, acc))
                splits.append(merge(parts))
            _, total, acc = merge(splits)
            out[s, h] = acc / total
    return out


@pytest.mark.parametrize("index", [1, 2, 3])
def test_rung_02s_split_and_combine_order_passes(index):
    shape = PROBLEM.tests[index]
    inputs = inputs_of(shape)
    answer = split_kv(inputs, shape.sizes)  # empty warps weigh 2^(-inf) = 0: no NaN anywhere
    assert np.isfinite(answer).all() and check(answer, inputs, shape.sizes).passed


# --- the known-bad files' mistakes, reproduced ----------------------------------------------------------------

MANIFEST = [e for e in tomllib.loads((BAD / "manifest.toml").read_text())["bad"] if e["problem"] == "paged_decode"]


def test_attending_to_the_whole_last_page_fails():
    for shape in PROBLEM.tests[:3]:
        inputs = inputs_of(shape)
        answer = direct(inputs, shape.sizes, tokens_of=lambda s, ctx: -(-ctx // PS) * PS)
        assert not check(answer, inputs, shape.sizes).passed, shape.sizes


def test_every_known_bad_paged_decode_file_is_listed_with_its_verdict():
    verdicts = {e["file"]: e["verdict"] for e in MANIFEST}
    assert verdicts == {
        "paged_decode__page_past_context.cu": "runtime_error",
        "paged_decode__whole_last_page.cu": "wrong_answer",
        "paged_decode__int32_offsets.cu": "runtime_error",
    }
    assert {p.name for p in BAD.glob("paged_decode__*.cu")} == set(verdicts)
    # The page-past-context file reads block_table[s][last page + 1]: the poison entry every row has.
    assert "pages[j / page_size + 1]" in (BAD / "paged_decode__page_past_context.cu").read_text()


class CupyLikeGenerator:
    """NumPy's generator behind only the methods CuPy's Generator has (no permutation, shuffle or choice):
    make_inputs runs on the GPU with a CuPy Generator (kernels.inputs.input_generator)."""

    def __init__(self, seed):
        self._rng = np.random.default_rng(seed)

    def random(self, size=None, dtype=np.float64):
        return self._rng.random(size, dtype=dtype)

    def integers(self, low, high=None, size=None, dtype=np.int64):
        return self._rng.integers(low, high, size=size, dtype=dtype)

    def standard_normal(self, size=None, dtype=np.float64):
        return self._rng.standard_normal(size, dtype=dtype)


def test_make_inputs_uses_only_what_cupys_generator_has():
    shape = PROBLEM.tests[2]
    inputs = MODULE.make_inputs(shape.sizes, CupyLikeGenerator(shape.seed), PROBLEM.params)
    assert inputs["context_lens"].sum() == shape.sizes["tokens"]


def test_shared_pages_are_a_small_part_of_the_benchmarks_reads():
    """The roofline counts a shared page once per sequence that reads it (problem.toml): the repeats must stay
    a few % of the reads, as the statement says (0.6%, 1.1%, 4.6%)."""
    for shape in PROBLEM.benchmarks:
        lens, table = MODULE.layout(shape.sizes, np.random.default_rng(shape.seed))
        used = np.concatenate([table[s, : -(-int(n) // PS)] for s, n in enumerate(lens)])
        assert 0 < len(used) - len(np.unique(used)) < 0.05 * len(used)
        assert lens.sum() == shape.sizes["tokens"] and -(-lens.max() // PS) < shape.sizes["max_pages"]


@pytest.mark.parametrize("index", range(len(PROBLEM.tests)))
def test_the_checks_fp32_reference_is_far_inside_the_tolerance_of_float64(index):
    """On NumPy inputs reference_and_element_scale takes the FP32 path (on the GPU, a fused float64 kernel:
    test_gpu_paged_decode_reference.py): element by element, in each
    element's own tolerance (half a BF16 unit of the exact value plus the slack of its terms' scale), it stays under
    a fiftieth of it, the scaled-up sequences (logits in the hundreds, taken from float64) included."""
    shape = PROBLEM.tests[index]
    sizes = shape.sizes
    inputs = inputs_of(shape)
    exact = MODULE.reference(inputs, sizes, PROBLEM.params)
    exact_scale = MODULE.element_scale(inputs, sizes, PROBLEM.params)
    fast, fast_scale = MODULE.reference_and_element_scale(inputs, sizes, PROBLEM.params)
    assert fast.dtype == np.float32 and MODULE.CHECK_DTYPE == "float32"
    slack = max(16 * 2**-24 * math.sqrt(16 * sizes["max_pages"]), 2**-16)
    half_bf16_unit = 0.5 * np.abs(np.spacing(exact.astype(np.float32))) * 2**16
    tolerance = half_bf16_unit + slack * exact_scale + 2**-100
    assert (np.abs(fast - exact) / tolerance).max() < 1 / 50
    assert np.abs(fast_scale - exact_scale).max() < 1e-4 * exact_scale.max()

"""Issue 15 on the CPU: launch plans with thread-block clusters, TMA tensor maps and SMS (parsing, the checks at
every shape and their refusal messages), the bf16_gemm problem's data and maths, and the Hopper submissions
(tests/kernels/good/bf16_gemm_*.cu, the bf16_gemm known-bad files) compiling with NVRTC or refused as their
manifest says. On the GPU: tests/kernels/test_gpu_hopper.py."""

import copy
import json
import math
import re

import numpy as np
import pytest

from kernels import compiler, problems
from kernels.compare import compare_outputs, expected_from
from kernels.plan import DEFAULT_SMS, Launch, PlanError, extract_plan, resolve, resolve_all
from kernels.problems import TOLERANCE_FACTOR, dtypes, parse, poison_value
from kernels.results import CompileResult, Verdict

from .conftest import BAD, GOOD, read
from .test_problem_format import BASE

BF16 = problems.load("bf16_gemm")
SIZES = {"M": 127, "N": 264, "K": 136}


def plan(body: str, kernel: str = "k") -> str:
    return f"__global__ void {kernel}() {{}}\n/* @plan\n{body}\n*/\n"


def launch_with(maps: str = "", **keys) -> Launch:
    """One launch (kernel k, grid [4, 2], block [128]) with extra keys, after the given [[tensor_map]] tables."""
    lines = ["[[launch]]", "kernel = 'k'", "grid = [4, 2]", "block = [128]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in keys.items()]
    (launch,) = extract_plan(plan(maps + "\n" + "\n".join(lines)))
    return launch


TMA = """
[[tensor_map]]
name = "tmA"
array = "A"
box = [64, 128]
swizzle = "128B"
l2_promotion = "256B"

[[tensor_map]]
name = "tmC"
array = "C"
box = [8, 1]
oob_fill = "nan"
"""


# ---- parsing ---------------------------------------------------------------------------------------------------


def test_a_full_hopper_plan_parses_and_round_trips():
    launch = launch_with(TMA, cluster=[2, 1, 1], non_portable_cluster=False, tensor_maps=["tmC", "tmA"])
    assert launch.cluster == (2, 1, 1) and not launch.non_portable_cluster
    assert [m.name for m in launch.tensor_maps] == ["tmC", "tmA"]  # the launch's order, not the tables'
    tm_a = launch.tensor_maps[1]
    assert (tm_a.array, tm_a.box, tm_a.swizzle, tm_a.l2_promotion, tm_a.oob_fill) == (
        "A",
        (64, 128),
        "128B",
        "256B",
        "zero",
    )
    assert launch.tensor_maps[0].swizzle == "none" and launch.tensor_maps[0].oob_fill == "nan"
    data = json.loads(json.dumps(launch.to_dict()))  # as stored and as the GPU job's payload carries it
    assert Launch.from_dict(data) == launch


def test_an_ordinary_plan_reads_as_it_always_did():
    launch = launch_with()
    assert launch.to_dict() == {"kernel": "k", "grid": [4, 2], "block": [128], "shared_bytes": 0}
    assert Launch.from_dict(launch.to_dict()) == launch
    resolved = resolve(launch, SIZES)
    assert resolved.cluster is None and resolved.tensor_maps == [] and not resolved.needs_driver


@pytest.mark.parametrize(
    "body, fragment",
    [
        ("[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = [8]\nstride = 2", "tensor_map 1: unknown keys ['stride']"),
        ("[[tensor_map]]\nname = 'a b'\narray = 'A'\nbox = [8]", "'name' must be an identifier"),
        ("[[tensor_map]]\nname = 'm'\narray = 3\nbox = [8]", "'array' must be an identifier"),
        ("[[tensor_map]]\nname = 'm'\narray = 'A'", "'box' must be a list of 1 to 5 integers"),
        ("[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = [8, 1, 1, 1, 1, 1]", "'box' must be a list of 1 to 5"),
        ("[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = [0]", "box size 0 is outside 1..256"),
        ("[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = [512]", "box size 512 is outside 1..256"),
        ("[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = [true]", "box size True is not an integer"),
        ("[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = ['N']", "box size 'N' is not an integer"),
        ("[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = [8]\nswizzle = '256B'", "swizzle = '256B'; one of 'none'"),
        ("[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = [8]\nl2_promotion = 'all'", "l2_promotion = 'all'"),
        ("[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = [8]\noob_fill = 'one'", "oob_fill = 'one'"),
        ("tensor_map = [1, 2]", "'tensor_map' must be [[tensor_map]] tables"),
    ],
)
def test_malformed_tensor_maps(body, fragment):
    source = plan(f"{body}\n[[launch]]\nkernel = 'k'\ngrid = [1]\nblock = [1]\ntensor_maps = ['m']")
    with pytest.raises(PlanError, match=re.escape(fragment)):
        extract_plan(source)


MAP_M = "[[tensor_map]]\nname = 'm'\narray = 'A'\nbox = [8]\n"
LAUNCH = "[[launch]]\nkernel = 'k'\ngrid = [2]\nblock = [1]\n"


@pytest.mark.parametrize(
    "body, fragment",
    [
        (MAP_M * 2 + LAUNCH + "tensor_maps = ['m']", "tensor map 'm' is declared twice"),
        (MAP_M + LAUNCH + "tensor_maps = ['n']", "launch 1: unknown tensor map 'n'; declared: 'm'"),
        (LAUNCH + "tensor_maps = ['n']", "unknown tensor map 'n'; declared: none"),
        (MAP_M + LAUNCH, "tensor map 'm' is declared but no launch names it"),
        (MAP_M + LAUNCH + "tensor_maps = ['m', 'm']", "'tensor_maps' names a map twice"),
        (MAP_M + LAUNCH + "tensor_maps = 'm'", "'tensor_maps' must be a list of tensor map names"),
        (LAUNCH + "cluster = []", "'cluster' must be a list of 1 to 3 items"),
        (LAUNCH + "cluster = [2, 1, 1, 1]", "'cluster' must be a list of 1 to 3 items"),
        (LAUNCH + "cluster = [2.0]", "neither an integer nor an expression"),
        (LAUNCH + "non_portable_cluster = true", "'non_portable_cluster' needs a 'cluster'"),
        (LAUNCH + "cluster = [2]\nnon_portable_cluster = 1", "'non_portable_cluster' must be true or false"),
        (LAUNCH + "clusters = [2]", "unknown keys ['clusters']"),
        ("".join(MAP_M.replace("'m'", f"'m{i}'") for i in range(9)) + LAUNCH, "9 tensor maps; at most 8"),
        ("stream = 1\n" + LAUNCH, "only [[launch]] and [[tensor_map]] tables are allowed"),
    ],
)
def test_malformed_hopper_launches(body, fragment):
    with pytest.raises(PlanError, match=re.escape(fragment)):
        extract_plan(plan(body))


# ---- clusters and SMS at every shape -------------------------------------------------------------------------


def test_clusters_resolve_and_pad_to_three_axes():
    resolved = resolve(launch_with(cluster=[2]), SIZES)
    assert resolved.cluster == (2, 1, 1) and resolved.needs_driver
    wide = launch_with(cluster=[4, 2], non_portable_cluster=True)
    assert resolve(wide, SIZES).cluster == (4, 2, 1) and resolve(wide, SIZES).non_portable_cluster


@pytest.mark.parametrize(
    "grid, cluster, non_portable, arch, fragment",
    [
        (["cdiv(N, 128)"], [2], False, "sm_90", "grid[0] = 3 is not a multiple of cluster[0] = 2"),
        ([4, "M"], [1, 2], False, "sm_90", "grid[1] = 127 is not a multiple of cluster[1] = 2"),
        ([16], [16], False, "sm_90", "a cluster of 16 blocks; at most 8 (up to 16 with non_portable_cluster = true)"),
        ([32], [2, 1, 1], False, "sm_90", None),
        ([32], [32], True, "sm_90", "a cluster of 32 blocks; at most 16"),
        ([4, 4], [4, 4], True, "sm_90a", None),
        ([4], [0], False, "sm_90", "cluster[0] = 0; it must be at least 1"),
        ([4], ["N - 265"], False, "sm_90", "cluster[0] = -1; it must be at least 1"),
        ([4], [2], False, "sm_80", "clusters and tensor maps need compute capability 9.0"),
        ([4], [2], False, "sm_89", "(sm_90 or sm_90a), not sm_89"),
    ],
)
def test_cluster_checks(grid, cluster, non_portable, arch, fragment):
    keys = {"cluster": cluster, **({"non_portable_cluster": True} if non_portable else {})}
    launch = launch_with(**keys)
    launch = Launch(launch.kernel, tuple(grid), launch.block, 0, launch.cluster, launch.non_portable_cluster)
    if fragment is None:
        assert resolve(launch, SIZES, arch).cluster is not None
    else:
        with pytest.raises(PlanError, match=re.escape(fragment)):
            resolve(launch, SIZES, arch)


def test_a_cluster_is_checked_at_every_shape_of_the_problem():
    """cdiv(M, 64) is even at M = 128 but odd at M = 127 and 1: the plan is refused, naming the first such shape."""
    (launch,) = extract_plan(
        plan("[[launch]]\nkernel = 'k'\ngrid = ['cdiv(N, 64)', 'cdiv(M, 64)']\nblock = [128]\ncluster = [1, 2]")
    )
    resolve(launch, {"M": 128, "N": 128, "K": 128})
    with pytest.raises(
        PlanError, match=re.escape("k at M=1, N=8, K=8: grid[1] = 1 is not a multiple of cluster[1] = 2")
    ):
        resolve_all([launch], BF16.all_shapes(), "sm_90", BF16)


def test_sms_is_the_multiprocessor_count():
    (launch,) = extract_plan(plan("[[launch]]\nkernel = 'k'\ngrid = ['SMS', 'min(SMS, cdiv(M, 128))']\nblock = [128]"))
    assert resolve(launch, SIZES).grid == (DEFAULT_SMS, 1, 1) == (132, 1, 1)
    assert resolve(launch, {"M": 4096, "N": 1, "K": 1}, sms=114).grid == (114, 32, 1)
    (unknown,) = extract_plan(plan("[[launch]]\nkernel = 'k'\ngrid = ['SM']\nblock = [1]"))
    with pytest.raises(PlanError, match="unknown name 'SM' in 'SM'; known: M, N, K, SMS"):
        resolve(unknown, SIZES)


# ---- tensor maps at every shape ------------------------------------------------------------------------------


def test_tensor_maps_resolve_to_the_whole_array_innermost_first():
    launch = launch_with(TMA, tensor_maps=["tmA", "tmC"])
    resolved = resolve(launch, SIZES, "sm_90", BF16)
    tm_a, tm_c = resolved.tensor_maps
    assert (tm_a.name, tm_a.array, tm_a.dtype) == ("tmA", "A", "bfloat16")
    assert tm_a.dims == (136, 127) and tm_a.strides_bytes == (136 * 2,) and tm_a.box == (64, 128)
    assert (tm_a.swizzle, tm_a.l2_promotion, tm_a.oob_fill) == ("128B", "256B", "zero")
    assert tm_c.dims == (264, 127) and tm_c.strides_bytes == (528,) and tm_c.oob_fill == "nan"
    assert resolved.needs_driver and resolved.cluster is None
    # Every shape of bf16_gemm: N and K multiples of 8 make every stride a multiple of 16 bytes.
    assert len(resolve_all([launch], BF16.all_shapes(), "sm_90a", BF16)) == len(BF16.all_shapes())


def map_plan(array="A", box=(64, 64), **options):
    table = {"name": "m", "array": array, "box": list(box), **options}
    body = "[[tensor_map]]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    return launch_with(body, tensor_maps=["m"])


def toy_problem(alignment=16, **arg_shapes):
    """issue 14's toy problem (tests/kernels/test_problem_format.py) with shapes on some of its arrays, its arrays
    promised `alignment` bytes (TMA needs 16)."""
    data = copy.deepcopy(BASE)
    data["alignment"] = alignment
    for arg in data["args"]:
        if arg["name"] in arg_shapes:
            arg["shape"] = arg_shapes[arg["name"]]
    return parse(data)


@pytest.mark.parametrize(
    "launch, problem, sizes, fragment",
    [
        (map_plan(array="D"), BF16, SIZES, "array 'D' is not one of the problem's arrays (A, B, C)"),
        (map_plan(array="alpha"), BF16, SIZES, "array 'alpha' is not one of the problem's arrays"),
        (map_plan(array="workspace", box=(16,)), problems.load("reduce_sum"), {"N": 64}, "'workspace' is a workspace"),
        (map_plan(array="W"), problems.load("gemv"), {"N": 8, "K": 8, "B": 1}, "declares no shape for 'W'"),
        (map_plan(box=(64,)), BF16, SIZES, "box [64] has 1 dimensions but A has 2 (innermost first: [136, 127])"),
        (map_plan(box=(4, 64)), BF16, SIZES, "innermost size 4 x 2 bytes = 8 bytes is not a multiple of 16"),
        (map_plan(box=(36, 64)), BF16, SIZES, "innermost size 36 x 2 bytes = 72 bytes is not a multiple of 16"),
        (map_plan(box=(32, 8), swizzle="32B"), BF16, SIZES, "the box's innermost size is 64 bytes; swizzle 32B spans"),
        (map_plan(box=(64, 8), swizzle="64B"), BF16, SIZES, "128 bytes; swizzle 64B spans at most 64 bytes"),
        (
            map_plan(box=(64, 8)),
            BF16,
            {"M": 5, "N": 8, "K": 12},
            "A's stride of dimension 1 is 24 bytes",
        ),
        (map_plan(array="B", box=(8, 8)), BF16, {"M": 5, "N": 4, "K": 8}, "B's stride of dimension 1 is 8 bytes"),
        (map_plan(array="C", box=(64, 64)), problems.load("hgemm"), None, None),
        (
            map_plan(array="x", box=(8, 8), oob_fill="nan"),
            toy_problem(x=["rows", "cols"]),
            {"rows": 2, "cols": 8},
            None,
        ),
        (
            map_plan(array="q", box=(16, 8), oob_fill="nan"),
            toy_problem(q=["rows", "cols"]),
            {"rows": 2, "cols": 16},
            "oob_fill = 'nan' needs a floating-point array; q is float8_e4m3",
        ),
        (map_plan(array="scales", box=(4,)), toy_problem(scales=["rows"]), {"rows": 3, "cols": 1}, None),
        (map_plan(array="x", box=(8, 8)), toy_problem(x=["rows", "cols"]), {"rows": 2, "cols": 4}, "8 bytes, not"),
    ],
)
def test_tensor_map_checks(launch, problem, sizes, fragment):
    if sizes is None:  # hgemm declares no array shapes
        with pytest.raises(PlanError, match="problem hgemm declares no shape for 'C'"):
            resolve(launch, {"M": 8, "N": 8, "K": 8}, "sm_90", problem)
        return
    if not fragment:
        (resolved,) = resolve(launch, sizes, "sm_90", problem).tensor_maps
        assert resolved.dims == tuple(reversed(problem.array_shape(resolved.array, sizes)))
        return
    with pytest.raises(PlanError, match=re.escape(fragment)):
        resolve(launch, sizes, "sm_90", problem)


def test_a_rank_one_array_has_no_strides_and_a_rank_six_one_is_refused():
    problem = toy_problem(scales=["rows"])
    (resolved,) = resolve(map_plan(array="scales", box=(4,)), {"rows": 3, "cols": 1}, "sm_90", problem).tensor_maps
    assert resolved.dims == (3,) and resolved.strides_bytes == ()
    deep = toy_problem(x=["rows", "1", "1", "1", "1", "cols"])
    with pytest.raises(PlanError, match="x has rank 6; TMA takes at most 5"):
        resolve(map_plan(array="x", box=(8, 1, 1, 1, 1)), {"rows": 2, "cols": 8}, "sm_90", deep)


def test_a_tensor_map_over_an_array_promised_less_than_16_bytes_is_refused():
    problem = toy_problem(alignment=4, x=["rows", "cols"])
    with pytest.raises(PlanError, match="promised only 4-byte alignment; TMA needs 16 bytes"):
        resolve_all([map_plan(array="x", box=(8, 2))], [{"rows": 2, "cols": 16}], "sm_90", problem)


def test_tensor_maps_without_the_problem_or_on_an_older_arch_are_refused():
    launch = map_plan()
    with pytest.raises(PlanError, match="tensor maps need the problem's arrays"):
        resolve(launch, SIZES)
    with pytest.raises(PlanError, match="need compute capability 9.0"):
        resolve(launch, SIZES, "sm_86", BF16)


# ---- compiling -----------------------------------------------------------------------------------------------


def compiled(path, arch="sm_90", source=None) -> CompileResult:
    return compiler.compile_submission(source or read(path), "bf16_gemm", arch=arch)


@pytest.mark.slow  # NVRTC in a worker process, about a second each
@pytest.mark.parametrize("name", ["bf16_gemm_tma.cu", "bf16_gemm_cluster.cu"])
@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
def test_the_hopper_kernels_compile_and_carry_their_plan(name, arch):
    result = compiled(GOOD / name, arch)
    assert result.verdict is Verdict.COMPILED, (result.message, result.log)
    (launch,) = (Launch.from_dict(d) for d in CompileResult.from_json(result.to_json()).plan)
    resolved = resolve(launch, SIZES, arch, BF16)
    assert resolved.needs_driver
    if "tma" in name:
        assert [m.name for m in resolved.tensor_maps] == ["tmA", "tmB"] and resolved.grid == (132, 1, 1)
    else:
        assert resolved.cluster == (2, 1, 1) and resolved.grid == (2 * 9, 8, 1)


@pytest.mark.slow
def test_a_hopper_plan_for_an_older_arch_is_a_plan_error():
    result = compiled(GOOD / "bf16_gemm_cluster.cu", "sm_89")
    assert result.verdict is Verdict.PLAN_ERROR and "need compute capability 9.0" in result.message


def test_the_swizzled_variant_the_gpu_test_makes_is_a_valid_plan():
    source = swizzled_tma_source()
    assert "bf16_gemm_tma<true>" in source and 'swizzle = "128B"' in source
    (launch,) = extract_plan(source)
    assert [m.swizzle for m in resolve(launch, SIZES, "sm_90", BF16).tensor_maps] == ["none", "128B"]


def swizzled_tma_source() -> str:
    """tests/kernels/good/bf16_gemm_tma.cu reading B under the 128-byte swizzle (the GPU test judges both)."""
    source = read(GOOD / "bf16_gemm_tma.cu")
    return source.replace("<false>", "<true>").replace('swizzle = "none"', 'swizzle = "128B"')


# ---- bf16_gemm: data and maths --------------------------------------------------------------------------------


def test_bf16_gemm_is_the_interface_of_issue_15():
    assert BF16.signature() == (
        "int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B, float beta, __nv_bfloat16* C"
    )
    assert BF16.output == "C" and BF16.output_is_input and BF16.compute_unit == "tensor_bf16"
    assert BF16.params == {"alpha": 1.25, "beta": -0.5}
    tests = [tuple(s.sizes.values()) for s in BF16.tests]
    assert tests == [(1, 8, 8), (127, 264, 136), (128, 128, 128), (1000, 1000, 1000), (2049, 520, 264), (33, 1032, 72)]
    assert [tuple(s.sizes.values()) for s in BF16.benchmarks] == [(4096,) * 3, (8192,) * 3]
    for sizes in BF16.all_shapes():
        assert sizes["N"] % 8 == 0 and sizes["K"] % 8 == 0  # 16-byte rows: what TMA's strides need
        assert BF16.array_shape("A", sizes) == (sizes["M"], sizes["K"])
        assert BF16.array_shape("B", sizes) == (sizes["K"], sizes["N"])
        assert BF16.array_shape("C", sizes) == (sizes["M"], sizes["N"])
    assert any(all(v % 16 for v in s.sizes.values()) for s in BF16.tests)  # ragged off every tile
    statement = BF16.statement
    assert "struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; };" in statement
    assert "typedef CUtensorMap_st CUtensorMap;" in statement and "const __grid_constant__ CUtensorMap" in statement
    assert "16-byte aligned" in statement and "multiples of 8" in statement


def test_bf16_gemm_tolerance_flops_and_bytes():
    sizes = {"M": 4096, "N": 4096, "K": 4096}
    assert BF16.tolerance(sizes) == pytest.approx(TOLERANCE_FACTOR * 2.0**-24 * 64 + 2.0**-8)
    assert BF16.flops(sizes) == 2 * 4096**3
    assert BF16.bytes_moved(sizes) == 2 * 2 * 4096**2 + 2 * 2 * 4096**2
    assert BF16.bytes_moved({"M": 1, "N": 8, "K": 8}) == 2 * (8 + 64) + 4 * 8


def bf16_shape(index):
    shape = BF16.tests[index]
    module = BF16.module()
    inputs = module.make_inputs(shape.sizes, np.random.default_rng(shape.seed), BF16.params)
    reference = module.reference(inputs, shape.sizes, BF16.params)
    magnitude = module.magnitude(inputs, shape.sizes, BF16.params)
    expected = expected_from(BF16, reference, magnitude, shape.sizes, {"C": inputs["C"].shape})
    return shape.sizes, inputs, reference, expected


def test_bf16_gemm_inputs_and_the_reference_element_by_element():
    sizes, inputs, reference, _ = bf16_shape(1)
    m, n, k = sizes["M"], sizes["N"], sizes["K"]
    assert {name: inputs[name].shape for name in "ABC"} == {"A": (m, k), "B": (k, n), "C": (m, n)}
    assert all(inputs[name].dtype == np.uint16 for name in "ABC")
    a, b, c = (dtypes.f32_from_bf16(inputs[name]).astype(np.float64) for name in "ABC")
    # Uniform in [-1, 1), then rounded to BF16 (which may round up to 1.0).
    assert -1 <= a.min() < -0.9 and 0.9 < a.max() <= 1 and np.abs(c).max() <= 1
    for row, col in [(0, 0), (m - 1, n - 1), (63, 200)]:
        dot = math.fsum(a[row, i] * b[i, col] for i in range(k))
        assert reference[row, col] == pytest.approx(1.25 * dot - 0.5 * c[row, col], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("index", range(len(BF16.tests)))
def test_bf16_gemm_a_correctly_rounded_answer_passes_and_wrong_ones_fail(index):
    sizes, inputs, reference, expected = bf16_shape(index)
    answer = dtypes.bf16_from_f32(reference.astype(np.float32))  # FP32 accumulation, rounded to BF16 once
    check = compare_outputs(BF16, {"C": answer}, expected, sizes)
    assert check.passed, check.message
    poisoned = np.full_like(answer, poison_value("bfloat16"))
    assert not compare_outputs(BF16, {"C": poisoned}, expected, sizes).passed
    a, b, c = (dtypes.f32_from_bf16(inputs[name]).astype(np.float64) for name in "ABC")
    no_beta = dtypes.bf16_from_f32((1.25 * (a @ b)).astype(np.float32))
    assert not compare_outputs(BF16, {"C": no_beta}, expected, sizes).passed
    if sizes["K"] >= 128:  # a BF16 accumulator: the running sum rounded to BF16 after every term
        acc = np.zeros((sizes["M"], sizes["N"]), np.float32)
        for i in range(sizes["K"]):
            acc = dtypes.f32_from_bf16(dtypes.bf16_from_f32(acc + np.outer(a[:, i], b[i, :]).astype(np.float32)))
        bf16_sum = dtypes.bf16_from_f32((1.25 * acc.astype(np.float64) - 0.5 * c).astype(np.float32))
        check = compare_outputs(BF16, {"C": bf16_sum}, expected, sizes)
        assert not check.passed, check.message


# ---- the known-bad files of issue 15 -------------------------------------------------------------------------


def test_the_bad_hopper_kernels_take_the_problems_arguments_then_their_tensor_maps():
    signature = BF16.signature().replace(" ", "")
    for path in [*sorted(BAD.glob("bf16_gemm__*.cu")), *sorted(GOOD.glob("bf16_gemm_*.cu"))]:
        source = read(path)
        launches = extract_plan(source)
        params = re.search(r"__global__\s+void\s+(?:__launch_bounds__\(\d+\)\s*)?\w+\s*\(([^)]*)\)", source)[1]
        maps = [f"const__grid_constant__CUtensorMap{m.name}" for launch in launches for m in launch.tensor_maps]
        assert "".join(params.split()) == ",".join([signature, *maps]), path.name

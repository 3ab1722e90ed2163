"""Triton's calling convention on the CPU (issue 46, kernels/triton_launch.py): the tuple a build's entry is launched
with, given its parameter list and the problem's arguments; the plan the GPU job resolves (grid, 32 x num_warps
threads, the build's shared memory); the job GpuJudge.judge sends. No GPU, no compile: results built by hand."""

from __future__ import annotations

import numpy as np
import pytest

from kernels import plan as plan_mod
from kernels import problems, triton_launch
from kernels.judge import gpu_job
from kernels.payloads import JobOptions, TritonCubin
from kernels.results import CompileResult, KernelResources, TritonKernel, Verdict

SCRATCH = [("global_scratch", "scratch"), ("profile_scratch", "scratch")]
VECTOR_ADD = [("A", "*fp32"), ("B", "*fp32"), ("C", "*fp32"), ("N", "i32"), *SCRATCH]
SGEMM = [
    ("M", "i32"),
    ("N", "i32"),
    ("K", "i32"),
    ("alpha", "fp32"),
    ("A", "*fp32"),
    ("B", "*fp32"),
    ("beta", "fp32"),
    ("C", "*fp32"),
    *SCRATCH,
]


class Array:
    """A device array's stand-in: anything that is not a scalar is passed through as the pointer."""

    def __init__(self, name: str):
        self.name = name


def test_the_problems_arguments_then_two_null_scratch_pointers():
    a, b, c = Array("A"), Array("B"), Array("C")
    passed = triton_launch.call_arguments(VECTOR_ADD, (a, b, c, np.int32(1000)))
    assert passed[:3] == (a, b, c)
    assert passed[3] == 1000 and type(passed[3]) is np.int32
    assert passed[4:] == (0, 0) and all(type(v) is np.uint64 for v in passed[4:])


def test_scalars_keep_their_order_and_triton_types_and_scratch_addresses_are_64_bit():
    a, b, c = Array("A"), Array("B"), Array("C")
    args = (np.int32(64), np.int32(48), np.int32(32), np.float32(1.5), a, b, np.float32(-0.5), c)
    passed = triton_launch.call_arguments(SGEMM, args, global_scratch=0x7F0000001000, profile_scratch=0)
    assert [type(v) for v in passed] == [np.int32] * 3 + [np.float32, Array, Array, np.float32, Array] + [np.uint64] * 2
    assert passed[:4] == (64, 48, 32, 1.5) and passed[4:6] == (a, b) and passed[6] == -0.5 and passed[7] is c
    assert passed[8] == 0x7F0000001000 and passed[9] == 0


def test_a_value_equal_to_one_is_still_passed():
    """Triton's JIT would make an integer argument equal to 1 a constant; the judge's builds come from an explicit
    signature, so the parameter stays and its value is passed."""
    passed = triton_launch.call_arguments(VECTOR_ADD, (Array("A"), Array("B"), Array("C"), np.int32(1)))
    assert len(passed) == 6 and passed[3] == 1


@pytest.mark.parametrize(
    "params, args, fragment",
    [
        (VECTOR_ADD, (Array("A"), Array("B"), Array("C")), "3 arguments"),
        (VECTOR_ADD, (Array("A"), Array("B"), Array("C"), np.int32(1), np.int32(2)), "5 arguments"),
        (VECTOR_ADD[:4], (Array("A"), Array("B"), Array("C"), np.int32(1)), "4 arguments"),
        (VECTOR_ADD, (Array("A"), np.int32(3), Array("C"), np.int32(1)), "B: a pointer parameter"),
        (VECTOR_ADD, (Array("A"), Array("B"), Array("C"), Array("N")), "N: a scalar parameter"),
        ([("A", "*fp32"), ("x", "tensordesc"), *SCRATCH], (Array("A"), np.int32(1)), "no launch convention"),
    ],
)
def test_arguments_that_do_not_fit_the_parameters_are_refused(params, args, fragment):
    with pytest.raises(triton_launch.TritonLaunchError, match=fragment):
        triton_launch.call_arguments(params, args)


def test_parameter_bytes_are_what_cufuncgetparaminfo_reports():
    assert triton_launch.parameter_bytes(VECTOR_ADD) == [8, 8, 8, 4, 8, 8]
    assert triton_launch.parameter_bytes(SGEMM) == [4, 4, 4, 4, 8, 8, 4, 8, 8, 8]
    build = _cubin(params=tuple(VECTOR_ADD))
    triton_launch.check_parameter_bytes(build, [8, 8, 8, 4, 8, 8])
    triton_launch.check_parameter_bytes(build, None)  # the driver cannot say: the compile's count stands
    with pytest.raises(triton_launch.TritonLaunchError, match="takes parameters"):
        triton_launch.check_parameter_bytes(build, [8, 8, 8, 4])


def test_scratch_is_null_when_unused_else_its_size_per_program():
    assert triton_launch.scratch_bytes(0, (100, 1, 1)) == 0
    assert triton_launch.scratch_bytes(256, (4, 2, 3)) == 256 * 24
    assert triton_launch.scratch_bytes(256, (4, 1, 1), num_ctas=2) == 2048
    call = triton_launch.TritonCall(_cubin(params=tuple(VECTOR_ADD)))
    assert call.scratch_address("global", (10, 1, 1)) == 0 and call.scratch_address("profile", (10, 1, 1)) == 0


def test_a_build_must_take_the_problems_arguments_then_the_scratch_pointers():
    problem = problems.load("vector_add")
    triton_launch.check_build(_cubin(params=tuple(VECTOR_ADD)), problem)
    for params in (VECTOR_ADD[:4], [VECTOR_ADD[1], VECTOR_ADD[0], *VECTOR_ADD[2:]], [*VECTOR_ADD[:3], ("N", "i64")]):
        with pytest.raises(triton_launch.TritonLaunchError, match="parameters"):
            triton_launch.check_build(_cubin(params=tuple(params)), problem)
    with pytest.raises(triton_launch.TritonLaunchError, match="num_ctas"):
        triton_launch.check_build(_cubin(params=tuple(VECTOR_ADD), num_ctas=2), problem)


def test_the_plan_resolves_to_trittons_grid_block_and_shared_memory():
    compiled = _softmax_two_builds()
    plan = triton_launch.gpu_plan(compiled)
    assert [d["kernel"] for d in plan] == ["softmax (build 1)", "norm", "softmax (build 2)"]
    problem = problems.load("softmax")
    sizes = {"rows": 300, "cols": 5000}
    resolved = [plan_mod.resolve(plan_mod.Launch.from_dict(d), sizes, "sm_90", problem) for d in plan]
    assert [(r.grid, r.block, r.shared_bytes) for r in resolved] == [
        ((300, 1, 1), (128, 1, 1), 4096),
        ((3, 2, 1), (256, 1, 1), 0),
        ((300, 1, 1), (256, 1, 1), 65536),
    ]
    assert not any(r.needs_driver for r in resolved)


def test_the_gpu_job_carries_each_build_named_as_the_plan_names_it():
    compiled = _softmax_two_builds()
    job = gpu_job(compiled, JobOptions(seed=7))
    assert job.language == "triton" and job.cubin == b"" and job.lowered_names == {}
    assert [b.name for b in job.triton] == ["softmax (build 1)", "softmax (build 2)", "norm"]
    assert {d["kernel"] for d in job.plan} == {b.name for b in job.triton}
    assert [k["name"] for k in job.kernels] == [b.name for b in job.triton]
    first = job.triton[0]
    assert (first.symbol, first.cubin, first.num_warps, first.shared_bytes) == ("softmax_0", b"cubin0", 4, 4096)
    assert first.params[-2:] == tuple(SCRATCH) and first.constexprs == (("BLOCK", 1024),)
    assert job.triton[2].global_scratch_bytes == 128 and job.triton[2].global_scratch_align == 64
    for build in job.triton:
        triton_launch.check_build(build, problems.load("softmax"))


def test_a_cuda_result_makes_the_same_job_as_before():
    compiled = CompileResult(
        verdict=Verdict.COMPILED,
        message="",
        problem="vector_add",
        arch="sm_90",
        cubin=b"cubin",
        lowered_names={"k": "_Z1kv"},
        kernels=[KernelResources("k", "_Z1kv", registers=10)],
        plan=[{"kernel": "k", "grid": ["cdiv(N, 256)"], "block": [256], "shared_bytes": 0}],
    )
    job = gpu_job(compiled, JobOptions(seed=3))
    assert (job.cubin, job.lowered_names, job.plan, job.language, job.triton) == (
        b"cubin",
        {"k": "_Z1kv"},
        compiled.plan,
        "cuda",
        (),
    )
    assert job.kernels == [compiled.kernels[0].to_dict()]


def test_a_launch_without_its_build_is_the_judges_error_not_a_crash():
    compiled = _softmax_two_builds()
    compiled.triton_kernels[2].launches = []
    with pytest.raises(triton_launch.TritonLaunchError, match="launch 2"):
        triton_launch.gpu_plan(compiled)


# ---- hand-made results ------------------------------------------------------------------------------------------


def _cubin(params, num_ctas: int = 1) -> TritonCubin:
    return TritonCubin("k", "k", "k", b"", 4, 0, params, num_ctas=num_ctas)


def _softmax_params() -> list[dict]:
    names = [("rows", "i32"), ("cols", "i32"), ("x", "*fp32"), ("y", "*fp32"), *SCRATCH]
    return [{"name": n, "type": t} for n, t in names]


def _softmax_two_builds() -> CompileResult:
    """Three launches: softmax twice with other constexprs and warps (two builds), a second kernel between."""
    plan = [
        {"kernel": "softmax", "grid": ["rows"], "num_warps": 4, "num_stages": 3, "constexprs": {"BLOCK": 1024}},
        {"kernel": "norm", "grid": [3, 2], "num_warps": 8, "num_stages": 3, "constexprs": {}},
        {"kernel": "softmax", "grid": ["rows"], "num_warps": 8, "num_stages": 2, "constexprs": {"BLOCK": 8192}},
    ]

    def kernel(name, symbol, warps, stages, shared, constexprs, launches, **extra):
        return TritonKernel(
            name, symbol, symbol.encode().replace(b"softmax_", b"cubin"), warps, stages, shared, _softmax_params(),
            constexprs, launches, **extra,
        )  # fmt: skip

    kernels = [
        kernel("softmax", "softmax_0", 4, 3, 4096, {"BLOCK": 1024}, [0]),
        kernel("softmax", "softmax_1", 8, 2, 65536, {"BLOCK": 8192}, [2]),
        kernel("norm", "norm", 8, 3, 0, {}, [1], global_scratch_bytes=128, global_scratch_align=64),
    ]
    return CompileResult(
        verdict=Verdict.COMPILED,
        message="",
        problem="softmax",
        arch="sm_90",
        plan=plan,
        language="triton",
        triton_kernels=kernels,
        kernels=[KernelResources(k.kernel, k.symbol, registers=32, num_warps=k.num_warps) for k in kernels],
    )

"""Triton submissions compiled on this CPU for sm_90 (issue 46, kernels/triton_compiler.py): the real Triton and
its bundled ptxas, in the two sandboxed children. What the GPU stage will need comes back: a cubin per build, the
entry's name, warps, shared memory, the parameter list with Triton's two scratch pointers, the versions."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from kernels import compiler, confine
from kernels import triton_compiler as tc
from kernels.results import CompileResult, Verdict

pytestmark = pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())

ROOT = Path(__file__).resolve().parents[2]
VECTOR_ADD = (ROOT / "kernels" / "problems" / "vector_add" / "example_triton.py").read_text()
SOFTMAX = (ROOT / "kernels" / "problems" / "softmax" / "example_triton.py").read_text()
HEAD = "import triton\nimport triton.language as tl\n"
EM_CUDA = 190


def elf_machine(cubin: bytes) -> int:
    assert cubin[:4] == b"\x7fELF"
    return struct.unpack_from("<H", cubin, 18)[0]


@pytest.fixture(scope="module")
def vector_add() -> CompileResult:
    return compiler.compile_submission(VECTOR_ADD, "vector_add", "sm_90", language="triton")


def test_the_vector_add_starter_compiles_for_sm_90_on_this_cpu(vector_add):
    result = vector_add
    assert result.verdict is Verdict.COMPILED, (result.message, result.log)
    assert result.language == "triton" and result.cubin == b""
    (kernel,) = result.triton_kernels
    assert elf_machine(kernel.cubin) == EM_CUDA
    assert (kernel.kernel, kernel.symbol, kernel.num_warps, kernel.num_stages) == ("vector_add", "vector_add", 4, 3)
    assert kernel.shared_bytes == 0 and kernel.constexprs == {"BLOCK_SIZE": 1024} and kernel.launches == [0]
    assert [p["name"] for p in kernel.params] == ["A", "B", "C", "N", "global_scratch", "profile_scratch"]
    assert [p["type"] for p in kernel.params] == ["*fp32", "*fp32", "*fp32", "i32", "scratch", "scratch"]
    assert result.triton_version.startswith("3.") and result.ptxas_version
    assert result.kernels[0].registers and result.kernels[0].spill_store_bytes == 0
    assert "Compiling entry function 'vector_add' for 'sm_90a'" in result.log
    assert "kernels-child" not in result.log and "/tmp" not in result.log


def test_the_cubin_is_hopper_code_with_the_kernels_entry(vector_add, tmp_path):
    """Triton's own cuobjdump reads the cubin back: SASS for sm_90a (Triton's Hopper target), the entry named."""
    sass = sass_of(vector_add.triton_kernels[0].cubin, tmp_path)
    assert "code for sm_90a" in sass and "Function : vector_add" in sass


def test_the_result_round_trips_through_json(vector_add):
    again = CompileResult.from_json(vector_add.to_json())
    assert again == vector_add
    assert again.triton_kernels[0].cubin == vector_add.triton_kernels[0].cubin


def test_the_softmax_starter_compiles():
    result = tc.compile_triton(SOFTMAX, "softmax")
    assert result.verdict is Verdict.COMPILED, (result.message, result.log)
    assert [p["name"] for p in result.triton_kernels[0].params][:4] == ["rows", "cols", "x", "y"]


def test_launches_share_a_build_and_each_build_is_its_own_cubin():
    source = VECTOR_ADD.replace(
        'constexprs = { BLOCK_SIZE = 1024 }\n"""',
        'constexprs = { BLOCK_SIZE = 1024 }\n\n[[launch]]\nkernel = "vector_add"\ngrid = ["cdiv(N, 1024)"]\n'
        'constexprs = { BLOCK_SIZE = 1024 }\n\n[[launch]]\nkernel = "vector_add"\ngrid = ["cdiv(N, 256)"]\n'
        'num_warps = 2\nconstexprs = { BLOCK_SIZE = 256 }\n"""',
    )
    result = tc.compile_triton(source, "vector_add")
    assert result.verdict is Verdict.COMPILED, (result.message, result.log)
    assert [(k.launches, k.num_warps, k.constexprs["BLOCK_SIZE"]) for k in result.triton_kernels] == [
        ([0, 1], 4, 1024),
        ([2], 2, 256),
    ]
    assert result.triton_kernels[0].cubin != result.triton_kernels[1].cubin


def test_a_triton_compile_error_names_the_files_line():
    source = HEAD + (
        "\n@triton.jit\ndef k(a, b, c, n):\n    offsets = tl.arange(0, 1000)\n    tl.store(c + offsets, 0.0)\n"
        '\nPLAN = """\n[[launch]]\nkernel = "k"\ngrid = [1]\n"""\n'
    )
    result = tc.compile_triton(source, "vector_add")
    assert result.verdict is Verdict.COMPILE_ERROR
    assert result.message == "arange's range must be a power of 2"
    assert "submission.py, line 6:" in result.log and "tl.arange(0, 1000)" in result.log


def test_ptxas_errors_on_the_readers_ptx_are_compile_errors_without_paths():
    """Inline PTX (tl.inline_asm_elementwise) reaches ptxas in the ptxas child: its errors are the reader's."""
    source = HEAD + (
        "\n@triton.jit\ndef k(a, b, c, n, BLOCK: tl.constexpr):\n"
        "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(a + offsets, mask=offsets < n)\n"
        '    y = tl.inline_asm_elementwise("no.such.op.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, '
        "pack=1)\n    tl.store(c + offsets, y, mask=offsets < n)\n"
        '\nPLAN = """\n[[launch]]\nkernel = "k"\ngrid = ["cdiv(N, 256)"]\nconstexprs = { BLOCK = 256 }\n"""\n'
    )
    result = tc.compile_triton(source, "vector_add")
    assert result.verdict is Verdict.COMPILE_ERROR, (result.verdict, result.message)
    assert result.message.startswith("ptxas") and "error" in result.message and "kernel.ptx, line" in result.message
    assert "/tmp" not in result.log and "kernels-child" not in result.log and "Repro command" not in result.log


def test_shared_memory_over_the_targets_limit_is_a_plan_error():
    source = (
        HEAD
        + '''
@triton.jit
def mm(M, N, K, alpha, A, B, beta, C, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(B + (k0 + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * N + rn[None, :], acc)

PLAN = """
[[launch]]
kernel = "mm"
grid = ["cdiv(M, 256)", "cdiv(N, 256)"]
num_warps = 8
num_stages = 4
constexprs = { BM = 256, BN = 256, BK = 64 }
"""
'''
    )
    result = tc.compile_triton(source, "hgemm")
    assert result.verdict is Verdict.PLAN_ERROR, (result.verdict, result.message)
    assert "262,144 bytes of shared memory" in result.message


def test_plan_errors_need_no_child():
    source = VECTOR_ADD.replace('grid = ["cdiv(N, 1024)"]', 'grid = ["cdiv(N, 1024)", 70000]')
    result = tc.compile_triton(source, "vector_add")
    assert result.verdict is Verdict.PLAN_ERROR and "grid[1] = 70000 is outside 1..65535" in result.message
    assert result.compile_time_ms == 0


def test_the_check_refuses_before_any_child():
    result = tc.compile_triton("import os\n" + VECTOR_ADD, "vector_add")
    assert result.verdict is Verdict.SOURCE_REJECTED and result.message.startswith("line 1: import of 'os'")


def test_the_ptxas_child_may_execute_exactly_ptxas_and_its_loader():
    ptxas = tc.ptxas_path(90)
    access = tc.ptxas_access(ptxas)
    assert access.execute[0] == ptxas and len(access.execute) <= 2
    assert tc.ptx_access().execute == ()
    assert tc.elf_interpreter(ptxas) in (None, "/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")


def test_the_cli_checks_a_triton_file(capsys):
    from kernels.__main__ import main

    path = str(ROOT / "kernels" / "problems" / "vector_add" / "example_triton.py")
    assert main(["check", path, "--problem", "vector_add"]) == 0
    shown = capsys.readouterr().out
    assert "COMPILED" in shown and "scratch global_scratch, scratch profile_scratch" in shown


def test_the_gpu_job_of_a_triton_result_carries_its_builds(vector_add):
    """What GpuJudge.judge sends the GPU child for the compiled starter (kernels/triton_launch.py): the cubin, the
    entry, Triton's block and shared memory, the parameters with the scratch pointers; its launch arguments."""
    import numpy as np

    from kernels import plan as plan_mod
    from kernels import problems, triton_launch
    from kernels.judge import gpu_job
    from kernels.payloads import JobOptions

    job = gpu_job(vector_add, JobOptions(seed=1))
    assert job.language == "triton" and job.cubin == b"" and job.lowered_names == {}
    (build,) = job.triton
    assert (build.name, build.symbol, build.num_warps, build.shared_bytes) == ("vector_add", "vector_add", 4, 0)
    assert build.cubin == vector_add.triton_kernels[0].cubin and build.num_ctas == 1
    assert [k["name"] for k in job.kernels] == ["vector_add"] and job.kernels[0]["num_warps"] == 4
    problem = problems.load("vector_add")
    triton_launch.check_build(build, problem)
    assert triton_launch.parameter_bytes(build.params) == [8, 8, 8, 4, 8, 8]
    (launch,) = [plan_mod.Launch.from_dict(d) for d in job.plan]
    resolved = plan_mod.resolve(launch, {"N": 5000}, "sm_90", problem)
    assert (resolved.kernel, resolved.grid, resolved.block, resolved.shared_bytes) == (
        "vector_add",
        (5, 1, 1),
        (128, 1, 1),
        0,
    )
    arrays = object(), object(), object()
    passed = triton_launch.call_arguments(build.params, (*arrays, np.int32(5000)), 0, 0)
    assert passed[:3] == arrays and passed[3] == 5000 and passed[3].dtype == np.int32
    assert [type(v) for v in passed[4:]] == [np.uint64, np.uint64] and passed[4:] == (0, 0)


def sass_of(cubin: bytes, tmp_path) -> str:
    cuobjdump = Path(tc.ptxas_path(90)).with_name("cuobjdump")
    if not cuobjdump.exists():
        pytest.skip("this Triton bundles no cuobjdump")
    path = tmp_path / "kernel.cubin"
    path.write_bytes(cubin)
    return subprocess.run([str(cuobjdump), "-sass", str(path)], capture_output=True, text=True, check=True).stdout


COPY = (
    HEAD
    + '''
@triton.jit
def k({args}, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store({dst} + offsets, tl.load({src} + offsets))

PLAN = """
[[launch]]
kernel = "k"
grid = [1]
constexprs = {{ BLOCK = 1024 }}
"""
'''
)


def test_triton_assumes_16_byte_alignment_only_where_the_problem_promises_it(tmp_path):
    """bf16_gemm promises A, B and C 16-byte aligned: Triton is told (tt.divisibility) and loads 16 bytes at once;
    vector_add promises only the element size: no such assumption, and no 16-byte loads."""
    promised = tc.compile_triton(COPY.format(args="M, N, K, alpha, A, B, beta, C", dst="C", src="A"), "bf16_gemm")
    assert promised.verdict is Verdict.COMPILED, (promised.message, promised.log)
    params = {p["name"]: p for p in promised.triton_kernels[0].params}
    assert params["A"]["assumed_alignment"] == 16 and "assumed_alignment" not in params["M"]
    assert "LDG.E.128" in sass_of(promised.triton_kernels[0].cubin, tmp_path)
    unpromised = tc.compile_triton(COPY.format(args="A, B, C, N", dst="C", src="A"), "vector_add")
    assert unpromised.verdict is Verdict.COMPILED, (unpromised.message, unpromised.log)
    assert all("assumed_alignment" not in p for p in unpromised.triton_kernels[0].params)
    assert "LDG.E.128" not in sass_of(unpromised.triton_kernels[0].cubin, tmp_path)


def test_below_hopper_triton_uses_its_other_ptxas():
    """sm_80: Triton's `ptxas` (CUDA 12.9), the file the ptxas child may then execute instead of ptxas-blackwell."""
    assert Path(tc.ptxas_path(80)).name == "ptxas" and Path(tc.ptxas_path(90)).name == "ptxas-blackwell"
    result = tc.compile_triton(VECTOR_ADD, "vector_add", "sm_80")
    assert result.verdict is Verdict.COMPILED, (result.message, result.log)
    assert "for 'sm_80'" in result.log and result.ptxas_version.startswith("12.")

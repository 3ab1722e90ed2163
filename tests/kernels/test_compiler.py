"""Compilation with the real NVRTC on this machine (no GPU): cubins, logs, lowered names, resources."""

import struct

import pytest

from kernels import compiler, problems
from kernels.results import Verdict

from .conftest import BAD, GOOD, read


@pytest.mark.parametrize("problem", problems.available())
def test_each_example_compiles(problem):
    """vector_add (plain), sgemm (templates), hgemm (cuda_fp16.h + mma.h: WMMA with both include folders)."""
    result = compiler.compile_submission(read(problems.PROBLEMS_DIR / problem / "example.cu"), problem)
    assert result.verdict is Verdict.COMPILED, result.log
    assert result.cubin[:4] == b"\x7fELF"
    assert result.nvrtc_version
    for kernel in result.kernels:
        assert kernel.registers and kernel.registers > 0
        assert kernel.spill_store_bytes == 0


def test_the_cubin_is_whole():
    """The ELF's own tables say how long it is; a cubin one byte short loads but tools refuse it."""
    cubin = compiler.compile_submission(read(GOOD / "sgemm_naive.cu"), "sgemm").cubin
    (program_headers_at,) = struct.unpack_from("<Q", cubin, 0x20)
    (section_headers_at,) = struct.unpack_from("<Q", cubin, 0x28)
    program_header_size, program_headers, section_header_size, section_headers = struct.unpack_from(
        "<HHHH", cubin, 0x36
    )
    ends = (
        program_headers_at + program_header_size * program_headers,
        section_headers_at + section_header_size * section_headers,
    )
    assert len(cubin) == max(ends)


def test_template_instantiation_is_lowered():
    result = compiler.compile_submission(read(problems.PROBLEMS_DIR / "sgemm" / "example.cu"), "sgemm")
    (name,) = result.lowered_names
    assert name == "sgemm_tiled<128, 128, 8, 8, 8>"
    assert result.lowered_names[name].startswith("_Z11sgemm_tiledILi128ELi128ELi8ELi8ELi8EE")
    assert result.kernels[0].static_shared_bytes == 2 * 8 * 128 * 4


def test_syntax_error_gives_the_line():
    result = compiler.compile_submission(read(BAD / "compile_error.cu"), "vector_add")
    assert result.verdict is Verdict.COMPILE_ERROR
    assert result.message.startswith("submission.cu(5): error")
    assert "submission.cu(5)" in result.log
    assert not result.cubin


@pytest.mark.parametrize(
    "name, problem, verdict, fragment",
    [
        ("forbidden_include", "vector_add", Verdict.SOURCE_REJECTED, "line 2: '#include \"/etc/passwd\"'"),
        ("huge_shared", "vector_add", Verdict.PLAN_ERROR, "shared_bytes = 1048576"),
        ("huge_grid", "vector_add", Verdict.PLAN_ERROR, "grid[1] = 1000000"),
    ],
)
def test_rejected_before_compiling(name, problem, verdict, fragment):
    result = compiler.compile_submission(read(BAD / f"{name}.cu"), problem)
    assert result.verdict is verdict
    assert fragment in result.message
    assert not result.cubin and result.compile_time_ms == 0


def test_plan_naming_a_missing_kernel():
    source = read(GOOD / "sgemm_naive.cu").replace('kernel = "sgemm_naive"', 'kernel = "sgemm_fast"')
    result = compiler.compile_submission(source, "sgemm")
    assert result.verdict is Verdict.PLAN_ERROR
    assert "no kernel 'sgemm_fast'" in result.message


def test_plan_checked_at_every_shape():
    """A grid that is fine at the test shapes but not at 4096^3 is refused up front."""
    source = read(GOOD / "sgemm_naive.cu").replace('grid = ["cdiv(N, 128)", "M"]', 'grid = ["cdiv(N, 128)", "M * 16"]')
    result = compiler.compile_submission(source, "sgemm")
    assert result.verdict is Verdict.PLAN_ERROR
    assert "M=4096" in result.message


def test_compiler_timeout_is_a_verdict():
    result = compiler.compile_submission(read(GOOD / "sgemm_naive.cu"), "sgemm", timeout_s=0.01)
    assert result.verdict is Verdict.TIMED_OUT


def test_other_arch():
    result = compiler.compile_submission(read(GOOD / "sgemm_naive.cu"), "sgemm", arch="sm_90a")
    assert result.ok and result.arch == "sm_90a"
    with pytest.raises(ValueError):
        compiler.compile_submission(read(GOOD / "sgemm_naive.cu"), "sgemm", arch="sm_52")


def test_include_dirs_hold_the_headers():
    dirs = compiler.include_dirs()
    found = {name for d in dirs for name in ("cuda_fp16.h", "crt/mma.h") if (compiler.Path(d) / name).is_file()}
    assert found == {"cuda_fp16.h", "crt/mma.h"}


def test_ptxas_report_parsing():
    log = (
        "ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'\n"
        "ptxas info    : Function properties for _Z1kv\n"
        "ptxas         .     24 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 8192 bytes smem, 400 bytes cmem[0]\n"
    )
    (kernel,) = compiler.parse_ptxas_info(log).values()
    assert (kernel.registers, kernel.static_shared_bytes, kernel.const_bytes) == (255, 8192, 400)
    assert (kernel.local_bytes, kernel.spill_store_bytes, kernel.spill_load_bytes) == (24, 8, 4)

"""PTX kept and SASS on request (issue 46, kernels/disasm.py): real cubins compiled on this CPU from the vector_add
starters (NVRTC's and Triton's), disassembled by the cuobjdump Triton bundles in the confined child; a corrupt cubin,
a listing over its limit, a missing tool and a job over its time come back as results that say so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernels import compiler, confine, disasm
from kernels.results import CompileResult, SassResult, Verdict

pytestmark = pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())

PROBLEM = Path(__file__).resolve().parents[2] / "kernels" / "problems" / "vector_add"
CUOBJDUMP = disasm.bundled_cuobjdump()
needs_cuobjdump = pytest.mark.skipif(not os.path.isfile(CUOBJDUMP), reason="this Triton bundles no cuobjdump")


@pytest.fixture(scope="module")
def cuda() -> CompileResult:
    result = compiler.compile_submission((PROBLEM / "example.cu").read_text(), "vector_add", "sm_90")
    assert result.verdict is Verdict.COMPILED, result.log
    return result


@pytest.fixture(scope="module")
def triton() -> CompileResult:
    result = compiler.compile_submission((PROBLEM / "example_triton.py").read_text(), "vector_add", language="triton")
    assert result.verdict is Verdict.COMPILED, result.log
    return result


# ---- PTX, kept by the compile ---------------------------------------------------------------------------------


def test_a_cuda_result_keeps_the_ptx_nvrtc_made_on_the_way_to_its_cubin(cuda):
    assert ".target sm_90" in cuda.ptx and ".visible .entry vector_add(" in cuda.ptx
    assert "\x00" not in cuda.ptx
    assert CompileResult.from_json(cuda.to_json()).ptx == cuda.ptx


def test_each_triton_build_keeps_its_ptx(triton):
    (build,) = triton.triton_kernels
    assert ".visible .entry vector_add(" in build.ptx and ".target sm_90a" in build.ptx
    assert CompileResult.from_json(triton.to_json()).triton_kernels[0].ptx == build.ptx


def test_ptx_over_the_limit_is_cut_at_a_line_with_a_note(monkeypatch):
    monkeypatch.setattr(compiler, "MAX_KEPT_PTX_CHARS", 100)
    kept = compiler.kept_ptx("".join(f"    add.s32 %r{n}, %r{n}, 1;\n" for n in range(50)))
    assert len(kept) < 200 and kept.splitlines()[-1].startswith("// [the PTX is cut here at")
    assert all(line.endswith(";") for line in kept.splitlines()[:-1])
    assert compiler.kept_ptx("short\n") == "short\n"


def test_results_from_before_the_ptx_was_kept_still_load(triton):
    data = triton.to_dict()
    del data["ptx"]
    for build in data["triton_kernels"]:
        del build["ptx"]
    again = CompileResult.from_dict(data)
    assert again.ptx == "" and again.triton_kernels[0].ptx == ""


# ---- SASS, in the confined child ------------------------------------------------------------------------------


@needs_cuobjdump
def test_both_languages_cubins_disassemble_in_one_confined_child(cuda, triton):
    result = disasm.disassemble([("submission.cu", cuda.cubin), ("vector_add", triton.triton_kernels[0].cubin)])
    assert result.ok and result.message == "", result
    assert result.tool.startswith("cuobjdump ")
    nvrtc, triton_listing = result.listings
    assert (nvrtc.name, triton_listing.name) == ("submission.cu", "vector_add")
    assert "code for sm_90" in nvrtc.sass and "Function : vector_add" in nvrtc.sass
    assert "code for sm_90a" in triton_listing.sass and "Function : vector_add" in triton_listing.sass
    for listing in result.listings:
        assert "LDG" in listing.sass and "EXIT" in listing.sass and not listing.truncated and not listing.error
        assert "kernels-child" not in listing.sass  # nothing of the child's scratch folder reaches the reader
    assert SassResult.from_json(result.to_json()) == result


@needs_cuobjdump
def test_a_corrupt_cubin_gives_cuobjdumps_words_not_a_crash(cuda):
    random_bytes = bytes((n * 97 + 13) % 256 for n in range(3000))
    elf_header_only = b"\x7fELF\x02\x01\x01" + b"\x00" * 57
    half = cuda.cubin[: len(cuda.cubin) // 2]
    result = disasm.disassemble([("noise", random_bytes), ("header", elf_header_only), ("half", half)])
    assert not result.ok and result.message.startswith("cuobjdump could not read noise: "), result.message
    assert [listing.name for listing in result.listings] == ["noise", "header", "half"]
    for listing in result.listings:
        assert listing.error and not listing.sass, listing
        assert "kernels-child" not in listing.error and "/tmp" not in listing.error
    assert "'noise'" in result.listings[0].error  # the file is named as the reader knows it


@needs_cuobjdump
def test_a_listing_over_its_limit_is_cut_at_a_line_and_marked(triton):
    result = disasm.disassemble([("vector_add", triton.triton_kernels[0].cubin)], max_bytes=2000)
    (listing,) = result.listings
    assert result.ok and listing.truncated and 0 < len(listing.sass) <= 2000 and listing.sass.endswith("\n")


@needs_cuobjdump
def test_a_job_over_its_time_is_killed_and_says_so(cuda):
    result = disasm.disassemble([("submission.cu", cuda.cubin)], timeout_s=0.05)
    assert not result.ok and result.message == "the disassembly took longer than 0.05 s" and not result.listings


def test_a_missing_tool_is_a_message_for_the_reader(cuda, tmp_path):
    result = disasm.disassemble([("submission.cu", cuda.cubin)], cuobjdump=str(tmp_path / "cuobjdump"))
    assert not result.ok and "not installed" in result.message and not result.listings


def test_nothing_to_disassemble_and_oversized_cubins_are_refused_before_any_child():
    assert "no compiled code" in disasm.disassemble([]).message
    big = disasm.disassemble([("x", b"\x00" * (disasm.MAX_CUBIN_BYTES + 1))], cuobjdump="/nonexistent")
    assert not big.ok and "over the disassembler's limit" in big.message


@needs_cuobjdump
def test_the_child_may_execute_cuobjdump_nvdisasm_and_their_loader_only():
    access = disasm.disasm_access(CUOBJDUMP)
    folder = os.path.dirname(CUOBJDUMP)
    named = {os.path.basename(path) for path in access.execute if os.path.dirname(path) == folder}
    assert named == {"cuobjdump", "nvdisasm"}
    others = [path for path in access.execute if os.path.dirname(path) != folder]
    assert len(others) <= 1 and all(os.path.basename(path).startswith("ld-") for path in others)
    assert not access.cuda_driver and not set(access.write) - set(confine.extra_paths())

"""The #include allowlist and the source limits, checked before NVRTC reads anything."""

import pytest

from kernels.source import ALLOWED_INCLUDES, MAX_SOURCE_BYTES, SourceRejected, logical_lines, screen


@pytest.mark.parametrize(
    "source",
    [
        '#include <cuda_fp16.h>\n#include <mma.h>\n#include "cuda_bf16.h"\n',
        "  #  include <cooperative_groups.h>\n",
        'const char* s = "#include </etc/passwd>";\n',
        "// #include </etc/passwd>\n",
        "/* #include </etc/passwd> */\n",
        "#pragma unroll\n#define TILE 32\n",
    ],
)
def test_allowed(source):
    screen(source)


@pytest.mark.parametrize(
    "source, line",
    [
        ('#include "/etc/passwd"\n', 1),
        ("int x;\n#include <stdio.h>\n", 2),
        ("#include <../include/cuda_fp16.h>\n", 1),
        ("# /* hidden */ include </etc/passwd>\n", 1),
        ("#\\\ninclude </etc/passwd>\n", 1),
        ("int a; /* a\n b */ #include <x>\n", 2),
        ("%:include </etc/passwd>\n", 1),
        ("#include_next <mma.h>\n", 1),
        ("#import <mma.h>\n", 1),
        ("#embed </etc/passwd>\n", 1),
        ('#define F "/etc/passwd"\n#include F\n', 2),
        ("#if __has_include(</etc/shadow>)\n#endif\n", 1),
        ('auto s = R"x(\n#include </etc/passwd>\n)x";\n', 2),
        ('auto s = R"(a " /* )";\n#include </etc/passwd>\n// */\n', 2),
    ],
)
def test_rejected(source, line):
    with pytest.raises(SourceRejected, match=f"^line {line}:"):
        screen(source)


def test_size_limit():
    with pytest.raises(SourceRejected, match="limit"):
        screen("x" * (MAX_SOURCE_BYTES + 1))


def test_nul_byte():
    with pytest.raises(SourceRejected, match="NUL"):
        screen("int x;\x00")


def test_logical_lines_keep_physical_numbers():
    assert logical_lines("a\\\nb\nc/*\n*/d\ne") == [(1, "ab"), (3, "c "), (4, "d"), (5, "e")]


def test_allowlist_holds_only_cuda_headers():
    assert "mma.h" in ALLOWED_INCLUDES and "cuda_fp16.h" in ALLOWED_INCLUDES
    assert not any(h.startswith("/") or ".." in h for h in ALLOWED_INCLUDES)

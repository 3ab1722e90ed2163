"""The #include allowlist and the source limits, checked before NVRTC reads anything; the log a reader sees.

The probe tests hold the screen to what NVRTC itself opens: every probe header is `#error PROBE_<n>_OPENED`,
so a probe NVRTC read shows in its log."""

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels import compiler
from kernels.compilelog import reader_log
from kernels.source import (
    ALLOWED_INCLUDES,
    MAX_SOURCE_BYTES,
    SourceRejected,
    logical_lines,
    screen,
    strip_comments,
    tokens,
)

ATTACK = 'static const int k = 1\'000; static const char* s = "x\'/*";\n#include "/proc/self/environ"\n// */\n'


@pytest.mark.parametrize(
    "source",
    [
        '#include <cuda_fp16.h>\n#include <mma.h>\n#include "cuda_bf16.h"\n',
        "  #  include <cooperative_groups.h>\n",
        "\f#\v include <cooperative_groups/reduce.h> // fp16 next\n",
        'const char* s = "#include </etc/passwd>";\n',
        "// #include </etc/passwd>\n",
        "/* #include </etc/passwd> */\n",
        "/*\n#include </etc/passwd>\n*/\n",
        "// a comment \\\n#include </etc/passwd>\n",
        '#pragma unroll\n#define TILE 32\n#pragma push_macro("TILE")\n_Pragma("unroll")\n',
        "int n = 1'000'000; char c = 'x'; const char* s = \"//\";\n#include <cuda_fp16.h>\n",
        "auto a = 0x1'F + 0b1'0 + 1e+5 + .5'0 + 9'9.9'9e-9'9f + 0X1P+3;\n#include <mma.h>\n",
        "auto c = u8'a' + u'b' + U'c' + L'\\'' + '\"' + 'ab';\n#include <mma.h>\n",
        'auto s = u8"\'/*" L"\\"/*" R"(" */ \')" LR"x()" /*)x" u8R"(#include </etc/passwd>)";\n#include <mma.h>\n',
        "int a<:2:> = <%1, 2%>;\n%:include <cuda_bf16.h>\n",
        "#include <cuda_fp16.h> /* a note\n that runs on */\n",
        '#if 0\n#error no\n#endif\nint x; // é ü in a comment, "ß" too\nconst char* s = "é";\n',
        "#include <cuda_fp16.h>",  # no newline at the end
        "int x;\r\n#include <cuda_fp16.h>\r\n",
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
        ("#include < cuda_fp16.h>\n", 1),
        ("#include <cuda_fp16.h> extra\n", 1),
        ('#include u8"cuda_fp16.h"\n', 1),
        ("# /* hidden */ include </etc/passwd>\n", 1),
        ("#/*\n*/include </etc/passwd>\n", 1),
        ("#\\\ninclude </etc/passwd>\n", 1),
        ("#inc\\\nlude </etc/passwd>\n", 1),
        ('#include "/etc/pa\\\nsswd"\n', 1),
        ("int a; /* a\n b */ #include <x>\n", 2),
        ("%:include </etc/passwd>\n", 1),
        ("%: /**/ include_next <mma.h>\n", 1),
        ("#include_next <mma.h>\n", 1),
        ("#import <mma.h>\n", 1),
        ("#embed </etc/passwd>\n", 1),
        ('#define F "/etc/passwd"\n#include F\n', 2),
        ("#define F <cuda_fp16.h>\n#include F\n", 2),
        ("#if __has_include(</etc/shadow>)\n#endif\n", 1),
        ("int x;\n#if __has_include_next(<mma.h>) || __has_embed(</etc/shadow>)\n#endif\n", 2),
        ('auto s = R"x(\n#include </etc/passwd>\n)x";\n', 2),
        ('auto s = R"(a " /* )";\n#include </etc/passwd>\n// */\n', 2),
        # The attack of issue 41 and its kin: a digit separator, a raw string or a prefix read as a quote.
        (ATTACK, 2),
        ("int k = 0x1'F; const char* s = \"'/*\";\n#include </etc/passwd>\n// */\n", 2),
        ("int k = 0b1'0'1; const char* s = \"'/*\";\n#include </etc/passwd>\n// */\n", 2),
        ("float k = 1.5'0e+1'0f; const char* s = \"'/*\";\n#include </etc/passwd>\n// */\n", 2),
        ("float k = .5'0; const char* s = \"'/*\";\n#include </etc/passwd>\n// */\n", 2),
        ('auto s = u8"\'/*";\n#include </etc/passwd>\n// */\n', 2),
        ('auto c = L\'"\'; auto s = "/*";\n#include </etc/passwd>\n// */\n', 2),
        ('auto s = R"d()" /* )d";\n#include </etc/passwd>\n// */\n', 2),
        ('auto s = R"d(")d" /* )d";\n#include </etc/passwd>\n// */\n#include <x>\n', 4),  # ")d" ends it
        ('auto s = R"(\\)" "/*";\n#include </etc/passwd>\n// */\n', 2),
        # NVRTC joins splices in raw strings too: R"x(abc)x<splice>" ends there.
        ('auto s = R"x(abc)x\\\n";\n#include </etc/passwd>\n//"\n', 3),
        ('auto s = R\\\n"x(abc)x";\n#include </etc/passwd>\n', 3),
    ],
)
def test_rejected(source, line):
    with pytest.raises(SourceRejected, match=f"^line {line}:"):
        screen(source)


@pytest.mark.parametrize(
    "source, line, why",
    [
        # NVRTC reads `1'` as a number with a separator (and errs); the standard, as a number and a quote.
        ("int k = 1'; const char* s = \"x'/*\";\n#include </etc/passwd>\n// */\n", 1, "digit separator"),
        ("int k = 1'.5;\n", 1, "digit separator"),
        ("int a; ' /* \n#include </etc/passwd>\n// */\n", 1, "not closed"),
        ('int a; " /*\n', 1, "not closed"),
        ("char c = '';\n", 1, "empty"),
        ("int x;\n/* never closed\n#include </etc/passwd>\n", 2, "never closed"),
        ('auto s = R"x(never closed\n#include </etc/passwd>\n', 1, "raw string"),
        ('auto s = R"a b(x)a b";\n', 1, "raw string"),
        ('auto s = R"\\(x)\\" /*";\n', 1, "raw string"),
        ('auto s = R"0123456789abcdefg(x)0123456789abcdefg";\n', 1, "raw string"),
        ("int x;\n// a comment \\ \n#include </etc/passwd>\n", 2, "backslash followed by spaces"),
        ("#inclu\\\t\nde </etc/passwd>\n", 1, "backslash followed by spaces"),
        ("int a;\r#include </etc/passwd>\r", 1, "carriage return"),
        ("int x;\n\ufeff#include </etc/passwd>\n", 2, "'\\ufeff'"),
        ("#\u00a0include </etc/passwd>\n", 1, "'\\xa0'"),
        ("#includ\\u0065 </etc/passwd>\n", 1, "'\\\\'"),
        ("int a$b;\n", 1, "'$'"),
        ("int k = 1\u00e9'0; const char* s = \"x'/*\";\n", 1, "'é'"),
    ],
)
def test_text_compilers_could_read_differently_is_refused(source, line, why):
    with pytest.raises(SourceRejected, match=f"^line {line}: .*{re.escape(why)}"):
        screen(source)


def test_size_limit():
    with pytest.raises(SourceRejected, match="limit"):
        screen("x" * (MAX_SOURCE_BYTES + 1))


def test_nul_byte():
    with pytest.raises(SourceRejected, match="NUL"):
        screen("int x;\x00")


def test_tokens_carry_physical_lines():
    found = [(t.kind, t.text, t.line) for t in tokens("a\\\nb 1'0\n'x' /*\n*/ R\"(\n)\"") if t.kind != "space"]
    assert found == [
        ("identifier", "ab", 1),
        ("number", "1'0", 2),
        ("newline", "\n", 2),
        ("literal", "'x'", 3),
        ("comment", "/*\n*/", 3),
        ("raw_string", 'R"(\n)"', 4),
    ]


def test_strip_comments_keeps_literals_and_line_breaks():
    assert (
        strip_comments('int k = 1\'0; // c\nchar* s = "/*"; /* a\nb */ x') == 'int k = 1\'0;  \nchar* s = "/*";  \n x'
    )


def test_logical_lines_keep_physical_numbers():
    assert logical_lines("a\\\nb\nc/*\n*/d\ne") == [(1, "ab"), (3, "c "), (4, "d"), (5, "e")]


def test_allowlist_holds_only_cuda_headers():
    assert "mma.h" in ALLOWED_INCLUDES and "cuda_fp16.h" in ALLOWED_INCLUDES
    assert not any(h.startswith("/") or ".." in h for h in ALLOWED_INCLUDES)


# ---- what NVRTC opens --------------------------------------------------------------------------------

PROBES = ("p0.h", "p1.h", "sub/p2.h", "cuda_fp16.h")  # the last is found only if NVRTC looks past CUDA's own


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("probes")
    for n, name in enumerate(PROBES):
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(f"#error PROBE_{n}_OPENED\nsecret_{n} line two\n")
    return folder


def _nvrtc_log(source: str, probe_dir) -> str:
    return compiler.nvrtc_compile(source, [], "sm_90", extra_options=(f"--include-path={probe_dir}",))[1]


def test_the_probes_show_when_opened(probe_dir):
    """The probe works: NVRTC opens probes by absolute path, on the include path and through a macro; the
    CUDA folders come before the probe folder, so <cuda_fp16.h> is CUDA's."""
    assert "PROBE_0_OPENED" in _nvrtc_log(f'#include "{probe_dir}/p0.h"\n', probe_dir)
    assert "PROBE_1_OPENED" in _nvrtc_log("#include <p1.h>\n", probe_dir)
    assert "PROBE_2_OPENED" in _nvrtc_log('#define H "sub/p2.h"\n#include H\n', probe_dir)
    assert "PROBE_0_OPENED" in _nvrtc_log(ATTACK.replace("/proc/self/environ", "p0.h"), probe_dir)
    assert "PROBE" not in _nvrtc_log("#include <cuda_fp16.h>\n", probe_dir)


@pytest.mark.parametrize(
    "before, accepted",
    [
        ('1R"x( " /* )x"', True),  # a pp-number `1R`, then a plain string: the include below is commented out
        ('0x1u8R"x( " /* )x"', True),
        ('_R"x( " /* )x"', True),
        ('UuR"x( " /* )x"', True),
        ('u8R"x( " /* )x"', False),  # a raw string: the include below is real
        ('LR"x( " /* )x"', False),
        ("x1L'\"/*'", False),
        ("1'000 + 0x1'F + .5'0 + 1e'1; auto s = \"x'/*\"", False),
    ],
)
def test_the_screen_reads_numbers_and_prefixes_as_nvrtc_does(probe_dir, before, accepted):
    source = f"auto k = {before};\n#include <p1.h>\n// */\n"
    try:
        screen(source)
    except SourceRejected:
        assert not accepted
        assert "PROBE_1_OPENED" in _nvrtc_log(source, probe_dir)
    else:
        assert accepted
        assert "PROBE" not in _nvrtc_log(source, probe_dir)


def _spliced(piece: str, at: int) -> str:
    """The piece with a line splice inserted, which NVRTC joins away again."""
    at %= len(piece) + 1
    return piece[:at] + "\\\n" + piece[at:]


# Well-formed code: the screen must pass any sequence of these.
_NUMBERS = st.integers(0, 10**12).map(lambda n: f"{n:_}".replace("_", "'")) | st.sampled_from(
    ["0x1'F", "0b1'0'1", "1e+5", "1.5'0e-1'0f", ".5'0", "9'9.9'9e+9'9", "0X1P+3", "1'a", "0x'1"]
)
_LITERALS = st.sampled_from(
    ["'x'", "'\\''", "'\"'", "u8'a'", "L'\\\\'", "'ab'", '"//"', '"/*"', "\"'/*\"", 'u8"x\'/*"', 'L"\\"/*"',
     'U"#include \\"p0.h\\""', 'R"(a " /* )"', 'R"x()" */ )x"', 'LR"(*/)"', 'u8R"d(//\')d"', "R\"('\\)\""]
)  # fmt: skip
_CODE = st.sampled_from(
    ["int", "k", "=", ";", "<:", ":>", "<%", "%>", "%:%:", "R", "u8", "L", "x.y", "a<b>c", "/", "*", "#", "%:"]
)
# Between pieces: white space or a comment (a splice there would join two pieces into other tokens).
_GAPS = st.sampled_from([" ", "\t", " \\\n ", "/**/", '/* #include "p0.h" */', "/*\n*/", "\n"])
_PIECE = st.tuples(st.one_of(_NUMBERS, _LITERALS, _CODE), st.integers(0, 40), st.booleans()).map(
    lambda p: _spliced(p[0], p[1]) if p[2] else p[0]
)


@st.composite
def _code(draw, pieces=_PIECE):
    parts = draw(st.lists(st.tuples(pieces, _GAPS), max_size=12))
    line = "".join(piece + gap for piece, gap in parts)
    return line + draw(st.sampled_from(["", " // a comment", " // c \\\n more comment", " /* open\n close */"]))


def _includes(probe_dir):
    """Lines that make NVRTC open a probe, unless something before them hides them."""
    return st.sampled_from(
        [f'#include "{probe_dir}/p0.h"', f"#include <{probe_dir}/sub/p2.h>", "#include <p1.h>", '#include "p0.h"',
         "%:include <p1.h>", '# /* c */ include "p0.h"', '#/*\n*/include "p0.h"', '#inc\\\nlude "p0.h"',
         '#include "p\\\n0.h"', '#define H "p0.h"\n#include H', "#define H <sub/p2.h>\n#include H",
         "#define CAT(a, b) <a##b.h>\n#include CAT(p, 1)", "#include_next <p1.h>", "  #\tinclude <p1.h>",
         "/* a\n */ #include <p1.h>"]
    )  # fmt: skip


# Text that a lexer can misread: lone quotes, comment and raw-string openers, stray backslashes, odd breaks.
_TRAPS = st.sampled_from(
    ["'", '"', "/*", "*/", "//", 'R"(', ')"', 'R"x(', ')x"', "1'", "\\", "\\ \n", "\r", "??/",
     '1R"(', "1u8'", 'uR"(']
)  # fmt: skip

PROBE_RUNS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@PROBE_RUNS
@given(data=st.data())
def test_an_accepted_source_never_gets_a_probe_opened(probe_dir, data):
    """Sources mixing code, traps and include lines: whatever the screen accepts, NVRTC opens no probe."""
    line = _code(st.one_of(_PIECE, _PIECE, _TRAPS)) | _includes(probe_dir) | st.just("#include <cuda_fp16.h>")
    source = "\n".join(data.draw(st.lists(line, min_size=1, max_size=8))) + "\n"
    try:
        screen(source)
    except SourceRejected:
        return
    log = _nvrtc_log(source, probe_dir)
    assert "PROBE" not in log, log


@pytest.mark.slow
@PROBE_RUNS
@given(lines=st.lists(_code() | st.sampled_from(["#include <cuda_fp16.h>", "#include <mma.h>"]), max_size=8))
def test_well_formed_code_is_accepted_and_opens_no_probe(probe_dir, lines):
    """The screen is no blanket refusal: code of well-formed tokens and allowed includes passes, and compiles
    without NVRTC reading a probe (not even the probe folder's cuda_fp16.h)."""
    source = "\n".join(lines) + "\n"
    screen(source)
    assert "PROBE" not in _nvrtc_log(source, probe_dir)


# ---- the log a reader sees ---------------------------------------------------------------------------


def test_reader_log_keeps_the_readers_own_diagnostics_whole():
    ok, log, *_ = compiler.nvrtc_compile('extern "C" __global__ void k(float* a) {\n  a[0] = b;\n}\n', [], "sm_90")
    assert not ok and 'submission.cu(2): error: identifier "b" is undefined' in log
    assert reader_log(log) == log


def test_reader_log_keeps_ptxas_and_warnings():
    source = 'extern "C" __global__ void k(float* a) { int unused; a[0] = 1; }\n'
    ok, log, *_ = compiler.nvrtc_compile(source, ["k"], "sm_90")
    assert ok and "warning" in log and "ptxas info    : Used" in log
    assert reader_log(log) == log


def test_reader_log_keeps_cuda_headers_by_their_path():
    source = '#include <cuda_fp16.h>\nextern "C" __global__ void k(__half* a) {\n  a[0] = __hadd(a[0], 1.0, 2);\n}\n'
    log = compiler.nvrtc_compile(source, [], "sm_90")[1]
    header_note = next(line for line in log.split("\n") if "cuda_fp16.h(" in line)
    assert reader_log(log, header_dirs=compiler.include_dirs()) == log
    without = reader_log(log)  # header folders not given: the header's lines are left out
    assert header_note not in without and "submission.cu(3): error" in without
    assert without.endswith("lines about other files left out]\n")


def test_reader_log_leaves_out_another_files_content(probe_dir):
    """A file the screen did not stop (compiled here without it): its quoted lines never reach the reader,
    even a line that NVRTC quotes with breaks other than \\n in it, each before what looks like a diagnostic."""
    leak = "int secret_a = ;\nsecret_b\fsubmission.cu(1): error: secret_c\x1csubmission.cu(2): error: secret_d\u2028;\n"
    (probe_dir / "leak.h").write_text(leak)
    source = f'extern "C" __global__ void k() {{ undefined_here; }}\n#include "{probe_dir}/leak.h"\n'
    log = _nvrtc_log(source, probe_dir)
    assert "secret_a" in log and "\x1csubmission.cu(2): error: secret_d" in log
    shown = reader_log(log, header_dirs=compiler.include_dirs())
    assert "secret" not in shown and str(probe_dir) not in shown
    assert 'submission.cu(1): error: identifier "undefined_here" is undefined' in shown
    assert "errors detected in the compilation of" in shown
    dropped = int(shown.rsplit("[", 1)[1].split()[0])
    assert dropped == sum(1 for line in log.split("\n") if line.strip()) - sum(
        1 for line in shown.split("\n")[:-2] if line.strip()
    )


def test_reader_log_leaves_out_line_directive_names_and_opened_probes(probe_dir):
    for source in (f'#line 1 "{probe_dir}/p1.h"\nint x = ;\n', f'#include "{probe_dir}/p0.h"\n'):
        shown = reader_log(_nvrtc_log(source, probe_dir))
        assert str(probe_dir) not in shown and "PROBE" not in shown
        assert "left out]" in shown


def test_reader_log_leaves_out_an_instantiation_in_another_file():
    log = (
        "submission.cu(1): error: expression must have class type\n"
        "  return x.y;\n"
        "         ^\n"
        '          detected during instantiation of "f<int>" at line 3 of /etc/secret.h\n'
        '          detected during instantiation of "g<int>" at line 5\n'
    )
    assert reader_log(log) == (
        "submission.cu(1): error: expression must have class type\n"
        "  return x.y;\n"
        "         ^\n"
        '          detected during instantiation of "g<int>" at line 5\n'
        "[1 line about other files left out]\n"
    )


def test_reader_log_does_not_take_a_dotted_path_for_a_header():
    header_dir = compiler.include_dirs()[0]
    outside = os.path.join(header_dir, "..", "..", "secret.h")
    log = f"{outside}(1): error: x\n  secret\n"
    assert reader_log(log, header_dirs=[header_dir]) == "[2 lines about other files left out]\n"

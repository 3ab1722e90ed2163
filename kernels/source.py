"""Screening of submitted source before NVRTC sees it: size limit and the #include allowlist.

NVRTC opens any path an #include names (absolute, relative, or found on the include path) and quotes
what it read in its error log, so `#include "/etc/passwd"` would leak the file. Every preprocessing
directive that can pull in a file is therefore checked against an allowlist of CUDA's own headers,
after comments and line splices are removed exactly as the preprocessor would (so that neither
`#/**/include` nor a backslash-newline hides a directive) while string literals are kept intact (so that
a "#include" inside a string is not mistaken for one).
"""

from __future__ import annotations

import re

MAX_SOURCE_BYTES = 256 * 1024

# Headers a submission may include. All of them ship with the CUDA toolkit (the nvidia-cuda-runtime and
# nvidia-cuda-nvcc wheels on CPU nodes) and compile under NVRTC with no host headers:
ALLOWED_INCLUDES = frozenset(
    {
        "cuda_fp16.h",  # __half, __half2 and their intrinsics
        "cuda_bf16.h",  # __nv_bfloat16
        "cuda_fp8.h",  # __nv_fp8_e4m3 / e5m2 (Hopper)
        "mma.h",  # nvcuda::wmma tensor-core fragments
        "cuda_pipeline.h",  # __pipeline_memcpy_async (cp.async) and its commit/wait
        "cuda_pipeline_primitives.h",
        "cuda_awbarrier.h",  # arrive/wait barriers
        "cuda_awbarrier_primitives.h",
        "cooperative_groups.h",
        "cooperative_groups/memcpy_async.h",
        "cooperative_groups/reduce.h",
    }
)

# Directives that read another file. `__has_include` only probes, but it would let a submission map the
# file system through compile errors, so it is refused too.
_FILE_DIRECTIVES = ("include", "include_next", "import", "embed")
_DIRECTIVE = re.compile(r"^\s*(?:#|%:)\s*([A-Za-z_]+)\s*(.*)$")  # "%:" is the digraph for "#"
_INCLUDE_ARG = re.compile(r'^(<([^<>"]+)>|"([^"]+)")\s*$')


class SourceRejected(ValueError):
    """The source may not be compiled: the message says why, with the line number."""


def screen(source: str) -> None:
    """Raise SourceRejected unless the source is small enough and includes only allowed headers."""
    try:
        size = len(source.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: text no file and no compiler can hold
        raise SourceRejected("source is not valid Unicode text") from None
    if size > MAX_SOURCE_BYTES:
        raise SourceRejected(f"source is {size} bytes; the limit is {MAX_SOURCE_BYTES}")
    if "\x00" in source:
        raise SourceRejected("source contains a NUL byte")
    for line_no, line in logical_lines(source):
        if "__has_include" in line:
            raise SourceRejected(f"line {line_no}: __has_include is not allowed")
        match = _DIRECTIVE.match(line)
        if not match or match.group(1) not in _FILE_DIRECTIVES:
            continue
        arg = _INCLUDE_ARG.match(match.group(2).strip())
        header = arg and (arg.group(2) or arg.group(3))
        if match.group(1) != "include" or not header or header not in ALLOWED_INCLUDES:
            raise SourceRejected(
                f"line {line_no}: '#{match.group(1)} {match.group(2).strip()}' is not allowed; "
                f"allowed: {', '.join(f'<{h}>' for h in sorted(ALLOWED_INCLUDES))}"
            )


def logical_lines(source: str) -> list[tuple[int, str]]:
    """The source as the preprocessor sees it (splices joined, comments out), with physical line numbers."""
    physical = source.replace("\r\n", "\n").split("\n")
    first_line_of = []  # physical line number where each logical line starts
    continued = False
    for number, line in enumerate(physical, start=1):
        if not continued:
            first_line_of.append(number)
        continued = line.endswith("\\")
    joined = "\n".join(physical).replace("\\\n", "")
    logical = strip_comments(joined).split("\n")
    return list(zip(first_line_of, logical, strict=True))


_RAW_STRING = re.compile(r'R"([^()\\\s]{0,16})\(')


def strip_comments(text: str) -> str:
    """Replace each comment by a space (newlines kept), leaving string and character literals alone."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" ")
            i = end
        elif c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(" " + "\n" * text.count("\n", i, end))
            i = end
        elif c == "R" and _RAW_STRING.match(text, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delimiter = _RAW_STRING.match(text, i).group(1)
            end = text.find(f'){delimiter}"', i)
            end = n if end < 0 else end + len(delimiter) + 2
            out.append(text[i:end])
            i = end
        elif c in "\"'":
            end = _end_of_literal(text, i)
            out.append(text[i:end])
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _end_of_literal(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote or text[i] == "\n":
            return i + 1
        i += 1
    return len(text)

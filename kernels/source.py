"""Screening of submitted source before NVRTC sees it: size limit and the #include allowlist.

NVRTC opens any path an #include names (absolute, relative, or found on the include path) and quotes
what it read in its error log, so `#include "/etc/passwd"` would leak the file. Every preprocessing
directive that can pull in a file is therefore checked against an allowlist of CUDA's own headers. To find
the directives the source is read as the preprocessor reads it (translation phases 1-3): line splices
joined, then comments, string and character literals (with their prefixes), raw strings and pp-numbers
(with digit separators, `1'000`) lexed, so that neither a comment, a literal nor a splice hides a directive
and a "#include" inside a string is not mistaken for one.

Where compilers could lex the same text differently (a lone quote, a digit separator with no digit after
it, a backslash before trailing spaces, characters outside C++'s basic set), the source is refused rather
than guessed about: each of these is a compile error under NVRTC anyway. NVRTC (EDG, C++17) was measured
for the rest: it joins splices inside raw strings too, and a backslash followed by spaces is no splice.
The sandbox the compiler runs in is the real boundary; this screen gives the reader a clear early error.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

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

# Directives that read another file. NVRTC knows only the first two, but a later one may learn the others.
_FILE_DIRECTIVES = frozenset({"include", "include_next", "import", "embed"})
# These only probe for a file, but would let a submission map the file system through compile errors.
_FILE_PROBES = frozenset({"__has_include", "__has_include_next", "__has_embed"})
_HEADER_NAME = re.compile(r'<([^<>"]+)>|"([^<>"]+)"')
_PREFIX = r"(?:u8|[uUL])?"

# One alternative per token kind, tried in order at each position of the spliced text. The kinds in
# _REFUSED are text the screen refuses.
_TOKEN = re.compile(
    rf"""
      (?P<newline>\n)
    | (?P<space>[ \t\v\f]+)
    | (?P<comment>//[^\n]*|/\*.*?\*/)
    | (?P<open_comment>/\*.*)
    | (?P<raw_string>{_PREFIX}R"(?P<delimiter>[0-9A-Za-z_]{{0,16}})\(.*?\)(?P=delimiter)")
    | (?P<open_raw_string>{_PREFIX}R".*)  # refused: not closed, or a delimiter of other characters
    | (?P<literal>{_PREFIX}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)+'))
    | (?P<identifier>[A-Za-z_][0-9A-Za-z_]*)
    | (?P<bad_separator>\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*+')
    | (?P<number>\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*+)
    | (?P<punctuator>%:%:|%:|\#\#|[!#%&()*+,\-./:;<=>?\[\]^{{|}}~])
    | (?P<open_literal>["'][^\n]*)
    | (?P<stray>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_REFUSED = {
    "bad_separator": "a digit separator (') must stand between digits or letters",
    "open_comment": "this /* comment is never closed",
    "open_literal": "this string or character literal is empty or not closed on its line",
    "open_raw_string": "this raw string is not closed, or its delimiter is not up to 16 letters, digits or _",
    "stray": "character {text!r} may appear only in comments and literals",
}
_COMMENTS = ("comment", "open_comment")

# Raw strings are the one literal spanning lines: a toolchain in another language mode would read their
# lines as code, so a line in one that starts like a file directive is refused too.
_DIRECTIVE_IN_TEXT = re.compile(r"^[ \t\v\f]*(?:#|%:)[ \t\v\f]*(include|include_next|import|embed)\b", re.M)
# NVRTC does not join lines at a backslash followed by spaces; GCC does. Refused, as they disagree.
_SPACED_SPLICE = re.compile(r"\\[ \t\v\f]+\n")


class SourceRejected(ValueError):
    """The source may not be compiled: the message says why, with the line number."""


class Token(NamedTuple):
    kind: str  # a group name of _TOKEN
    text: str  # as it reads after line splices are joined
    line: int  # the physical line it starts on, from 1


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
    text = source.replace("\r\n", "\n")
    if (cr := text.find("\r")) >= 0:  # NVRTC reads a lone CR as a space, other compilers as a line break
        raise SourceRejected(f"line {_line_at(text, cr)}: a carriage return without a line feed")
    if match := _SPACED_SPLICE.search(text):
        raise SourceRejected(
            f"line {_line_at(text, match.start())}: a backslash followed by spaces ends the line; "
            "remove the spaces (NVRTC does not join such lines)"
        )
    for directive in _directives(_checked(tokens(text))):
        _check_directive(directive)


def _line_at(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _checked(found: Iterable[Token]) -> Iterator[Token]:
    """The tokens, refusing the first that is refused: lexing on past an unclosed raw string would cost
    a scan to the end of the text for each one."""
    for token in found:
        _check_token(token)
        yield token


def _check_token(token: Token) -> None:
    if token.kind in _REFUSED:
        raise SourceRejected(f"line {token.line}: " + _REFUSED[token.kind].format(text=token.text))
    if token.kind == "identifier" and token.text in _FILE_PROBES:
        raise SourceRejected(f"line {token.line}: {token.text} is not allowed")
    if token.kind == "raw_string" and (match := _DIRECTIVE_IN_TEXT.search(token.text)):
        line = token.line + token.text.count("\n", 0, match.start())
        raise SourceRejected(f"line {line}: a raw string may not hold a line like '#{match.group(1)}'")


def _directives(found: Iterable[Token]) -> Iterator[list[Token]]:
    """The tokens of each preprocessing directive, from its # to the end of its line.

    A # opens a directive when nothing but white space and comments precede it on its line; a comment that
    holds a line break starts a new line for this (`/* ... */ #include` on the comment's last line counts)
    but does not end a directive.
    """
    directive: list[Token] | None = None
    at_line_start = True
    for token in found:
        if directive is not None:
            if token.kind == "newline":
                yield directive
                directive, at_line_start = None, True
            else:
                directive.append(token)
        elif token.kind == "newline" or (token.kind in _COMMENTS and "\n" in token.text):
            at_line_start = True
        elif token.kind not in ("space", *_COMMENTS):
            if at_line_start and token.text in ("#", "%:"):  # "%:" is the digraph for "#"
                directive = [token]
            at_line_start = False
    if directive is not None:
        yield directive


def _check_directive(directive: list[Token]) -> None:
    words = [(i, t) for i, t in enumerate(directive) if i and t.kind not in ("space", *_COMMENTS)]
    if not words or words[0][1].text not in _FILE_DIRECTIVES:
        return
    index, name = words[0]
    argument = "".join(" " if t.kind in _COMMENTS else t.text for t in directive[index + 1 :]).strip()
    header = _HEADER_NAME.fullmatch(argument)
    # Only the literal header name is allowed: a macro (`#include H`) could name any path.
    if name.text != "include" or not header or (header.group(1) or header.group(2)) not in ALLOWED_INCLUDES:
        raise SourceRejected(
            f"line {directive[0].line}: '#{name.text} {argument}' is not allowed; "
            f"allowed: {', '.join(f'<{h}>' for h in sorted(ALLOWED_INCLUDES))}"
        )


def tokens(source: str) -> Iterator[Token]:
    """The source's preprocessing tokens, white space and comments, after line splices are joined.

    Never raises: text the screen refuses comes out as tokens of the kinds in _REFUSED.
    """
    text = source.replace("\r\n", "\n")
    splices = [m.start() - 2 * k for k, m in enumerate(re.finditer(r"\\\n", text))]  # where, once joined
    text = text.replace("\\\n", "")
    line = 1
    for match in _TOKEN.finditer(text):
        yield Token(match.lastgroup, match.group(), line + bisect.bisect_right(splices, match.start()))
        line += match.group().count("\n")


def strip_comments(text: str) -> str:
    """The text with line splices joined and each comment replaced by a space (its line breaks kept)."""
    return "".join(" " + "\n" * t.text.count("\n") if t.kind in _COMMENTS else t.text for t in tokens(text))


def logical_lines(source: str) -> list[tuple[int, str]]:
    """The source as the preprocessor sees it (splices joined, comments out), with physical line numbers."""
    first_line_of = []  # physical line number where each logical line starts
    continued = False
    for number, line in enumerate(source.replace("\r\n", "\n").split("\n"), start=1):
        if not continued:
            first_line_of.append(number)
        continued = line.endswith("\\")
    return list(zip(first_line_of, strip_comments(source).split("\n"), strict=True))

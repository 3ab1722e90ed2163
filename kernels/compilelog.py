"""The part of NVRTC's log a reader may see.

NVRTC quotes the line of source each diagnostic is about, from whatever file that is: a file the
submission got NVRTC to open (an #include the screen missed, some path a later NVRTC learns to read)
would be quoted to the reader. So the log is read as NVRTC writes it and only what is about the reader's
own file or CUDA's headers is kept:

    submission.cu(3): error: no instance of overloaded function "__hadd" matches the argument list
                argument types are: (__half, double, int)
        a[0] = __hadd(a[0], 1.0, 2);
               ^
    /…/include/cuda_fp16.h(3049): note #3322-D: number of parameters of function "__hadd(__half, __half)" …
      __CUDA_HOSTDEVICE_FP16_DECL__ __half __hadd(const __half a, const __half b);
                                           ^

    1 error detected in the compilation of "submission.cu".

A diagnostic starts with `FILE(LINE): SEVERITY`; the lines under it (more of the message, the quoted source
line, the caret) belong to it up to the next diagnostic or blank line. Beside those come NVRTC's summary
lines and ptxas' report. Any other line, and a line naming another file (`at line 5 of /x.h`), is left out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

_DIAGNOSTIC = re.compile(r"(?P<file>\S.*?)\(\d+\): (?:catastrophic error|error|warning|remark|note)\b")
_OTHER_FILE = re.compile(r"\bat line \d+ of (?P<file>.+?)\s*$")
# Lines about the compilation as a whole, from NVRTC (its program, never a file's content) and ptxas.
_OWN_LINE = re.compile(
    r"\d+ (?:catastrophic )?errors? detected in the compilation of .*"
    r"|Compilation terminated\."
    r"|Remark: The warnings can be suppressed .*"
    r"|At end of source: .*"
    r"|ptxas\b.*"
)


def reader_log(log: str, program_name: str = "submission.cu", header_dirs: Iterable[str] = ()) -> str:
    """The lines of an NVRTC log about `program_name` or a header under `header_dirs`, and a count of the rest."""
    readable = _Files(program_name, header_dirs)
    kept: list[str] = []
    left_out = 0
    block_visible = False  # whether the diagnostic the current line belongs to may be shown
    for line in log.split("\n"):  # not splitlines(): a quoted \r or \f must not start a line
        if not line.strip():
            block_visible = False
            if kept and kept[-1]:
                kept.append("")
            continue
        if head := _DIAGNOSTIC.match(line):
            block_visible = readable(head.group("file"))
        elif _OWN_LINE.fullmatch(line):
            block_visible = True
        other = _OTHER_FILE.search(line)
        if block_visible and not (other and not readable(other.group("file"))):
            kept.append(line)
        else:
            left_out += 1
    while kept and not kept[-1]:
        kept.pop()
    if left_out:
        kept.append(f"[{left_out} line{'s' if left_out > 1 else ''} about other files left out]")
    return "\n".join(kept) + "\n" if kept else ""


class _Files:
    """Whether a file named in the log is the reader's or one of CUDA's headers."""

    def __init__(self, program_name: str, header_dirs: Iterable[str]):
        self.program_name = program_name
        self.header_dirs = [os.path.normpath(d) + os.sep for d in header_dirs]

    def __call__(self, name: str) -> bool:
        if name == self.program_name:
            return True
        path = os.path.normpath(name)  # "/include/../../etc/x" is not in /include
        return os.path.isabs(name) and any(path.startswith(d) for d in self.header_dirs)

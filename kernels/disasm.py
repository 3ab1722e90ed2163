"""The SASS of compiled submissions, on request (issue 46): `cuobjdump -sass` on the stored cubins, in a confined child.

A cubin is built from a reader's source (NVRTC's or Triton's build of it), and cuobjdump is a native tool parsing it:
reading one is handled as reading reader input. The job runs in a child of kernels/sandbox.py confined as Triton's
ptxas child is (kernels/triton_compiler.py, `ptxas_access`): an environment built from nothing, no network, read-only
the interpreter and the judge, the cubins and cuobjdump's temporary files in the child's scratch folder, and
Landlock's EXECUTE right on exactly cuobjdump, the nvdisasm it starts (it looks for it beside itself) and the ELF
interpreter that loads them: the one child kind besides ptxas' that may fork and execve (`Access.execute`). Bounds:
the parent's wall-clock timeout for the whole job (the child is killed, and cuobjdump with it: `PR_SET_PDEATHSIG`),
RLIMIT_CPU, which cuobjdump and nvdisasm inherit (an nvdisasm left behind dies at it, or of SIGPIPE once its reader is
gone), RLIMIT_AS, RLIMIT_FSIZE for the files written, and at most `max_bytes` of each listing read back (cuobjdump is
killed past it and the listing is marked cut). The child answers plain data only (`plain_answers`): what comes back
was written by a tool that read hostile input.

cuobjdump is not in the CUDA wheels the judge installs (nvidia-cuda-nvcc-cu12 carries ptxas alone); Triton's wheel
bundles one with its nvdisasm (triton/backends/nvidia/bin, CUDA 13.1 for Triton 3.9), which reads sm_80 to sm_90a
cubins of NVRTC 12.9 and of Triton's ptxas alike: `bundled_cuobjdump()`, the default of the site's
SUBMISSIONS_CUOBJDUMP setting.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import re
import subprocess
import tempfile

from kernels import confine, sandbox
from kernels.payloads import SassJob
from kernels.results import SassListing, SassResult

log = logging.getLogger(__name__)

SASS_JOB = "kernels.disasm:sass_job"
TIMEOUT_S = 30.0  # nvdisasm takes 0.4 s of CPU for vector_add's cubin; a large GEMM's takes a few seconds
MAX_LISTING_BYTES = 2 << 20  # of one cubin's SASS (a 128 x 256 wgmma GEMM's is about 0.5 MB)
MAX_CUBIN_BYTES = 8 << 20  # a submission's cubins are tens of KB; refused beyond this before any child starts
MAX_CUBINS = 64
ADDRESS_SPACE_BYTES = 4 << 30
_ERROR_CHARS = 2000  # of what cuobjdump writes to stderr, kept for the reader


def bundled_cuobjdump() -> str:
    """The cuobjdump Triton's wheel carries, found without importing Triton; "" where Triton is not installed."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return ""
    folder = next(iter(spec.submodule_search_locations))
    return os.path.join(os.path.abspath(folder), "backends", "nvidia", "bin", "cuobjdump")


@functools.lru_cache(maxsize=8)
def cuobjdump_release(path: str) -> str:
    """ "13.1" from `cuobjdump --version`: the parent's own run, with no input of anyone's."""
    text = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    match = re.search(r"release (\d+\.\d+)", text)
    if match is None:
        raise RuntimeError(f"{path} --version names no release")
    return match.group(1)


def disasm_access(cuobjdump: str) -> sandbox.Access:
    """The disassembly child: the judge's code read-only, plus executing exactly cuobjdump, the nvdisasm beside it
    (cuobjdump starts it by that path) and the ELF interpreter of each."""
    from kernels.triton_compiler import elf_interpreter

    executables = [cuobjdump]
    nvdisasm = os.path.join(os.path.dirname(cuobjdump), "nvdisasm")
    if os.path.isfile(nvdisasm):
        executables.append(nvdisasm)
    for program in list(executables):
        interpreter = elf_interpreter(program)
        if interpreter:
            executables.append(os.path.realpath(interpreter))
    return sandbox.Access.for_code((SASS_JOB,)).plus(execute=tuple(dict.fromkeys(executables)))


def disassemble(
    cubins: list[tuple[str, bytes]],
    cuobjdump: str | None = None,
    timeout_s: float = TIMEOUT_S,
    max_bytes: int = MAX_LISTING_BYTES,
) -> SassResult:
    """`cuobjdump -sass` of each (name, cubin), in one confined child. Never raises for a bad cubin or a missing
    tool: the result says why there is no listing (`message`, and a listing's `error` for a cubin cuobjdump refused)."""
    cuobjdump = os.path.abspath(cuobjdump) if cuobjdump else bundled_cuobjdump()
    if not cubins:
        return SassResult(ok=False, message="there is no compiled code to disassemble")
    if len(cubins) > MAX_CUBINS or any(len(cubin) > MAX_CUBIN_BYTES for _, cubin in cubins):
        return SassResult(
            ok=False,
            message=f"the compiled code is over the disassembler's limit of {MAX_CUBINS} cubins "
            f"of {MAX_CUBIN_BYTES >> 20} MB",
        )
    try:
        release = cuobjdump_release(cuobjdump)
        access = disasm_access(cuobjdump)
    except (OSError, ValueError, RuntimeError, subprocess.SubprocessError) as exc:
        log.error("cuobjdump is not usable at %r: %s", cuobjdump, exc)
        return SassResult(
            ok=False, message="the disassembler (cuobjdump) is not installed on this node; staff are told"
        )
    job = SassJob(cuobjdump=cuobjdump, cubins=tuple((str(n), bytes(c)) for n, c in cubins), max_bytes=max_bytes)
    # CPU seconds as a backstop for cuobjdump and nvdisasm, which inherit them: the wall clock ends the job first.
    limits = sandbox.Limits(address_space_bytes=ADDRESS_SPACE_BYTES, cpu_seconds=int(timeout_s) * 2 + 2)
    try:
        outcome = sandbox.run_once(SASS_JOB, job, timeout_s, limits, access, plain_answers=True)
    except sandbox.SandboxUnavailable as exc:
        log.critical("disassembly refused: %s", exc)
        return SassResult(ok=False, message="this node cannot confine the disassembler; staff are told")
    result = SassResult(ok=False, tool=f"cuobjdump {release}", wall_time_ms=outcome.wall_time_ms)
    if outcome.status is sandbox.Status.TIMED_OUT:
        result.message = f"the disassembly took longer than {timeout_s:g} s"
        return result
    if outcome.status is not sandbox.Status.OK:
        log.error("disassembly job failed (%s): %s %s", outcome.status.value, outcome.died_of, outcome.error[-2000:])
        result.message = "the disassembler failed; staff are told"
        return result
    try:
        result.listings = _checked_answer(outcome.value, job)
    except ValueError as exc:
        log.error("disassembly job answered out of form: %s", exc)
        result.message = "the disassembler failed; staff are told"
        return result
    refused = [listing for listing in result.listings if listing.error]
    result.ok = not refused
    if refused:
        result.message = f"cuobjdump could not read {refused[0].name}: {refused[0].error.splitlines()[0]}"
    return result


def _checked_answer(value: object, job: SassJob) -> list[SassListing]:
    """The child's answer, every field of the expected type and size (the text came from a tool that read hostile
    input)."""
    if not isinstance(value, dict) or not isinstance(value.get("listings"), list):
        raise ValueError("no listings")
    listings = value["listings"]
    if len(listings) != len(job.cubins):
        raise ValueError("not one listing per cubin")
    checked = []
    for (name, _), listing in zip(job.cubins, listings, strict=True):
        if not isinstance(listing, dict) or not all(isinstance(listing.get(k), str) for k in ("sass", "error")):
            raise ValueError("a listing without sass and error")
        if type(listing.get("truncated")) is not bool or len(listing["sass"]) > job.max_bytes:
            raise ValueError("a listing over its limit")
        checked.append(
            SassListing(
                name=name, sass=listing["sass"], truncated=listing["truncated"], error=listing["error"][:_ERROR_CHARS]
            )
        )
    return checked


# ---- the child ---------------------------------------------------------------------------------------------------


def sass_job(job: SassJob) -> dict:
    """Child side: each cubin written to the scratch folder (TMPDIR, where cuobjdump also writes its temporary
    files), `cuobjdump -sass` on it. Answers plain data: {"listings": [{"sass", "truncated", "error"}, ...]}."""
    scratch = tempfile.gettempdir()
    listings = []
    for index, (name, cubin) in enumerate(job.cubins):
        path = os.path.join(scratch, f"{index}.cubin")
        with open(path, "wb") as file:
            file.write(cubin)
        sass, truncated, code, said = _cuobjdump(job.cuobjdump, path, scratch, job.max_bytes)
        os.unlink(path)
        # The reader never sees the child's scratch path: cuobjdump's messages name the file it was given.
        said = said.replace(path, name).strip()
        if code != 0 and not truncated:
            listings.append({"sass": "", "truncated": False, "error": said or f"cuobjdump ended with status {code}"})
        elif not sass.strip():
            listings.append({"sass": "", "truncated": False, "error": said or "cuobjdump found no SASS in it"})
        else:
            listings.append({"sass": sass, "truncated": truncated, "error": ""})
    return {"listings": listings}


def _cuobjdump(cuobjdump: str, path: str, scratch: str, max_bytes: int) -> tuple[str, bool, int, str]:
    """(the listing, whether it was cut, the exit status, what it wrote to stderr)."""
    with tempfile.TemporaryFile(dir=scratch) as errors:
        process = subprocess.Popen(
            [cuobjdump, "-sass", path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            cwd=scratch,
            preexec_fn=confine.die_with_parent,  # noqa: PLW1509 (the point: no cuobjdump outlives this child)
        )
        data = process.stdout.read(max_bytes + 1)
        truncated = len(data) > max_bytes
        if truncated:
            process.kill()
            data = data[:max_bytes].rsplit(b"\n", 1)[0] + b"\n"
        process.stdout.close()
        code = process.wait()
        errors.seek(0)
        said = errors.read(_ERROR_CHARS).decode("utf-8", errors="replace")
    return data.decode("utf-8", errors="replace"), truncated, code, said

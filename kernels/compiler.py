"""Compilation with NVRTC, on any machine: no GPU, no CUDA driver, no host compiler.

`compile_submission` screens the source, parses and resolves the launch plan at every shape of the
problem, then runs NVRTC in a child process (time- and memory-bounded) through CuPy's low-level binding,
which loads libnvrtc without touching a device. The result carries the cubin, NVRTC's log (line numbers
are the submitted file's), the lowered (mangled) name of each planned kernel and ptxas' resource report.
"""

from __future__ import annotations

import ctypes
import glob
import hashlib
import logging
import os
import re
import sys
from pathlib import Path

from kernels import compilelog, problems, sandbox
from kernels import plan as plan_mod
from kernels import source as source_mod
from kernels.payloads import CompileJob, NvrtcOutput
from kernels.results import CompileResult, KernelResources, Verdict

log = logging.getLogger(__name__)

DEFAULT_ARCH = "sm_90"
SUPPORTED_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")
COMPILE_TIMEOUT_S = 30.0
COMPILE_ADDRESS_SPACE_BYTES = 8 << 30  # NVRTC on a pathological template can eat memory: cap the child
PROGRAM_NAME = "submission.cu"  # NVRTC's log names the file so: "submission.cu(12): error: ..."
MAX_LOG_CHARS = 64 * 1024  # of the log a reader is shown
# Of the PTX kept in a result for the report (issue 46: CUDA's whole file, each Triton build's): Triton's 128 x 256
# wgmma GEMM rung makes 90 KB; the whole result is stored with the submission, so a pathological file's is cut.
MAX_KEPT_PTX_CHARS = 1 << 20


def _nvrtc():
    """CuPy's NVRTC binding; the cupy_backends path avoids importing all of CuPy (0.1 s instead of 0.6 s)."""
    try:
        from cupy_backends.cuda.libs import nvrtc
    except ImportError:  # layout of other CuPy versions
        from cupy.cuda import nvrtc
    return nvrtc


def nvrtc_version() -> str:
    major, minor = _nvrtc().getVersion()
    return f"{major}.{minor}"


def source_sha256(source: str) -> str:
    """The digest a CompileResult records of its source (what `bench --compiled` matches a file against)."""
    return hashlib.sha256(source.encode("utf-8", errors="replace")).hexdigest()


def compile_submission(
    source: str,
    problem: str | problems.Problem,
    arch: str = DEFAULT_ARCH,
    timeout_s: float = COMPILE_TIMEOUT_S,
    language: str = "cuda",
) -> CompileResult:
    """Screen, plan and compile one submission. Never raises for a bad submission: see `verdict`. `language`
    "triton": a Triton .py file, compiled by kernels/triton_compiler.py (issue 46)."""
    if language == "triton":
        from kernels import triton_compiler

        return triton_compiler.compile_triton(source, problem, arch, timeout_s)
    if language != "cuda":
        raise ValueError(f"language {language!r} is not cuda or triton")
    problem = problems.load(problem) if isinstance(problem, str) else problem
    if arch not in SUPPORTED_ARCHS:
        raise ValueError(f"arch {arch!r} is not one of {', '.join(SUPPORTED_ARCHS)}")
    result = CompileResult(
        verdict=Verdict.COMPILED,
        message="",
        problem=problem.name,
        arch=arch,
        source_sha256=source_sha256(source),
    )
    try:
        source_mod.screen(source)
        launches = plan_mod.extract_plan(source)
        result.plan = [launch.to_dict() for launch in launches]
        plan_mod.resolve_all(launches, problem.all_shapes(), arch, problem)
        _check_kernels_defined(source, launches)
    except source_mod.SourceRejected as exc:
        return _failed(result, Verdict.SOURCE_REJECTED, str(exc))
    except plan_mod.PlanError as exc:
        return _failed(result, Verdict.PLAN_ERROR, str(exc))
    names = sorted({launch.kernel for launch in launches})
    headers = tuple(include_dirs())  # searched once: the child's include path, its Landlock paths, the log's filter
    try:
        outcome = sandbox.run_once(
            "kernels.compiler:compile_job",
            CompileJob(source=source, names=tuple(names), arch=arch, include_dirs=headers),
            timeout_s,
            # CPU seconds only as a backstop: the wall-clock timeout ends a child long before (NVRTC is one thread).
            sandbox.Limits(address_space_bytes=COMPILE_ADDRESS_SPACE_BYTES, cpu_seconds=int(timeout_s) * 2 + 2),
            compile_access(headers),
        )
    except sandbox.SandboxUnavailable as exc:
        log.critical("compile refused: %s", exc)
        return _failed(result, Verdict.INTERNAL_ERROR, "the compile node cannot sandbox submissions; staff are told")
    return _with_outcome(result, outcome, names, timeout_s, headers)


def compile_access(headers: tuple[str, ...] | None = None) -> sandbox.Access:
    """What the compile child may open (kernels/confine.py): the interpreter, the judge, NVRTC's library and the
    CUDA headers' folders (`include_dirs()` unless given); nothing else (no /proc of another process, no project
    root, no secret)."""
    return sandbox.Access.for_code(("kernels.compiler",)).plus(read=headers or tuple(include_dirs()))


def _check_kernels_defined(source: str, launches: list[plan_mod.Launch]) -> None:
    code = source_mod.strip_comments(source)
    for launch in launches:
        if not re.search(rf"\b{re.escape(launch.base_name)}\b", code):
            raise plan_mod.PlanError(
                f"the plan launches {launch.kernel!r} but no kernel {launch.base_name!r} is defined"
            )


def _failed(result: CompileResult, verdict: Verdict, message: str, log: str = "") -> CompileResult:
    result.verdict, result.message, result.log = verdict, message, log
    return result


def _with_outcome(
    result: CompileResult, outcome: sandbox.Outcome, names: list[str], timeout_s: float, headers: tuple[str, ...]
) -> CompileResult:
    result.compile_time_ms = outcome.wall_time_ms
    if outcome.status is sandbox.Status.TIMED_OUT:
        return _failed(result, Verdict.TIMED_OUT, f"compilation took longer than {timeout_s:g} s")
    if outcome.status is sandbox.Status.CRASHED:
        return _failed(result, Verdict.CRASHED, f"the compiler died ({outcome.died_of}), perhaps out of memory")
    if outcome.status is sandbox.Status.ERROR:
        log.error("compile job failed: %s", outcome.error)  # for operators; the reader sees no traceback of ours
        return _failed(result, Verdict.INTERNAL_ERROR, "the compile job failed; this is not your fault")
    nvrtc: NvrtcOutput = outcome.value
    result.nvrtc_version = nvrtc.nvrtc_version
    shown = reader_log(nvrtc.log, headers)
    if not nvrtc.ok:
        return _failed(result, Verdict.COMPILE_ERROR, first_error(shown) or "compilation failed", shown)
    result.log = shown
    result.cubin = nvrtc.cubin
    result.ptx = kept_ptx(nvrtc.ptx)
    result.lowered_names = nvrtc.lowered_names
    resources = parse_ptxas_info(nvrtc.log)
    result.kernels = [
        resources.get(result.lowered_names[n], KernelResources(n, result.lowered_names[n])) for n in names
    ]
    for kernel, name in zip(result.kernels, names, strict=True):
        kernel.name = name
    result.message = f"compiled for {result.arch} in {result.compile_time_ms:.0f} ms"
    return result


def reader_log(log: str, headers: tuple[str, ...]) -> str:
    """What of NVRTC's log the reader sees: lines about their own file and CUDA's headers (kernels/compilelog.py),
    at most MAX_LOG_CHARS of them (a template error can fill megabytes)."""
    shown = compilelog.reader_log(log, PROGRAM_NAME, headers)
    if len(shown) > MAX_LOG_CHARS:
        shown = shown[:MAX_LOG_CHARS].rsplit("\n", 1)[0] + f"\n[the log is cut at {MAX_LOG_CHARS // 1024} KB]\n"
    return shown


def first_error(log: str) -> str:
    for line in log.splitlines():
        if ": error" in line or "error:" in line.lower():
            return line.strip()
    return ""


def kept_ptx(ptx: str) -> str:
    """PTX as a result keeps it: whole up to MAX_KEPT_PTX_CHARS, else its beginning cut at a line, with a note."""
    if len(ptx) <= MAX_KEPT_PTX_CHARS:
        return ptx
    cut = ptx[:MAX_KEPT_PTX_CHARS].rsplit("\n", 1)[0]
    return f"{cut}\n// [the PTX is cut here at {MAX_KEPT_PTX_CHARS >> 10} KB of {len(ptx) >> 10} KB]\n"


def compile_job(job: CompileJob) -> NvrtcOutput:
    """Child side: run NVRTC."""
    return nvrtc_build(job.source, list(job.names), job.arch, headers=job.include_dirs)


def nvrtc_compile(
    source: str,
    names: list[str],
    arch: str,
    extra_options: tuple[str, ...] = (),
    headers: tuple[str, ...] | None = None,
) -> tuple[bool, str, bytes, dict]:
    """Compile to a cubin for `arch` with the CUDA headers of `headers` (`include_dirs()` unless given); (ok, log,
    cubin, {name expression: lowered name})."""
    built = nvrtc_build(source, names, arch, extra_options, headers)
    return built.ok, built.log, built.cubin, built.lowered_names


def nvrtc_build(
    source: str,
    names: list[str],
    arch: str,
    extra_options: tuple[str, ...] = (),
    headers: tuple[str, ...] | None = None,
) -> NvrtcOutput:
    """`nvrtc_compile` with its PTX as well: NVRTC keeps the PTX it made on the way to the cubin, so asking for it
    costs a copy, not a second compile (issue 46: the report's PTX section)."""
    nvrtc = _nvrtc()
    options = [
        f"--gpu-architecture={arch}",
        "--std=c++17",
        "--generate-line-info",  # source lines in the cubin for profilers; costs nothing at run time
        "--ptxas-options=-v",  # registers, shared memory, stack frame and spills into the log
        *[f"--include-path={d}" for d in (include_dirs() if headers is None else headers)],
        *extra_options,
    ]
    program = nvrtc.createProgram(source, PROGRAM_NAME, [], [])
    try:
        for name in names:
            nvrtc.addNameExpression(program, name)
        try:
            nvrtc.compileProgram(program, options)
        except nvrtc.NVRTCError:
            return NvrtcOutput(False, _clean(nvrtc.getProgramLog(program)), b"", {}, nvrtc_version())
        lowered = {name: nvrtc.getLoweredName(program, name) for name in names}
        ptx = nvrtc.getPTX(program)
        ptx = (ptx.decode("utf-8", errors="replace") if isinstance(ptx, bytes) else str(ptx)).rstrip("\x00")
        return NvrtcOutput(
            True, _clean(nvrtc.getProgramLog(program)), _cubin_of(program), lowered, nvrtc_version(), ptx
        )
    finally:
        nvrtc.destroyProgram(program)


def _cubin_of(program: int) -> bytes:
    """The whole cubin. CuPy's getCUBIN (14.2) reads it like a C string and drops its last byte: the
    driver still loads that, but cuobjdump and nvdisasm refuse it, so ask NVRTC for size and bytes
    through the library CuPy already loaded."""
    library = ctypes.CDLL(_loaded_library_path("libnvrtc.so"))
    size = ctypes.c_size_t()
    if library.nvrtcGetCUBINSize(ctypes.c_void_p(program), ctypes.byref(size)) != 0:
        raise RuntimeError("nvrtcGetCUBINSize failed")
    buffer = ctypes.create_string_buffer(size.value)
    if library.nvrtcGetCUBIN(ctypes.c_void_p(program), buffer) != 0:
        raise RuntimeError("nvrtcGetCUBIN failed")
    return buffer.raw


def _loaded_library_path(stem: str) -> str:
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith(stem):
                return path
    raise RuntimeError(f"{stem} is not loaded in this process")


def _clean(log: str) -> str:
    return log.replace("\x00", "").rstrip() + "\n"


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")


def parse_ptxas_info(log: str) -> dict[str, KernelResources]:
    """ptxas -v's report per entry function, keyed by lowered name."""
    found: dict[str, KernelResources] = {}
    current: KernelResources | None = None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = found.setdefault(m.group(1), KernelResources(m.group(1), m.group(1)))
        elif current is not None and (m := _FRAME.search(line)):
            current.local_bytes, current.spill_store_bytes, current.spill_load_bytes = map(int, m.groups())
        elif current is not None and (m := _USED.search(line)):
            current.registers = int(m.group(1))
            smem, cmem = _SMEM.search(line), _CMEM.search(line)
            current.static_shared_bytes = int(smem.group(1)) if smem else 0
            current.const_bytes = int(cmem.group(1)) if cmem else 0
    return found


# ---- include folders -------------------------------------------------------------------------------

_VERSION_DEFINE = re.compile(r"#define\s+CUDART_VERSION\s+(\d+)")


def include_dirs() -> list[str]:
    """Folders holding cuda_fp16.h & co. and crt/mma.h, matched to the NVRTC in use.

    Order: $KERNELS_CUDA_INCLUDE (os.pathsep-separated, taken as is), then the toolkit ($CUDA_PATH,
    $CUDA_HOME, /usr/local/cuda) and the nvidia-* wheels on sys.path, keeping folders whose
    cuda_runtime_api.h has NVRTC's major version (mixing 12.x headers with NVRTC 13 fails to compile).
    """
    override = os.environ.get("KERNELS_CUDA_INCLUDE")
    if override:
        return [d for d in override.split(os.pathsep) if d]
    major = int(nvrtc_version().split(".")[0])
    candidates = _candidate_dirs()
    runtime_dirs = [d for d in candidates if (d / "cuda_fp16.h").is_file() and _cudart_major(d) == major]
    if not runtime_dirs:
        runtime_dirs = [d for d in candidates if (d / "cuda_fp16.h").is_file()]
    if not runtime_dirs:
        return []
    chosen = [runtime_dirs[0]]
    if not (runtime_dirs[0] / "crt" / "mma.h").is_file():
        # The wheels split the headers: crt/ comes from nvidia-cuda-nvcc, installed beside nvidia-cuda-runtime.
        siblings = [d for d in candidates if (d / "crt" / "mma.h").is_file()]
        siblings.sort(key=lambda d: d.parent.parent != runtime_dirs[0].parent.parent)
        chosen += siblings[:1]
    return [str(d) for d in chosen]


def _candidate_dirs() -> list[Path]:
    roots = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"]
    dirs = [Path(r) / "include" for r in roots if r]
    for entry in sys.path:
        for pattern in ("nvidia/*/include", "nvidia/*/*/include", "nvidia/cu*/include"):
            dirs += [Path(p) for p in sorted(glob.glob(os.path.join(entry, pattern)))]
    seen, unique = set(), []
    for d in dirs:
        if d.is_dir() and d.resolve() not in seen:
            seen.add(d.resolve())
            unique.append(d)
    return unique


def _cudart_major(folder: Path) -> int | None:
    try:
        match = _VERSION_DEFINE.search((folder / "cuda_runtime_api.h").read_text(errors="replace"))
    except OSError:
        return None
    return int(match.group(1)) // 1000 if match else None

"""Triton submissions on the CPU compile node (issue 46): the parse check, the plan, then two sandboxed children.

    parent     triton_source.check (the whitelist) and extract (the plan, the kernels' parameters), the plan
               resolved at every shape (grid, 32 x num_warps threads)
    PTX child  runs the reader's Python: executes the checked file in a fresh namespace, hands each planned
               @triton.jit function to triton.compile for the target, and stops Triton before its ptxas step
               (a stage hook), answering the PTX and Triton's metadata. Confined like NVRTC's child: no fork,
               no exec, no network, the interpreter and its packages read-only, its scratch folder (Triton's
               cache and HOME) read-write. It never runs ptxas: the parent tells it the ptxas release, which
               fixes the PTX version.
    ptxas child runs no reader Python: Triton's own `make_cubin` assembles each PTX with Triton's bundled ptxas.
               The one child kind that may fork and execve, and Landlock's EXECUTE right covers exactly that
               ptxas and the ELF interpreter that loads it (kernels/confine.py, `Access.execute`).

Both children answer plain data only (kernels/sandbox.py, `plain_answers`): the PTX child runs reader code that
could write anything to its pipe, so nothing it sends is unpickled into objects here; the parent checks every
field of the answers (the kernel's name against its PTX, the warps against the plan, the sizes against the limits)
before the result carries them.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import logging
import os
import re
import struct
import subprocess
import sys
import traceback

from kernels import confine, problems, sandbox
from kernels import plan as plan_mod
from kernels import triton_source as triton_source_mod
from kernels.compiler import DEFAULT_ARCH, MAX_LOG_CHARS, kept_ptx, parse_ptxas_info, source_sha256
from kernels.payloads import PtxasJob, TritonBuild, TritonJob
from kernels.results import CompileResult, KernelResources, TritonKernel, Verdict

log = logging.getLogger(__name__)

SUPPORTED_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")  # Triton builds sm_90a for both Hopper names
COMPILE_TIMEOUT_S = 30.0  # the PTX child (the reader's Python and Triton's lowering); the ptxas child has as much
ADDRESS_SPACE_BYTES = 8 << 30
# The ptxas the node uses, when not Triton's bundled one for the target (a driver older than its CUDA release
# cannot load what it builds): a path, taken by the parent only.
PTXAS_VARIABLE = "KERNELS_TRITON_PTXAS"
PTX_JOB = "kernels.triton_compiler:ptx_job"
PTXAS_JOB = "kernels.triton_compiler:ptxas_job"
# Imported by the children before they confine themselves (Triton's import reads many files; nothing of the reader's
# is there yet).
PTX_PRELOAD = ("triton.compiler:ASTSource",)
PTXAS_PRELOAD = ("triton.backends.nvidia.compiler:CUDABackend",)
MAX_ANSWER_PTX_CHARS = 16 << 20
_ENTRY = re.compile(r"\.visible\s+\.entry\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^)]*)\)")
_SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")
_SCRATCH_PARAMS = ("global_scratch", "profile_scratch")


# The minor version this module is written against (pyproject's `judge` extra pins it): its stage hook, cache key
# and make_cubin. A node with another Triton (the GPU image's own, say) judges what a compile node built instead.
PINNED_MINOR = "3.9"


def compiles_here() -> bool:
    """Whether this machine's Triton is the pinned minor version, so that its compile stage can run here."""
    return triton_version().startswith(PINNED_MINOR + ".")


def triton_version() -> str:
    """The installed Triton's version, without importing it (the parent never does)."""
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return ""


def capability_of(arch: str) -> int:
    return int(arch[3:5])


def ptxas_path(capability: int) -> str:
    """KERNELS_TRITON_PTXAS, else the ptxas Triton uses for this target: its bundled `ptxas-blackwell` (CUDA 13)
    from compute capability 9.0 on, `ptxas` (CUDA 12.9) below (triton/backends/nvidia/compiler.py, get_ptxas)."""
    chosen = os.environ.get(PTXAS_VARIABLE)
    if chosen:
        return os.path.abspath(chosen)
    from kernels.confine import package_dir

    name = "ptxas-blackwell" if capability >= 90 else "ptxas"
    return os.path.join(package_dir("triton"), "backends", "nvidia", "bin", name)


@functools.lru_cache(maxsize=8)
def ptxas_release(path: str) -> str:
    """ "13.4" from `ptxas --version`, run here once per path: the parent's own, trusted run, with no input."""
    text = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    match = re.search(r"release (\d+\.\d+)", text)
    if match is None:
        raise RuntimeError(f"{path} --version names no release")
    return match.group(1)


def elf_interpreter(path: str) -> str | None:
    """The ELF interpreter (PT_INTERP) a dynamically linked executable is loaded by, or None (static)."""
    with open(path, "rb") as file:
        header = file.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2:  # 64-bit ELF only: the nodes are x86-64 and aarch64
            raise ValueError(f"{path} is not a 64-bit ELF executable")
        endian = "<" if header[5] == 1 else ">"
        phoff = struct.unpack_from(endian + "Q", header, 32)[0]
        phentsize, phnum = struct.unpack_from(endian + "HH", header, 54)
        for index in range(phnum):
            file.seek(phoff + index * phentsize)
            kind, _flags, offset, _vaddr, _paddr, size = struct.unpack(endian + "IIQQQQ", file.read(40))
            if kind == 3:  # PT_INTERP
                file.seek(offset)
                return file.read(size).rstrip(b"\x00").decode()
    return None


def ptx_access() -> sandbox.Access:
    """The PTX child: the compile child's rights (interpreter, libraries, the judge, Triton's package read-only)."""
    return sandbox.Access.for_code(("kernels.triton_compiler", *PTX_PRELOAD))


def ptxas_access(ptxas: str) -> sandbox.Access:
    """The ptxas child: as the PTX child, plus executing exactly `ptxas` and its ELF interpreter."""
    interpreter = elf_interpreter(ptxas)
    executable = (ptxas, os.path.realpath(interpreter)) if interpreter else (ptxas,)
    return sandbox.Access.for_code(("kernels.triton_compiler", *PTXAS_PRELOAD)).plus(execute=executable)


def compile_triton(
    source: str,
    problem: str | problems.Problem,
    arch: str = DEFAULT_ARCH,
    timeout_s: float = COMPILE_TIMEOUT_S,
) -> CompileResult:
    """Check, plan and compile one Triton submission. Never raises for a bad submission: see `verdict`."""
    problem = problems.load(problem) if isinstance(problem, str) else problem
    if arch not in SUPPORTED_ARCHS:
        raise ValueError(f"arch {arch!r} is not one of {', '.join(SUPPORTED_ARCHS)}")
    result = CompileResult(
        verdict=Verdict.COMPILED,
        message="",
        problem=problem.name,
        arch=arch,
        source_sha256=source_sha256(source),
        language="triton",
        triton_version=triton_version(),
    )
    try:
        triton_source_mod.check(source)
        plan = triton_source_mod.extract(source, problem)
        result.plan = [launch.to_dict() for launch in plan.launches]
        plan_mod.resolve_all([launch.as_launch() for launch in plan.launches], problem.all_shapes(), arch, problem)
    except triton_source_mod.SourceRejected as exc:
        return _failed(result, Verdict.SOURCE_REJECTED, str(exc))
    except plan_mod.PlanError as exc:
        return _failed(result, Verdict.PLAN_ERROR, str(exc))
    builds: dict[tuple, list[int]] = {}
    for index, launch in enumerate(plan.launches):
        builds.setdefault(launch.build, []).append(index)
    capability = capability_of(arch)
    try:
        ptxas = ptxas_path(capability)
        release = ptxas_release(ptxas)
        assembler_access = ptxas_access(ptxas)
    except (OSError, ValueError, RuntimeError, subprocess.SubprocessError) as exc:
        log.error("Triton's ptxas is not usable: %s", exc)
        return _failed(result, Verdict.INTERNAL_ERROR, "the compile node has no working Triton; staff are told")
    job = TritonJob(
        source=source,
        capability=capability,
        arg_types=triton_source_mod.triton_types(problem),
        builds=tuple(TritonBuild(*build) for build in builds),
        ptxas_release=release,
        aligned=triton_source_mod.aligned_arguments(problem),
    )
    limits = sandbox.Limits(address_space_bytes=ADDRESS_SPACE_BYTES, cpu_seconds=int(timeout_s) * 2 + 2)
    try:
        # The ptxas child starts (imports, confinement) while the PTX child works.
        with sandbox.Worker(
            limits=limits, access=assembler_access, preload=(PTXAS_JOB, *PTXAS_PRELOAD), spares=0, plain_answers=True
        ) as assembler:
            assembler.spawn()
            lowered = sandbox.run_once(
                PTX_JOB, job, timeout_s, limits, ptx_access(), preload=PTX_PRELOAD, plain_answers=True
            )
            result.compile_time_ms = lowered.wall_time_ms
            failure = _outcome_failure(lowered, timeout_s)
            if failure:
                return _failed(result, *failure)
            try:
                ptx = _checked_ptx_answer(lowered.value, job)
            except ValueError as exc:
                log.error("Triton's PTX job answered out of form: %s", exc)
                return _failed(result, Verdict.INTERNAL_ERROR, "the compile job failed; this is not your fault")
            if not ptx["ok"]:
                shown = _cut(ptx["log"])
                return _failed(result, Verdict.COMPILE_ERROR, _first_line(shown), shown)
            items = tuple((kernel["ptx"], kernel["metadata"]) for kernel in ptx["kernels"])
            assembled = assembler.call(PTXAS_JOB, PtxasJob(capability, ptxas, items), timeout_s)
    except sandbox.SandboxUnavailable as exc:
        log.critical("compile refused: %s", exc)
        return _failed(result, Verdict.INTERNAL_ERROR, "the compile node cannot sandbox submissions; staff are told")
    result.compile_time_ms += assembled.wall_time_ms
    failure = _outcome_failure(assembled, timeout_s)
    if failure:
        return _failed(result, *failure)
    try:
        cubins = _checked_ptxas_answer(assembled.value, len(items))
    except ValueError as exc:
        log.error("Triton's ptxas job answered out of form: %s", exc)
        return _failed(result, Verdict.INTERNAL_ERROR, "the compile job failed; this is not your fault")
    if not cubins["ok"]:
        shown = _cut(cubins["log"])
        return _failed(result, Verdict.COMPILE_ERROR, _first_line(shown), shown)
    result.ptxas_version = cubins["ptxas_version"]
    return _assembled(result, job, builds, ptx["kernels"], cubins, problem)


def _outcome_failure(outcome: sandbox.Outcome, timeout_s: float) -> tuple[Verdict, str] | None:
    if outcome.status is sandbox.Status.TIMED_OUT:
        return Verdict.TIMED_OUT, f"compilation took longer than {timeout_s:g} s"
    if outcome.status is sandbox.Status.CRASHED:
        return Verdict.CRASHED, f"the compiler died ({outcome.died_of}), perhaps out of memory"
    if outcome.status is sandbox.Status.ERROR:
        log.error("Triton compile job failed: %s", outcome.error)
        return Verdict.INTERNAL_ERROR, "the compile job failed; this is not your fault"
    return None


def _failed(result: CompileResult, verdict: Verdict, message: str, shown: str = "") -> CompileResult:
    result.verdict, result.message, result.log = verdict, message, shown
    return result


def _cut(text: str) -> str:
    if len(text) > MAX_LOG_CHARS:
        return text[:MAX_LOG_CHARS].rsplit("\n", 1)[0] + f"\n[the log is cut at {MAX_LOG_CHARS // 1024} KB]\n"
    return text


def _first_line(text: str) -> str:
    """The message of a failed compile: ptxas' first error, else the last line (Triton's and Python's errors end
    with their message)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if re.search(r"; error\s+:", line)]
    return (errors[0] if errors else lines[-1] if lines else "compilation failed")[:500]


def _checked_ptx_answer(value: object, job: TritonJob) -> dict:
    """The PTX child's answer, every field of the expected type and size (it ran the reader's code)."""
    if not isinstance(value, dict) or type(value.get("ok")) is not bool or not isinstance(value.get("log"), str):
        raise ValueError("no ok/log")
    if not value["ok"]:
        return value
    kernels = value.get("kernels")
    if not isinstance(kernels, list) or len(kernels) != len(job.builds):
        raise ValueError("kernels: not one per build")
    for kernel in kernels:
        if not isinstance(kernel, dict) or not all(isinstance(kernel.get(k), str) for k in ("ptx", "metadata")):
            raise ValueError("a kernel without ptx and metadata")
        if len(kernel["ptx"]) > MAX_ANSWER_PTX_CHARS or len(kernel["metadata"]) > 1 << 20:
            raise ValueError("a kernel's PTX or metadata is too large")
    if not isinstance(value.get("triton_version"), str) or len(value["triton_version"]) > 64:
        raise ValueError("no triton_version")
    return value


def _checked_ptxas_answer(value: object, count: int) -> dict:
    if not isinstance(value, dict) or type(value.get("ok")) is not bool or not isinstance(value.get("log"), str):
        raise ValueError("no ok/log")
    if not value["ok"]:
        return value
    cubins, reports = value.get("cubins"), value.get("reports")
    if not isinstance(cubins, list) or len(cubins) != count or not all(isinstance(c, bytes) for c in cubins):
        raise ValueError("cubins: not one per kernel")
    if not isinstance(reports, list) or len(reports) != count or not all(isinstance(r, str) for r in reports):
        raise ValueError("reports: not one per kernel")
    if not isinstance(value.get("ptxas_version"), str):
        raise ValueError("no ptxas_version")
    return value


def _int_field(metadata: dict, key: str, low: int, high: int, default: int | None = None) -> int:
    value = metadata.get(key, default)
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"metadata {key} = {value!r} is outside {low}..{high}")
    return value


def _assembled(
    result: CompileResult,
    job: TritonJob,
    builds: dict[tuple, list[int]],
    lowered: list[dict],
    cubins: dict,
    problem: problems.Problem,
) -> CompileResult:
    max_shared = plan_mod.MAX_SHARED_BYTES_BY_ARCH.get(result.arch, plan_mod.DEFAULT_SHARED_BYTES)
    kernels, resources = [], []
    for build, launches, kernel, cubin, report in zip(
        job.builds, builds.values(), lowered, cubins["cubins"], cubins["reports"], strict=True
    ):
        try:
            metadata = json.loads(kernel["metadata"])
            entry = _ENTRY.search(kernel["ptx"])
            if not isinstance(metadata, dict) or entry is None:
                raise ValueError("no metadata or no entry function")
            symbol = metadata.get("name")
            if not isinstance(symbol, str) or not _SYMBOL.match(symbol) or symbol != entry.group(1):
                raise ValueError(f"metadata name {symbol!r} is not the PTX's entry {entry.group(1)!r}")
            if _int_field(metadata, "num_warps", 1, 32) != build.num_warps:
                raise ValueError("num_warps differs from the plan's")
            params = [line for line in entry.group(2).split(",") if ".param" in line]
            if len(params) != len(problem.args) + len(_SCRATCH_PARAMS):
                raise ValueError(f"the entry has {len(params)} parameters; expected the problem's and Triton's two")
            shared = _int_field(metadata, "shared", 0, 1 << 30)
            triton_kernel = TritonKernel(
                kernel=build.kernel,
                symbol=symbol,
                cubin=cubin,
                num_warps=build.num_warps,
                num_stages=build.num_stages,
                shared_bytes=shared,
                params=[
                    *(
                        {"name": a.name, "type": t, **({"assumed_alignment": 16} if aligned else {})}
                        for a, t, aligned in zip(problem.args, job.arg_types, job.aligned, strict=True)
                    ),
                    *({"name": name, "type": "scratch"} for name in _SCRATCH_PARAMS),
                ],
                constexprs=dict(build.constexprs),
                launches=launches,
                global_scratch_bytes=_int_field(metadata, "global_scratch_size", 0, 1 << 30, 0),
                global_scratch_align=_int_field(metadata, "global_scratch_align", 1, 1 << 12, 1),
                profile_scratch_bytes=_int_field(metadata, "profile_scratch_size", 0, 1 << 30, 0),
                profile_scratch_align=_int_field(metadata, "profile_scratch_align", 1, 1 << 12, 1),
                num_ctas=_int_field(metadata, "num_ctas", 1, 16, 1),
                ptx=kept_ptx(kernel["ptx"]),
            )
        except (ValueError, TypeError) as exc:
            log.error("Triton's PTX job answered out of form: %s", exc)
            return _failed(result, Verdict.INTERNAL_ERROR, "the compile job failed; this is not your fault")
        if shared > max_shared:
            return _failed(
                result,
                Verdict.PLAN_ERROR,
                f"{build.kernel} needs {shared:,} bytes of shared memory (num_stages = {build.num_stages}); "
                f"{result.arch} allows {max_shared:,}: fewer stages or smaller blocks",
            )
        found = parse_ptxas_info(report).get(symbol, KernelResources(build.kernel, symbol))
        found.name = build.kernel
        found.num_warps, found.dynamic_shared_bytes = build.num_warps, shared
        kernels.append(triton_kernel)
        resources.append(found)
    result.triton_kernels, result.kernels = kernels, resources
    result.log = _cut("".join(cubins["reports"]))
    result.message = (
        f"compiled {len(kernels)} Triton kernel{'s' if len(kernels) > 1 else ''} for {result.arch} "
        f"in {result.compile_time_ms:.0f} ms"
    )
    return result


# ---- the children -----------------------------------------------------------------------------------------------


class _PtxReady(Exception):  # noqa: N818 (not an error: how the PTX leaves triton.compile before its ptxas stage)
    def __init__(self, ptx: str, metadata: dict):
        super().__init__("PTX ready")
        self.ptx, self.metadata = ptx, metadata


def ptx_job(job: TritonJob) -> dict:
    """PTX child: run the reader's file, lower each build to PTX. Answers plain data (a dict of str, bool, list)."""
    import builtins
    import linecache

    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, stated (it warns otherwise)
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import ptx_get_version
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    # No ptxas here: the PTX version comes from the release the parent found, and Triton's cache key takes the
    # release as the "version" it would have asked ptxas for.
    ptx_version = ptx_get_version(job.ptxas_release)
    knobs.nvidia.mock_ptx_version = f"ptxas release {job.ptxas_release}"
    # Triton's key of its own build hashes its 500 MB library (0.4 s) to name cache entries; this child's cache is
    # fresh and dies with it, so the version names them (Triton's compile-warmup pools replace it the same way).
    triton.runtime.cache.triton_key = lambda: f"kernels-judge-triton-{triton.__version__}"

    def stop_before_ptxas(*args):
        if not args:  # triton.compile asks the hook for its part of the cache key
            return "kernels-ptx-only", "kernels-ptx-only"
        _backend, stages, _options, _language, _capability = args

        def ready(ptx, metadata):
            raise _PtxReady(ptx, metadata)

        stages["cubin"] = ready

    filename = triton_source_mod.FILENAME
    # triton.jit reads each function's text with inspect.getsource, which asks linecache for the file.
    linecache.cache[filename] = (len(job.source), None, job.source.splitlines(True), filename)
    namespace = {"__name__": "submission", "__builtins__": builtins}
    try:
        exec(compile(job.source, filename, "exec"), namespace)  # checked by the parent, and confined here
    except BaseException as exc:  # noqa: BLE001 (the reader's code: whatever it raises is their error)
        return {"ok": False, "log": _reader_traceback(exc)}
    target = GPUTarget("cuda", job.capability, 32)
    kernels = []
    for build in job.builds:
        fn = namespace.get(build.kernel)
        if not isinstance(fn, JITFunction):
            return {"ok": False, "log": f"{build.kernel} is not a @triton.jit function\n"}
        try:
            signature, constexprs = _signature(fn, job.arg_types, dict(build.constexprs))
            aligned = iter(job.aligned)
            attrs = {
                (index,): [["tt.divisibility", triton_source_mod.ASSUMED_ALIGNMENT]]
                for index, param in enumerate(fn.params)
                if not param.is_constexpr and next(aligned, False)
            }
            options = {"num_warps": build.num_warps, "num_stages": build.num_stages, "ptx_version": ptx_version}
            knobs.runtime.add_stages_inspection_hook = stop_before_ptxas
            source = ASTSource(fn, signature, constexprs=constexprs, attrs=attrs)
            triton.compile(source, target=target, options=options)
            return {"ok": False, "log": "Triton compiled past its PTX stage; the judge cannot read this kernel\n"}
        except _PtxReady as done:
            metadata = json.dumps(done.metadata, default=vars)
            kernels.append({"ptx": str(done.ptx), "metadata": metadata})
        except BaseException as exc:  # noqa: BLE001
            return {"ok": False, "log": _file_line(exc, namespace) + _reader_traceback(exc)}
    return {"ok": True, "log": "", "kernels": kernels, "triton_version": str(triton.__version__)}


def _signature(fn, arg_types: tuple[str, ...], given: dict) -> tuple[dict, dict]:
    """Triton's signature of `fn` for the problem's arguments: its parameters that are not constexpr take the
    problem's types in order; constexpr ones take the plan's values, else their defaults."""
    signature, constexprs = {}, {}
    types = list(arg_types)
    for param in fn.params:
        if param.is_constexpr:
            signature[param.name] = "constexpr"
            if param.name in given:
                constexprs[param.name] = given.pop(param.name)
            elif param.has_default:
                constexprs[param.name] = param.default
            else:
                raise ValueError(f"{fn.__name__}: constexpr {param.name} has no value in the plan and no default")
        elif types:
            signature[param.name] = types.pop(0)
        else:
            raise ValueError(f"{fn.__name__} takes more arguments than the problem passes ({len(arg_types)})")
    if types or given:
        raise ValueError(f"{fn.__name__}'s parameters do not match the problem's arguments and the plan's constexprs")
    return signature, constexprs


def _file_line(exc: BaseException, namespace: dict) -> str:
    """Triton's compilation errors count lines from the function's `def` ("at 2:14:"): the file's line besides."""
    try:
        node, src = exc.node, exc.src
        for fn in namespace.values():
            if getattr(fn, "_src", None) == src and src is not None:
                return f"{triton_source_mod.FILENAME}, line {fn.def_file_line_number + node.lineno - 1}:\n"
    except Exception:  # noqa: BLE001 (an error of another kind, or another Triton: no line to add)
        pass
    return ""


def _reader_traceback(exc: BaseException) -> str:
    """What the reader is shown of an error: the frames in their file, and the message (Triton's compilation
    errors quote the line)."""
    try:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == triton_source_mod.FILENAME]
        lines = traceback.format_list(frames)
        lines += traceback.format_exception_only(type(exc), exc)
        return _cut("".join(lines).replace(os.environ.get("HOME") or "\x00", "$HOME"))
    except BaseException:  # noqa: BLE001 (an exception whose text itself fails)
        return f"{type(exc).__name__}\n"


def ptxas_job(job: PtxasJob) -> dict:
    """ptxas child: Triton's own make_cubin on each PTX (its ptxas flags), with ptxas -v's report kept. Answers
    plain data."""
    import contextlib
    import io
    import tempfile

    os.environ["TRITON_PTXAS_PATH"] = os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = job.ptxas
    os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"  # make_cubin prints ptxas' report (registers, spills) on success
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    tie_processes_to_this_one()
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend, get_ptxas

    backend = CUDABackend(GPUTarget("cuda", job.capability, 32))
    scratch = tempfile.gettempdir()
    cubins, reports = [], []
    for ptx, metadata_json in job.items:
        metadata = json.loads(metadata_json)
        keys = ("num_warps", "num_stages", "num_ctas", "ptx_version", "enable_fp_fusion", "maxnreg")
        options = backend.parse_options({k: metadata[k] for k in keys if k in metadata})
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                cubins.append(bytes(backend.make_cubin(ptx, metadata, options, job.capability)))
        except Exception as exc:  # noqa: BLE001 (PTXASError and the like: the reader's PTX, inline asm included)
            return {"ok": False, "log": _ptxas_text(str(exc), scratch)}
        reports.append(_ptxas_text(printed.getvalue(), scratch))
    version = get_ptxas(job.capability).version
    return {"ok": True, "log": "", "cubins": cubins, "reports": reports, "ptxas_version": str(version)}


def tie_processes_to_this_one() -> None:
    """Every subprocess.run of this child (Triton's ptxas runs) starts its process with `confine.die_with_parent`."""
    if getattr(subprocess.run, "tied", False):
        return
    plain_run = subprocess.run

    def run(*args, **kwargs):
        kwargs.setdefault("preexec_fn", confine.die_with_parent)
        return plain_run(*args, **kwargs)

    run.tied = True
    subprocess.run = run


def _ptxas_text(text: str, scratch: str) -> str:
    """ptxas' words without the child's temporary paths; the repro command line dropped."""
    text = re.sub(re.escape(scratch.rstrip("/")) + r"/tmp\w+\.ptx(\.o)?", "kernel.ptx", text)
    return "".join(line for line in text.splitlines(True) if not line.startswith("Repro command"))


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use kernels.compiler.compile_submission(..., language='triton')")

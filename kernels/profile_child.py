"""The profile child (issue 43): Nsight Compute's `ncu` running the profile target, inside the sandbox.

A profile runs after the judged job, never inside it, in a child of its own (`sandbox.run_once`), started by the GPU
worker while it holds the device lock alone. The child is confined like every child that touches reader input
(kernels/confine.py), with what ncu needs on top, and nothing more:

- **executing** ncu's own files (its install folder), the interpreter that runs the target, and the ELF
  interpreter that loads them: `Access.execute`, so seccomp lets it fork and execve and Landlock gives EXECUTE to
  those alone. The target (`python -I -m kernels.profile_target`) inherits the whole confinement: the same files,
  the same refused calls, no capabilities;
- **local sockets**: ncu and the library it injects into the target talk over a Unix socket and over TCP
  (`Access.cuda_driver` already lets a GPU child create, bind and listen on a Unix one; a profile adds connecting on
  it, and TCP stream sockets that Landlock's network rules hold to ncu's own port range, `profile.NCU_PORTS`: on the
  H100 a sandboxed target without them could not make its CUDA context);
- the child's scratch folder holds the job file, the report and ncu's own temporary files (TMPDIR).

A kernel that hangs or crashes under replay ends this child only: ncu runs with a time limit and dies with this
child, the target dies with ncu, and the judgement is recorded already.

The child answers plain data (`sandbox.Worker(plain_answers=True)`): ncu's exit status and last output, the
report's bytes and its two exports as CSV text. The parent reads them (kernels/profile_report.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from kernels import confine
from kernels import profile as profile_mod

REPORT_NAME = "profile.ncu-rep"
# ncu's output kept in the answer (its own lines and the target's), from the end.
OUTPUT_TAIL_CHARS = 8 * 1024
# A report larger than this is not kept (a source-counter report of one kernel is well under it).
MAX_REPORT_BYTES = 64 << 20
MAX_EXPORT_CHARS = 16 << 20


@dataclass(frozen=True)
class ProfileJob:
    """What the child profiles: a compiled submission (CompileResult.to_dict()), the shape and seed of its one
    run, and the ncu command's parts the parent chose (executable, kernels, metrics, time limit)."""

    compiled: dict
    sizes: dict[str, int]
    seed: int
    ncu: str
    kernel_regex: str
    launch_count: int
    metrics: tuple[str, ...]
    timeout_s: float


# NVIDIA's launcher scripts (an install's `ncu` is one: it picks the host binary for the machine) call system tools
# (dirname, readlink, uname, ...): the profile child may execute the system's binary folders. It runs no reader code
# on the CPU (the target loads cubins, and the reader's Triton was run on the compile node), and whatever it
# executes keeps its confinement: the same files, no network, no capabilities.
SYSTEM_BINARIES = ("/usr/bin", "/bin")


def ncu_files(ncu: str) -> tuple[str, ...]:
    """What executing `ncu` needs: its install folder (kernels.profile.find_ncu resolves the toolkit's launcher to
    the install's own ncu) and the system's binary folders, as real paths."""
    return (os.path.dirname(os.path.realpath(ncu)), *(os.path.realpath(p) for p in SYSTEM_BINARIES if os.path.isdir(p)))


def profile_access(ncu: str, code: tuple[str, ...]) -> confine.Access:
    """The profile child's rights: a GPU child's (its code, CUDA's files and device nodes, CuPy's kernel cache, where
    the target's library kernels are compiled once for every child of the worker), ncu's folder to read and execute,
    the interpreter and ELF loader to execute (the target is a new interpreter), Unix sockets to connect."""
    from kernels.judge import gpu_access
    from kernels.triton_compiler import elf_interpreter

    executable = os.path.realpath(sys.executable)
    loader = elf_interpreter(executable)
    files = ncu_files(ncu)
    execute = (*files, executable, *([os.path.realpath(loader)] if loader else []))
    # No lock files: the worker holds the device alone while a profile runs.
    access = gpu_access(("kernels.profile_target", *code), device_lock=None).plus(read=files, execute=execute)
    return access.with_local_sockets(tcp_ports=profile_mod.NCU_PORTS).for_descendants()


def profile_job(job: ProfileJob) -> dict:
    """Child side: run ncu on the profile target, then export the report's raw metrics and its source view."""
    scratch = tempfile.gettempdir()
    target_job = os.path.join(scratch, "target.json")
    # The target narrows /proc to its own entry (confine.Access.descendants_proc) with this child's own Access.
    confined = confine.confined_with()
    narrowing = confined is not None and confined.descendants_proc
    layer = confined.to_dict() if narrowing else None
    with open(target_job, "w") as file:
        json.dump({"compiled": job.compiled, "sizes": job.sizes, "seed": job.seed, "layer": layer}, file)
    report = os.path.join(scratch, REPORT_NAME)
    program = [
        sys.executable,
        "-I",
        "-S",
        "-c",
        _TARGET_BOOT,
        json.dumps([p for p in sys.path if p]),
        confine.package_dir("kernels"),
        target_job,
    ]
    command = profile_mod.ncu_command(
        job.ncu,
        report=report,
        kernel_regex=job.kernel_regex,
        launch_count=job.launch_count,
        metrics=list(job.metrics),
        program=program,
    )
    ran = _run(command, job.timeout_s)
    if narrowing:
        confine.narrow_to_own_proc(confined)  # the target has ended: the report is read with this child's entry only
    answer = {"ok": False, "returncode": ran.returncode, "output": ran.output[-OUTPUT_TAIL_CHARS:], "version": ""}
    if ran.timed_out:
        answer["output"] += f"\n[ncu ran past its {job.timeout_s:g} s and was stopped]"
        return answer
    if ran.returncode != 0 or not os.path.exists(report):
        return answer
    if os.path.getsize(report) > MAX_REPORT_BYTES:
        answer["output"] += f"\n[the report is over {MAX_REPORT_BYTES >> 20} MB and was not kept]"
        return answer
    raw = _run([job.ncu, "--import", report, "--csv", "--page", "raw"], job.timeout_s)
    source = _run(
        [job.ncu, "--import", report, "--csv", "--page", "source", "--print-source", "sass,cuda"], job.timeout_s
    )
    version = _run([job.ncu, "--version"], 30)
    with open(report, "rb") as file:
        answer.update(
            ok=raw.returncode == 0,
            report=file.read(),
            raw_csv=raw.output[:MAX_EXPORT_CHARS],
            source_csv=source.output[:MAX_EXPORT_CHARS] if source.returncode == 0 else "",
            source_error="" if source.returncode == 0 else source.output[-OUTPUT_TAIL_CHARS:],
            version=version.output.strip().splitlines()[-1] if version.output.strip() else "",
        )
    return answer


# The target's interpreter, started inside the confinement: the child's import path (as the sandbox boots its
# children), dying with ncu if ncu ends first, then the target's main. `kernels` is loaded from its own folder by
# location: the folder above it (the project root, which may hold a .env) is not readable, so the path finder, which
# lists each sys.path entry, cannot find it there. -S: no site module (the system's sitecustomize is not readable
# either, and the path is given whole).
_TARGET_BOOT = (
    "import ctypes, importlib.util, json, signal, sys; ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0); "
    "sys.path[:] = json.loads(sys.argv[1]); folder = sys.argv[2]; "
    "spec = importlib.util.spec_from_file_location('kernels', folder + '/__init__.py', "
    "submodule_search_locations=[folder]); package = importlib.util.module_from_spec(spec); "
    "sys.modules['kernels'] = package; spec.loader.exec_module(package); "
    "from kernels.profile_target import main; sys.exit(main(sys.argv[3:]))"
)


@dataclass(frozen=True)
class _Ran:
    returncode: int
    output: str
    timed_out: bool = False


def _run(command: list[str], timeout_s: float) -> _Ran:
    """One command, stdout and stderr together, past `timeout_s` killed. It dies with this child (a parent-death
    signal, as Triton's ptxas does: kernels/triton_compiler.py), and the target dies with ncu (`_TARGET_BOOT`): the
    worker ending this child at its own limit ends the whole chain."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        preexec_fn=confine.die_with_parent,  # one prctl call: no lock, no thread
    )
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        return _Ran(-9, output.decode("utf-8", errors="replace"), timed_out=True)
    return _Ran(process.returncode, output.decode("utf-8", errors="replace"))

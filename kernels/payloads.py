"""What travels over a child's pipe (kernels/sandbox.py), both ways: frozen dataclasses of builtins, pickled.

No CuPy here: the parent builds the requests, a child reads them.

    SetupRequest  parent -> child's setup (kernels/ceilings.py `payload_for`, kernels/gpu.py `warm_up`)
    SetupAnswer   child's setup -> parent (`GpuJudge.kept`, handed on in the next SetupRequest)
    GpuJob        parent -> GPU job (kernels/judge.py `GpuJudge.judge`, kernels/runner.py `judge_job`); a Triton
                  submission's builds ride along as TritonCubin (kernels/triton_launch.py)
    CompileJob    parent -> compile job (kernels/compiler.py `compile_submission`, `compile_job`)
    NvrtcOutput   compile job -> parent
    TritonJob     parent -> Triton's PTX job (kernels/triton_compiler.py; its answer is plain data, never pickled
                  objects: that child runs the reader's Python)
    PtxasJob      parent -> Triton's ptxas job (plain data back too)
    SassJob       parent -> the disassembly job (kernels/disasm.py; plain data back: it reads reader-built cubins)

A job's own answer is a result type of kernels/results.py (`JudgeResult`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SetupRequest:
    """What a child's setup is handed: the ceilings the worker keeps while they are fresh, the device identity they
    were measured on, the baselines chosen on it (kernels/baselines.py), the problems whose first use the child
    rehearses (None: all of them) and the worker's lock file (kernels/devicelock.py; None: no lock)."""

    ceilings: dict[str, Any] | None = None  # Ceilings.to_dict(), with measured_at; None: the child measures
    identity: dict[str, Any] | None = None
    baselines: dict[str, dict] | None = None  # Chosen.to_dict()
    rehearse: tuple[str, ...] | None = None
    device_lock: str | None = None


@dataclass(frozen=True)
class SetupAnswer:
    """What a child's setup answers, kept by the parent: the identity of the device it found, the ceilings it used
    (handed on, or measured now, and then why), the baselines it knows and where its time went."""

    identity: dict[str, Any]
    ceilings: dict[str, Any]
    measured: bool
    why_measured: str = ""  # empty unless measured
    baselines: dict[str, dict] | None = None
    setup_ms: dict[str, float] = field(default_factory=dict)  # per step, waits for timed rounds included
    skipped: tuple[str, ...] = ()  # optional steps that failed and were left out (a baseline's warm-up): why


@dataclass(frozen=True)
class JobOptions:
    """How a GPU job checks and times (`JudgeOptions` less what only the parent uses)."""

    seed: int
    bench: bool = True
    time_budget_s: float = 4.0  # per benchmark shape, for the timed rounds
    min_rounds: int = 10
    max_rounds: int = 100
    target_rel_std_err: float = 0.005


@dataclass(frozen=True)
class GpuJob:
    """A compiled submission to judge on the GPU: its cubin, the lowered name of each planned kernel, the launch
    plan (Launch.to_dict() each), the compiler's resource report (KernelResources.to_dict() each), and how."""

    problem: str
    arch: str
    cubin: bytes
    lowered_names: dict[str, str]
    plan: list[dict[str, Any]]
    kernels: list[dict[str, Any]]
    options: JobOptions
    # Issue 46: "triton" jobs have no `cubin` and no `lowered_names`: each build is a TritonCubin, named as the
    # plan's launches name it (kernels/triton_launch.py `gpu_plan`).
    language: str = "cuda"
    triton: tuple[TritonCubin, ...] = ()


@dataclass(frozen=True)
class TritonCubin:
    """One Triton build for the GPU job (a CompileResult's TritonKernel, less what only the result page shows):
    its cubin and entry, Triton's launch convention (32 x num_warps threads, `shared_bytes` of dynamic shared
    memory, `num_ctas`) and its parameters in order, (name, Triton type): the problem's arguments then Triton's
    two scratch pointers (type "scratch"), with the bytes per program each needs and their alignment."""

    name: str  # the build's name in the job's plan and resource report (the kernel's, or "kernel (build 2)")
    kernel: str  # the @triton.jit function
    symbol: str
    cubin: bytes
    num_warps: int
    shared_bytes: int
    params: tuple[tuple[str, str], ...]
    constexprs: tuple[tuple[str, Any], ...] = ()
    global_scratch_bytes: int = 0
    global_scratch_align: int = 1
    profile_scratch_bytes: int = 0
    profile_scratch_align: int = 1
    num_ctas: int = 1


@dataclass(frozen=True)
class CompileJob:
    """A screened source to compile with NVRTC, the kernels whose lowered names are wanted, the target."""

    source: str
    names: tuple[str, ...]
    arch: str
    include_dirs: tuple[str, ...]  # the CUDA header folders, found once by the parent: the child may read only these


@dataclass(frozen=True)
class NvrtcOutput:
    """NVRTC's answer: whether it compiled, its log (ptxas' report included), the cubin, the lowered names."""

    ok: bool
    log: str
    cubin: bytes
    lowered_names: dict[str, str]
    nvrtc_version: str
    ptx: str = ""  # the PTX NVRTC made on the way to the cubin (kept for the report, bounded by the parent)


@dataclass(frozen=True)
class TritonBuild:
    """One Triton kernel to build: the @triton.jit function, its launch options and constexpr values."""

    kernel: str
    num_warps: int
    num_stages: int
    constexprs: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class TritonJob:
    """A Triton submission to lower to PTX (issue 46): the source, the target's compute capability, the problem's
    arguments as Triton types, the builds, and the release of the ptxas that will assemble the PTX (it fixes the
    PTX version: this child never runs ptxas)."""

    source: str
    capability: int
    arg_types: tuple[str, ...]
    builds: tuple[TritonBuild, ...]
    ptxas_release: str
    # Per argument: whether the problem promises its address a multiple of 16 bytes, which Triton may then assume
    # (tt.divisibility, as its JIT does for such pointers); never where the contract promises less.
    aligned: tuple[bool, ...] = ()


@dataclass(frozen=True)
class PtxasJob:
    """PTX to assemble with Triton's ptxas, in a child that runs no reader Python: each item is (PTX, metadata as
    JSON), as the PTX job returned them."""

    capability: int
    ptxas: str
    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class SassJob:
    """Cubins to disassemble with `cuobjdump -sass` (issue 46): each item is (name, cubin); at most `max_bytes` of
    each listing is read back."""

    cuobjdump: str
    cubins: tuple[tuple[str, bytes], ...]
    max_bytes: int

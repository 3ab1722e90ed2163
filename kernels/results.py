"""The judge's result schema: typed dataclasses with a versioned JSON form.

Every result the web app stores is one of these. `to_json()` / `from_json()` round-trip exactly;
`SCHEMA_VERSION` changes whenever a field is renamed or its meaning changes (adding an optional
field with a default does not).
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1


class Verdict(str, enum.Enum):
    """What happened to a submission; the first failing stage decides."""

    ACCEPTED = "accepted"  # correct at every test shape and timed (bench)
    COMPILED = "compiled"  # source, plan and compilation are fine (check only; no GPU run yet)
    SOURCE_REJECTED = "source_rejected"  # forbidden #include, source too large, ...
    COMPILE_ERROR = "compile_error"
    PLAN_ERROR = "plan_error"  # launch plan malformed or over the hardware's limits
    WRONG_ANSWER = "wrong_answer"
    RUNTIME_ERROR = "runtime_error"  # CUDA error: illegal address, trap, launch failure, ...
    TIMED_OUT = "timed_out"
    CRASHED = "crashed"  # the child process died without answering (signal, abort)
    OUTPUT_LIMIT = "output_limit_exceeded"  # printf flood
    INTERNAL_ERROR = "internal_error"  # a fault of the judge itself, not of the submission


class _Schema:
    """JSON (de)serialisation for the dataclasses below, driven by their type hints."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _dump(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps({"schema_version": SCHEMA_VERSION, **self.to_dict()}, indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        hints = typing.get_type_hints(cls)
        kwargs = {f.name: _load(hints[f.name], data[f.name]) for f in dataclasses.fields(cls) if f.name in data}
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str):
        data = json.loads(text)
        version = data.pop("schema_version", None)
        if version != SCHEMA_VERSION:
            raise ValueError(f"schema_version {version!r} is not {SCHEMA_VERSION}")
        return cls.from_dict(data)


def _dump(value: Any) -> Any:
    if isinstance(value, _Schema):
        return value.to_dict()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (list, tuple)):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _dump(v) for k, v in value.items()}
    return value


def _load(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _load(inner[0], value)
    if origin is list:
        (item,) = typing.get_args(hint)
        return [_load(item, v) for v in value]
    if origin is tuple:
        item = typing.get_args(hint)[0]
        return tuple(_load(item, v) for v in value)
    if origin is dict:
        _, item = typing.get_args(hint)
        return {k: _load(item, v) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, _Schema):
        return hint.from_dict(value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)
    if hint is bytes:
        return base64.b64decode(value)
    if hint is float and isinstance(value, int):
        return float(value)
    return value


@dataclass
class KernelResources(_Schema):
    """Per-kernel resources: from ptxas (-v) at compile time, and from the loaded function on the GPU."""

    name: str  # as written in the plan, e.g. "sgemm_tiled<64, 64>"
    lowered_name: str  # the mangled symbol in the cubin
    registers: int | None = None  # per thread
    static_shared_bytes: int | None = None
    local_bytes: int | None = None  # per thread; > 0 means a stack frame or spills
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    const_bytes: int | None = None
    max_threads_per_block: int | None = None  # what the loaded function allows given its registers
    # Triton builds (issue 46): the warps per program (the block is 32 x num_warps threads) and the dynamic shared
    # memory each launch asks for (Triton's kernels have no static shared memory); None for CUDA kernels.
    num_warps: int | None = None
    dynamic_shared_bytes: int | None = None


@dataclass
class ResolvedLaunch(_Schema):
    """One launch of the plan with its expressions evaluated at one shape."""

    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_bytes: int
    cluster: tuple[int, ...] | None = None  # thread-block cluster (x, y, z); None: an ordinary launch
    non_portable_cluster: bool = False  # clusters of 9 to 16 blocks (the function attribute is set)
    tensor_maps: list[ResolvedTensorMap] = field(default_factory=list)  # appended to the arguments, in order

    @property
    def needs_driver(self) -> bool:
        """Clusters and tensor maps go through cuLaunchKernelEx (kernels/hopper.py), not CuPy's launch."""
        return self.cluster is not None or bool(self.tensor_maps)


@dataclass
class ResolvedTensorMap(_Schema):
    """A TMA descriptor of the plan at one shape: the whole array it names, as cuTensorMapEncodeTiled takes it.
    Dimensions and box run innermost first (a row-major rows x cols matrix is (cols, rows))."""

    name: str
    array: str
    dtype: str  # the element type (float32, float16, bfloat16, float8_e4m3, int32)
    dims: tuple[int, ...]  # elements along each dimension
    strides_bytes: tuple[int, ...]  # bytes between consecutive indices of dimensions 1.. (rank - 1 values)
    box: tuple[int, ...]
    swizzle: str = "none"
    l2_promotion: str = "none"
    oob_fill: str = "zero"


@dataclass
class TritonKernel(_Schema):
    """One compiled Triton kernel (issue 46): one per distinct build of the plan's launches (kernel, num_warps,
    num_stages, constexprs), each its own cubin. `params` is the cubin's parameter list in order, each
    {"name", "type"}: the problem's arguments as Triton types ("*fp32", "i32", ...), with "assumed_alignment": 16 on
    the pointers the problem promises 16-byte aligned (Triton was told so), then the pointers Triton adds (type
    "scratch": its global scratch, then its profile scratch), which the GPU stage passes as well."""

    kernel: str  # the @triton.jit function's name, as the plan names it
    symbol: str  # the entry function's name in the cubin
    cubin: bytes
    num_warps: int
    num_stages: int
    shared_bytes: int  # dynamic shared memory the launch needs (Triton's metadata "shared")
    params: list[dict[str, Any]] = field(default_factory=list)
    constexprs: dict[str, Any] = field(default_factory=dict)
    launches: list[int] = field(default_factory=list)  # the plan's launches (0-based) that run this build
    global_scratch_bytes: int = 0
    global_scratch_align: int = 1
    profile_scratch_bytes: int = 0
    profile_scratch_align: int = 1
    num_ctas: int = 1
    # The PTX Triton generated for this build, kept for the report's "PTX / SASS" section (issue 46): at most
    # kernels.compiler.MAX_KEPT_PTX_CHARS, cut at a line with a note beyond; "" in results compiled before it was kept.
    ptx: str = ""


@dataclass
class CompileResult(_Schema):
    verdict: Verdict  # COMPILED, or SOURCE_REJECTED / PLAN_ERROR / COMPILE_ERROR / TIMED_OUT / CRASHED
    message: str
    problem: str
    arch: str
    log: str = ""  # NVRTC's log; line numbers refer to the submitted file
    cubin: bytes = b""
    lowered_names: dict[str, str] = field(default_factory=dict)  # plan kernel name -> symbol
    kernels: list[KernelResources] = field(default_factory=list)
    plan: list[dict[str, Any]] = field(default_factory=list)  # the launch plan as parsed (expressions kept)
    source_sha256: str = ""
    nvrtc_version: str = ""
    compile_time_ms: float = 0.0
    # Issue 46: "cuda" (one cubin, `cubin`) or "triton" (a cubin per build, `triton_kernels`; `cubin` empty).
    language: str = "cuda"
    triton_kernels: list[TritonKernel] = field(default_factory=list)
    triton_version: str = ""
    ptxas_version: str = ""  # the ptxas that built Triton's cubins
    # CUDA's PTX, as NVRTC generated it on the way to the cubin (one text for the whole file; Triton's is per build,
    # in `triton_kernels`), bounded as Triton's is; "" in results compiled before it was kept.
    ptx: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.COMPILED


@dataclass
class ShapeCheck(_Schema):
    """Correctness at one shape: every element of every output compared with the reference. Exact outputs
    (integers, FP8 codes, floats the problem lists) have tolerance 0 and count the elements that differ in
    bad_count; nonfinite_count then counts elements still holding the poison."""

    sizes: dict[str, int]
    passed: bool
    rel_err: float | None  # ||out - ref|| / ||ref||, Frobenius (for exact outputs: of the decoded values)
    tolerance: float
    max_abs_err: float | None = None
    nonfinite_count: int = 0  # NaN (poison left unwritten) or Inf
    bad_count: int = 0  # elements off by more than `element_tolerance_factor` x tolerance x rms(ref)
    first_bad_index: list[int] | None = None  # multi-index into the output, e.g. [row, col]
    first_bad_value: float | None = None
    first_bad_expected: float | None = None
    message: str = ""
    output: str = ""  # the output these figures describe (the first failing one, else the nearest its tolerance)


@dataclass
class TimingStats(_Schema):
    samples: int
    median_ms: float
    q25_ms: float
    q75_ms: float
    min_ms: float
    mean_ms: float
    rel_std_err: float  # standard error of the mean / mean
    # Standard error of the median / median, from the median absolute deviation (kernels/samples.py): what the
    # stopping rule and the noisy flag use. None in results from before it was recorded.
    median_rel_std_err: float | None = None

    @property
    def iqr_ms(self) -> float:
        return self.q75_ms - self.q25_ms


@dataclass
class BenchResult(_Schema):
    """Timing at one benchmark shape, candidate and baseline interleaved round by round."""

    sizes: dict[str, int]
    candidate: TimingStats
    baseline: TimingStats
    baseline_name: str
    pct_of_baseline: float  # 100 * baseline median / candidate median
    tflops: float  # problem FLOPs / candidate median
    gbps: float  # problem's minimum bytes moved / candidate median (GB = 1e9 bytes)
    baseline_tflops: float
    roofline_tflops: float  # min(compute ceiling, intensity x copy bandwidth)
    pct_of_roofline: float  # of roofline_tflops; memory-bound problems: 100 * gbps / roofline_gbps
    rounds_checked: int  # the candidate's timed outputs compared with the reference (all of them)
    max_rel_err: float  # worst rel_err over the timed outputs
    flops: int
    bytes_moved: int
    flags: list[str] = field(default_factory=list)  # plausibility flags for review
    unit: str = "TFLOP/s"  # the figure readers see first: tflops, or gbps for memory-bound problems
    baseline_gbps: float | None = None
    roofline_gbps: float | None = None  # memory-bound problems: the measured copy bandwidth
    # Each of the library's ways tried for the baseline at this shape and its median when the worker chose
    # (kernels/baselines.py); baseline_name is the fastest. Empty where the problem has one way.
    baseline_tried_ms: dict[str, float] = field(default_factory=dict)


@dataclass
class Ceilings(_Schema):
    """Ceilings measured on the GPU in use, once per GPU worker (kernels/ceilings.py) and handed to each job."""

    copy_gbps: float  # device-to-device copy, bytes read + written per second
    fp32_tflops: float | None = None  # FFMA loop kernel, all SMs
    tensor_fp16_tflops: float | None = None  # cuBLAS GemmEx FP16 in / FP32 accumulate at 8192^3
    tensor_bf16_tflops: float | None = None  # cuBLAS GemmEx BF16 in / FP32 accumulate at 8192^3
    method: str = ""
    measured_at: float | None = None  # Unix time of the measurement (by this job's process or an earlier one)


@dataclass
class Telemetry(_Schema):
    gpu_name: str = ""
    gpu_uuid: str = ""  # as nvidia-smi -L writes it (GPU-xxxxxxxx-...): which device of a multi-GPU node ran the job
    compute_capability: str = ""
    sm_count: int = 0
    l2_bytes: int = 0
    sm_clock_mhz: int | None = None  # read right after the timed rounds
    max_sm_clock_mhz: int | None = None
    temperature_c: int | None = None
    power_w: float | None = None
    driver_version: str = ""
    cuda_driver_version: int = 0
    cuda_runtime_version: int = 0
    cupy_version: str = ""
    numpy_version: str = ""
    nvrtc_version: str = ""


@dataclass
class JudgeResult(_Schema):
    verdict: Verdict
    message: str
    problem: str
    seed: int | None = None  # the run's input seed; hide it from readers on ranked runs
    checks: list[ShapeCheck] = field(default_factory=list)
    benchmarks: list[BenchResult] = field(default_factory=list)
    kernels: list[KernelResources] = field(default_factory=list)
    telemetry: Telemetry | None = None
    ceilings: Ceilings | None = None
    output: str = ""  # what the kernels printed (printf), truncated to the cap
    output_bytes: int = 0
    error: str = ""  # the CUDA error or traceback for RUNTIME_ERROR / CRASHED / INTERNAL_ERROR
    compile_time_ms: float = 0.0
    wall_time_ms: float = 0.0  # the GPU run, from sending the job to the answer
    setup_wait_ms: float = 0.0  # how long the job waited for setups in flight, its child's and spares' (0: none)
    # In the child: how long its timed rounds waited for spares' setup steps (kernels/devicelock.py), and the
    # time of each stage of the job (loading the module, the correctness checks, the timed rounds, reading the
    # telemetry).
    lock_wait_ms: float = 0.0
    stage_ms: dict[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.ACCEPTED

    @property
    def poisons_worker(self) -> bool:
        """After a CUDA error the context is unusable: the child that ran it must be replaced."""
        return self.verdict in (Verdict.RUNTIME_ERROR, Verdict.INTERNAL_ERROR)


@dataclass
class SassListing(_Schema):
    """cuobjdump -sass of one cubin (kernels/disasm.py): the whole listing, or what the tool said instead."""

    name: str  # what the cubin is: the CUDA file's ("submission.cu"), or the Triton build's ("vector_add")
    sass: str = ""
    truncated: bool = False  # the listing was longer than the job's limit: `sass` is its beginning, cut at a line
    error: str = ""  # cuobjdump's own words where it could not read the cubin (a corrupt one), else ""


@dataclass
class SassResult(_Schema):
    """The SASS of a compiled submission's cubins, one listing each, or why there is none (`message`, for readers:
    the tool is missing, it took too long, the node cannot confine it)."""

    ok: bool  # every cubin's SASS came back (a listing that carries cuobjdump's error instead makes it False)
    listings: list[SassListing] = field(default_factory=list)
    message: str = ""
    tool: str = ""  # "cuobjdump 13.1", the release that disassembled it
    wall_time_ms: float = 0.0

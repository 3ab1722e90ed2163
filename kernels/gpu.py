"""GPU-side state of a worker process: device facts, the cuBLAS handle, the L2 flush buffer, ceilings, telemetry.

Imported only inside a sandboxed child (it initialises CUDA). `warm_up` is the Worker's setup hook, so a
warm worker has CuPy imported, the CUDA context and cuBLAS handle made and the ceilings known (measured by
the worker's first child, handed to the later ones: kernels/ceilings.py) before the submission arrives.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import cupy as cp
import cupyx  # noqa: F401  (see below)
import numpy as np
from cupy.cuda import runtime
from cupy_backends.cuda.libs import cublas

from kernels import compiler
from kernels.baselines import Chosen
from kernels.ceilings import uuid_text
from kernels.devicelock import DeviceLock
from kernels.payloads import SetupAnswer, SetupRequest
from kernels.problems.dtypes import bf16_from_f32
from kernels.results import Ceilings, Telemetry

# cupyx is imported above, in a child's import phase, because CuPy imports it on first use of cupy.linalg (the
# comparison's norm): 0.35 s of module loading measured in a spare's setup on the H200 (bench/setup_cost.py), time
# that would otherwise be spent inside a setup step holding the device lock.

# cudaDeviceAttr values (driver_types.h).
_ATTR_MAX_SHARED_PER_BLOCK_OPTIN = 97
_ATTR_MULTIPROCESSOR_COUNT = 16
_ATTR_CC_MAJOR = 75
_ATTR_CC_MINOR = 76
_ATTR_MAX_CLOCK_KHZ = 13  # cudaDevAttrClockRate: the peak SM clock
_ATTR_PAGEABLE_MEMORY_ACCESS = 88  # cudaDevAttrPageableMemoryAccess: kernels may use any host pointer (HMM)
_LIMIT_PRINTF_FIFO_SIZE = 0x01  # cudaLimitPrintfFifoSize
# Device printf records go to a FIFO that the driver drains at each synchronisation; whatever overflows it
# is dropped on the device. 64 KB (the default is 1 MB) bounds what one launch can print, so the judge's
# output check after each launch stops a flood long before the worker's file-size cap is reached.
PRINTF_FIFO_BYTES = 64 * 1024
# Before a timed region the stream is kept busy this long, so that the host records `start` and issues the
# launch (tens of microseconds from Python) while the GPU is still busy: no idle gap between `start` and
# the kernel. Without it, a 0.2 ms cuBLAS HGEMM read up to 30% slow; 300 us covers the host comfortably.
HOLD_BEFORE_TIMING_NS = 300_000
_HOLD_SOURCE = r"""
extern "C" __global__ void hold_stream(unsigned long long duration_ns) {
    unsigned long long start, now;  // %globaltimer counts nanoseconds, whatever the SM clock does
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < duration_ns);
}
"""


@dataclass
class GpuContext:
    name: str
    cc_major: int
    cc_minor: int
    sm_count: int
    l2_bytes: int
    max_shared_optin_bytes: int
    pci_bus_id: str  # how nvidia-smi names this GPU whatever CUDA_VISIBLE_DEVICES says
    cublas_handle: int
    flush_buffer: cp.ndarray  # >= 2x L2, rewritten between timed launches so no input stays cached
    _ceilings: dict[str, float] = field(default_factory=dict)
    baselines: Chosen = field(default_factory=Chosen)  # the library way timed per benchmark shape

    @property
    def compute_capability(self) -> str:
        return f"{self.cc_major}.{self.cc_minor}"

    def flush_l2(self) -> None:
        runtime.memsetAsync(self.flush_buffer.data.ptr, 0, self.flush_buffer.nbytes, cp.cuda.get_current_stream().ptr)

    def hold_stream(self) -> None:
        """One thread waits HOLD_BEFORE_TIMING_NS on the stream (see there)."""
        _hold_kernel()((1,), (1,), (np.uint64(HOLD_BEFORE_TIMING_NS),))

    def time_ms(self, launch: Callable[[], object]) -> float:
        """One launch between CUDA events, L2 flushed first; the stream's earlier work finishes before `start`.
        The stream is then held busy, so the host's cost of issuing `start` and the launch stays outside the
        timed region (as for a kernel in a stream of back-to-back launches). No spare's setup runs on the GPU
        meanwhile (DEVICE_LOCK)."""
        with DEVICE_LOCK.timed():
            self.flush_l2()
            self.hold_stream()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            launch()
            end.record()
            end.synchronize()
            return cp.cuda.get_elapsed_time(start, end)

    def keep_ceilings(self, ceilings: dict) -> None:
        """Use ceilings measured by an earlier child on this same device (Ceilings.to_dict()) instead of
        measuring them; a tensor rate they lack is still measured on first use."""
        names = ("copy_gbps", "fp32_tflops", "tensor_fp16_tflops", "tensor_bf16_tflops", "measured_at")
        self._ceilings = {name: ceilings[name] for name in names if ceilings.get(name) is not None}

    def ceilings(self, tensor_fp16: bool = False, tensor_bf16: bool = False) -> Ceilings:
        """Measured once per worker (or kept from an earlier child): copy bandwidth and FP32 FMA rate always,
        the FP16 and BF16 tensor rates on demand."""
        if "copy_gbps" not in self._ceilings:
            self._ceilings["measured_at"] = time.time()
            self._ceilings["copy_gbps"] = measure_copy_gbps()
            self._ceilings["fp32_tflops"] = measure_fp32_tflops(self.sm_count, _arch_of(self))
        if tensor_fp16 and "tensor_fp16_tflops" not in self._ceilings:
            self._ceilings["tensor_fp16_tflops"] = measure_tensor_fp16_tflops(self.cublas_handle)
        if tensor_bf16 and "tensor_bf16_tflops" not in self._ceilings:
            self._ceilings["tensor_bf16_tflops"] = measure_tensor_bf16_tflops(self.cublas_handle)
        return Ceilings(
            copy_gbps=self._ceilings["copy_gbps"],
            fp32_tflops=self._ceilings["fp32_tflops"],
            tensor_fp16_tflops=self._ceilings.get("tensor_fp16_tflops"),
            tensor_bf16_tflops=self._ceilings.get("tensor_bf16_tflops"),
            method=CEILINGS_METHOD,
            measured_at=self._ceilings["measured_at"],
        )

    def ceilings_for(self, compute_unit: str) -> Ceilings:
        """The ceilings a problem of this compute unit needs (its tensor rate measured on first use)."""
        return self.ceilings(tensor_fp16=compute_unit == "tensor_fp16", tensor_bf16=compute_unit == "tensor_bf16")


CEILINGS_METHOD = (
    "copy: cudaMemcpy device-to-device of 1 GiB, bytes read + written, median of 10; "
    "fp32: FFMA chains (16 independent per thread, 8 blocks of 256 per SM), median of 5; "
    "tensor_fp16: cuBLAS GemmEx FP16 in, FP32 compute and out, 8192^3, median of 5; "
    "tensor_bf16: cuBLAS GemmEx BF16 in, FP32 compute and out, 8192^3, median of 5"
)

_CONTEXT: GpuContext | None = None
# The worker's lock between a job's timed rounds and its spares' setup steps (kernels/devicelock.py); a no-op until
# warm_up hands this process the worker's lock file.
DEVICE_LOCK = DeviceLock(synchronize=lambda: runtime.deviceSynchronize())


def context() -> GpuContext:
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = _make_context()
    return _CONTEXT


def warm_up(request: SetupRequest | None = None) -> SetupAnswer:
    """The GPU worker's setup hook (kernels/ceilings.py builds the request): everything a first job would
    otherwise pay for. The context, cuBLAS handle and flush buffer; the ceilings, kept from the request when
    they were measured on this device, else measured now; and a rehearsal of the problems named (all when
    None): CuPy's run-time compilation of the elementwise kernels that input generation and checking use,
    the baseline's library loaded. Returns what the parent keeps: this device's identity, its ceilings and
    baselines, and where the setup's time went."""
    from kernels import checks, problems
    from kernels.ceilings import setup_answer

    # Each GPU step holds the worker's lock shared, so it may run while another child's job checks, never while
    # that job's timed rounds run; the measurement holds it alone (kernels/devicelock.py). Making the context
    # launches no work on the device (driver calls, allocations, the cuBLAS handle) and runs unlocked: beside
    # timed launches it changed none of them measurably (bench/setup_cost.py, kernels/BENCHMARKS.md).
    request = request or SetupRequest()
    DEVICE_LOCK.use(request.device_lock)
    spent: dict[str, float] = {}
    waited_before = DEVICE_LOCK.waited_s

    @contextlib.contextmanager
    def step(name: str, locked: bool = True):
        began = time.perf_counter()
        with DEVICE_LOCK.setup_step() if locked else contextlib.nullcontext():
            yield
        spent[name] = spent.get(name, 0.0) + (time.perf_counter() - began) * 1e3

    with step("context", locked=False):
        ctx = context()

    identity = device_identity(ctx)
    if request.identity == identity:
        ctx.baselines.keep(request.baselines)

    def measure() -> dict:
        with DEVICE_LOCK.timed():
            ctx._ceilings.clear()
            measured = ctx.ceilings(tensor_fp16=True, tensor_bf16=True).to_dict()
            # The baselines not handed on are chosen here too, alone on the device: the fastest library way per
            # benchmark shape, kept by the parent so that every later child times the same call
            # (kernels/baselines.py). Never in a job's child, after untrusted code has run there.
            ctx.baselines.choose_all([problems.load(name) for name in problems.available()], ctx)
        return measured

    with step("ceilings and baselines", locked=False):  # measure() holds the lock alone where it measures
        answer = setup_answer(request, identity, measure)
    baselines = ctx.baselines.to_dict()
    if not answer.measured:
        ctx.keep_ceilings(answer.ceilings)
    skipped: list[str] = []
    for name in request.rehearse or problems.available():
        problem = problems.load(name)
        checks.rehearse(problem, ctx, step=lambda part, locked=True: step(f"rehearsal: {part}", locked=locked))
        if request.rehearse and problem.warm_baseline:  # named: the likeliest next job's problem (not a first start)
            warming = checks.warm_baseline(problem, ctx, step=lambda part, locked=True: step(part, locked=locked))
            skipped += [f"{name} baseline warm-up at {why}" for why in warming]
    # Where a setup's time goes (bench/pool_rate.py prints it), waits for timed rounds included.
    setup_ms = {**spent, "lock wait": (DEVICE_LOCK.waited_s - waited_before) * 1e3}
    return dataclasses.replace(answer, baselines=baselines, setup_ms=setup_ms, skipped=tuple(skipped))


def device_identity(ctx: GpuContext) -> dict:
    """What the ceilings depend on, read cheaply at setup: the GPU itself (UUID), the driver, and the
    settings an operator may change under a running worker (application clocks, power limit, through NVML
    where it is present). Locked clocks (nvidia-smi -lgc) are not visible here: the age limit catches them."""
    props = runtime.getDeviceProperties(runtime.getDevice())
    uuid = props.get("uuid", b"")
    identity = {
        "name": ctx.name,
        "uuid": uuid.hex() if isinstance(uuid, bytes) else str(uuid),
        "pci_bus_id": ctx.pci_bus_id,
        "cuda_driver_version": runtime.driverGetVersion(),
        "max_sm_clock_mhz": runtime.deviceGetAttribute(_ATTR_MAX_CLOCK_KHZ, runtime.getDevice()) // 1000,
        # With HMM (open kernel modules on a recent kernel), a kernel may dereference any address of its process's
        # pageable memory: a reader's kernel could reach its job child's own heap. The judge warns (judge.py).
        "pageable_memory_access": _pageable_memory_access(),
    }
    identity.update(_nvml_identity(ctx.pci_bus_id))
    return identity


def _pageable_memory_access() -> bool | None:
    """The device's cudaDevAttrPageableMemoryAccess; None where the driver does not answer (a diagnostic: it must
    never stop a setup)."""
    try:
        return bool(runtime.deviceGetAttribute(_ATTR_PAGEABLE_MEMORY_ACCESS, runtime.getDevice()))
    except runtime.CUDARuntimeError:
        return None


# nvmlClockType_t, nvmlTemperatureSensors_t
_NVML_CLOCK_SM = 1
_NVML_CLOCK_MEM = 2
_NVML_TEMPERATURE_GPU = 0


@functools.cache
def _nvml_device(pci_bus_id: str) -> tuple[ctypes.CDLL, ctypes.c_void_p] | None:
    """NVML (the library nvidia-smi is built on) through ctypes, and this GPU's handle: opened once per process
    (first by the setup's device_identity) and kept, so that a job's telemetry starts no process and opens
    nothing. None where NVML is absent."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None
    if nvml.nvmlInit_v2() != 0:
        return None
    handle = ctypes.c_void_p()
    if nvml.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(handle)) != 0:
        return None
    return nvml, handle


def _nvml_uint(nvml: ctypes.CDLL, function: str, handle: ctypes.c_void_p, *args: int) -> int | None:
    """One unsigned value from NVML, or None where it fails or this driver's NVML lacks the function (a missing
    figure of telemetry must never fail a job)."""
    query = getattr(nvml, function, None)
    value = ctypes.c_uint()
    if query is None or query(handle, *(ctypes.c_int(a) for a in args), ctypes.byref(value)) != 0:
        return None
    return value.value


def _nvml_driver_version(nvml: ctypes.CDLL) -> str | None:
    query, text = getattr(nvml, "nvmlSystemGetDriverVersion", None), ctypes.create_string_buffer(96)
    return text.value.decode() if query is not None and query(text, ctypes.c_uint(96)) == 0 else None


def _nvml_identity(pci_bus_id: str) -> dict:
    """Driver version, application clocks and the enforced power limit from NVML. Empty where NVML is absent."""
    device = _nvml_device(pci_bus_id)
    if device is None:
        return {}
    nvml, handle = device
    found = {
        "driver_version": _nvml_driver_version(nvml),
        "application_sm_clock_mhz": _nvml_uint(nvml, "nvmlDeviceGetApplicationsClock", handle, _NVML_CLOCK_SM),
        "application_mem_clock_mhz": _nvml_uint(nvml, "nvmlDeviceGetApplicationsClock", handle, _NVML_CLOCK_MEM),
    }
    power_limit_mw = _nvml_uint(nvml, "nvmlDeviceGetEnforcedPowerLimit", handle)
    if power_limit_mw is not None:
        found["power_limit_w"] = power_limit_mw // 1000
    return {key: value for key, value in found.items() if value is not None}


@functools.cache
def _hold_kernel() -> cp.RawKernel:
    return cp.RawKernel(_HOLD_SOURCE, "hold_stream")


def _make_context() -> GpuContext:
    device = runtime.getDevice()
    runtime.deviceSetLimit(_LIMIT_PRINTF_FIFO_SIZE, PRINTF_FIFO_BYTES)  # only possible before the first launch
    attr = lambda a: runtime.deviceGetAttribute(a, device)  # noqa: E731
    props = runtime.getDeviceProperties(device)
    l2_bytes = props["l2CacheSize"]
    handle = cublas.create()
    # Default math mode: FP32 GEMMs stay FP32 (TF32 needs CUBLAS_TF32_TENSOR_OP_MATH or an env override).
    cublas.setMathMode(handle, cublas.CUBLAS_DEFAULT_MATH)
    cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
    return GpuContext(
        name=props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        cc_major=attr(_ATTR_CC_MAJOR),
        cc_minor=attr(_ATTR_CC_MINOR),
        sm_count=attr(_ATTR_MULTIPROCESSOR_COUNT),
        l2_bytes=l2_bytes,
        max_shared_optin_bytes=attr(_ATTR_MAX_SHARED_PER_BLOCK_OPTIN),
        pci_bus_id=f"{props['pciDomainID']:08X}:{props['pciBusID']:02X}:{props['pciDeviceID']:02X}.0",
        cublas_handle=handle,
        flush_buffer=cp.empty(max(2 * l2_bytes, 64 << 20), dtype=cp.uint8),
    )


def _arch_of(ctx: GpuContext) -> str:
    return f"sm_{ctx.cc_major}{ctx.cc_minor}"


def time_median_ms(launch: Callable[[], None], repeats: int, before: Callable[[], None] | None = None) -> float:
    """Median of CUDA-event times of `launch` (after one warm-up), `before` run outside the timed region."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    launch()
    times = []
    for _ in range(repeats):
        if before:
            before()
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return float(np.median(times))


def measure_copy_gbps(nbytes: int = 1 << 30) -> float:
    src = cp.ones(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    ms = time_median_ms(lambda: dst.data.copy_from_device_async(src.data, nbytes), repeats=10)
    return 2 * nbytes / (ms * 1e-3) / 1e9


_FMA_SOURCE = r"""
// 16 independent FMA chains per thread hide the FMA latency; a, b come at run time so nothing folds.
extern "C" __global__ void fma_peak(float* out, int iters, float a, float b) {
    float x[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) x[j] = threadIdx.x * 1e-3f + j;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 16; ++j) x[j] = fmaf(x[j], a, b);
    }
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 16; ++j) s += x[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""


def measure_fp32_tflops(sm_count: int, arch: str, iters: int = 8192) -> float:
    ok, log, cubin, lowered = compiler.nvrtc_compile(_FMA_SOURCE, ["fma_peak"], arch)
    if not ok:
        raise RuntimeError(f"FMA kernel failed to compile: {log}")
    module = cp.cuda.function.Module()
    module.load(cubin)
    kernel = module.get_function(lowered["fma_peak"])
    blocks, threads = sm_count * 8, 256
    out = cp.empty(blocks * threads, dtype=cp.float32)
    args = (out, np.int32(iters), np.float32(0.999), np.float32(1e-3))
    ms = time_median_ms(lambda: kernel((blocks,), (threads,), args), repeats=5)
    flops = 2 * 16 * iters * blocks * threads
    return flops / (ms * 1e-3) / 1e12


def measure_tensor_fp16_tflops(handle: int, n: int = 8192) -> float:
    return measure_tensor_tflops(handle, runtime.CUDA_R_16F, n)


_CUDA_R_16BF = 14  # library_types.h, for CuPy builds whose runtime module does not name it


def measure_tensor_bf16_tflops(handle: int, n: int = 8192) -> float:
    return measure_tensor_tflops(handle, getattr(runtime, "CUDA_R_16BF", _CUDA_R_16BF), n)


def measure_tensor_tflops(handle: int, operand_type: int, n: int = 8192) -> float:
    """cuBLAS GemmEx n^3 with 16-bit operands of `operand_type` (FP16, or BF16 held as its bits), FP32 compute
    and output."""
    values = cp.random.default_rng(1).random((n, n), dtype=cp.float32)
    a = values.astype(cp.float16) if operand_type == runtime.CUDA_R_16F else bf16_from_f32(values)
    c = cp.zeros((n, n), dtype=cp.float32)
    one, zero = np.array(1.0, np.float32), np.array(0.0, np.float32)

    def gemm() -> None:
        cublas.gemmEx(
            handle,
            cublas.CUBLAS_OP_N,
            cublas.CUBLAS_OP_N,
            n,
            n,
            n,
            one.ctypes.data,
            a.data.ptr,
            operand_type,
            n,
            a.data.ptr,
            operand_type,
            n,
            zero.ctypes.data,
            c.data.ptr,
            runtime.CUDA_R_32F,
            n,
            cublas.CUBLAS_COMPUTE_32F,
            cublas.CUBLAS_GEMM_DEFAULT,
        )

    ms = time_median_ms(gemm, repeats=5)
    return 2 * n**3 / (ms * 1e-3) / 1e12


def telemetry(ctx: GpuContext) -> Telemetry:
    info = Telemetry(
        gpu_name=ctx.name,
        gpu_uuid=uuid_text(runtime.getDeviceProperties(runtime.getDevice()).get("uuid", b"")),
        compute_capability=ctx.compute_capability,
        sm_count=ctx.sm_count,
        l2_bytes=ctx.l2_bytes,
        cuda_driver_version=runtime.driverGetVersion(),
        cuda_runtime_version=runtime.runtimeGetVersion(),
        cupy_version=cp.__version__,
        numpy_version=np.__version__,
        nvrtc_version=compiler.nvrtc_version(),
    )
    _fill_from_nvml(info, ctx.pci_bus_id)
    if info.max_sm_clock_mhz is None:
        info.max_sm_clock_mhz = runtime.deviceGetAttribute(_ATTR_MAX_CLOCK_KHZ, runtime.getDevice()) // 1000
    return info


def _fill_from_nvml(info: Telemetry, pci_bus_id: str) -> None:
    """The SM clock right after the timed rounds, the clock's maximum, temperature, power draw and driver."""
    device = _nvml_device(pci_bus_id)
    if device is None:
        return
    nvml, handle = device
    info.sm_clock_mhz = _nvml_uint(nvml, "nvmlDeviceGetClockInfo", handle, _NVML_CLOCK_SM)
    info.max_sm_clock_mhz = _nvml_uint(nvml, "nvmlDeviceGetMaxClockInfo", handle, _NVML_CLOCK_SM)
    info.temperature_c = _nvml_uint(nvml, "nvmlDeviceGetTemperature", handle, _NVML_TEMPERATURE_GPU)
    power_mw = _nvml_uint(nvml, "nvmlDeviceGetPowerUsage", handle)
    info.power_w = power_mw / 1000 if power_mw is not None else None
    info.driver_version = _nvml_driver_version(nvml) or ""

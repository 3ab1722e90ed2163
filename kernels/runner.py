"""The GPU job, run inside a sandboxed worker: load the cubin, check every test shape, then time.

Order of work (the first failure decides the verdict):
  1. load the module; read each kernel's registers / shared / local memory from the loaded function;
     refuse plans the loaded kernels cannot run (threads over the register-limited maximum, shared memory
     over the device's opt-in limit) and raise the dynamic shared memory attribute above 48 KB;
  2. correctness at every test shape: fresh random inputs, every output poisoned (NaN, 0xA5A5A5A5, FP8 0x7F)
     or, when it is also an input, refilled with random values, every workspace filled with garbage; each
     input fingerprinted on the host; the candidate launched; then the guard bands around every pointer
     argument must be untouched, the const inputs' fingerprints unchanged, and every element of every output
     must match (bit for bit for exact outputs) a reference computed only now, after the candidate,
     from inputs whose host-side fingerprints match again (kernels can write anywhere in the process's device
     memory, so nothing device-side that existed during the launch is trusted as a reference or an original
     unless its fingerprint, keyed by a secret the kernel never sees, says it is unchanged);
  3. timing at each benchmark shape: each round draws a fresh input set and checks the candidate's timed
     outputs the same way (a replayed or skipped computation fails), flushes L2 before each timed launch,
     and times the candidate and the baseline back to back, alternating which goes first; checks and
     reference run outside the timed region.

This module is the job's entry point (`judge_job`), loading and launch fitting; the work itself lives in
`inputs.py` (guarded buffers, input sets, arguments, input checks), `checks.py` (reference, comparison,
printed output) and `timing.py` (the interleaved timed rounds and their result).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import cupy as cp
from cupy.cuda import driver, runtime

from kernels import gpu, hopper, problems, triton_launch
from kernels import plan as plan_mod
from kernels.checks import JobFailed, check_printed_output, check_shape, label, placement
from kernels.payloads import GpuJob
from kernels.problems import Problem
from kernels.results import JudgeResult, KernelResources, Verdict
from kernels.timing import bench_shape

# cuFuncAttribute values (cuda.h).
_FUNC_MAX_THREADS = 0
_FUNC_SHARED = 1
_FUNC_CONST = 2
_FUNC_LOCAL = 3
_FUNC_NUM_REGS = 4
_FUNC_MAX_DYNAMIC_SHARED = 8
_DEFAULT_DYNAMIC_SHARED_BYTES = 48 * 1024

CUDA_ERRORS = (
    runtime.CUDARuntimeError,
    driver.CUDADriverError,
    cp.cuda.memory.OutOfMemoryError,
    hopper.DriverError,  # cuLaunchKernelEx and cuTensorMapEncodeTiled, through cuda-bindings
)


def judge_job(job: GpuJob) -> JudgeResult:
    """Entry point in the worker (kernels/payloads.py has the job: cubin, lowered names, plan, problem, arch,
    the compiler's resource report, options)."""
    problem = problems.load(job.problem)
    options = job.options
    result = JudgeResult(verdict=Verdict.ACCEPTED, message="", problem=problem.name, seed=options.seed)
    stage = "loading the module"
    waited_before, clock = gpu.DEVICE_LOCK.waited_s, _StageClock(result.stage_ms)
    try:
        ctx = gpu.context()
        _check_arch(job.arch, ctx)
        launches = [plan_mod.Launch.from_dict(d) for d in job.plan]
        kernels = load_kernels(job, problem, launches, ctx, result)
        clock.lap("load")
        offsets = problem.misaligned_offsets()
        for shape in problem.tests:
            stage = "the correctness checks"
            check = check_shape(problem, shape, launches, kernels, options.seed, job.arch, ctx.sm_count)
            check_printed_output()
            if check.passed and offsets:
                # The same shape again with every array at exactly its promised alignment: a wide vector path
                # taken without checking the address faults here, not on a reader's misaligned tensor.
                stage = f"the correctness checks with {placement(offsets)}"
                check = check_shape(problem, shape, launches, kernels, options.seed, job.arch, ctx.sm_count, offsets)
                check_printed_output()
            result.checks.append(check)
        failed = [c for c in result.checks if not c.passed]
        if failed:
            raise JobFailed(
                Verdict.WRONG_ANSWER,
                f"wrong at {len(failed)} of {len(result.checks)} test shapes; first: {failed[0].message}",
            )
        clock.lap("checks")
        if options.bench:
            stage = "the timed rounds"
            # The timed rounds have the device to themselves: spares' setup steps wait for the whole stage, and
            # the stage waits once for the steps in flight (kernels/devicelock.py), not once per timed launch.
            with gpu.DEVICE_LOCK.timed():
                result.ceilings = ctx.ceilings_for(problem.compute_unit)  # a tensor rate may be measured here
                parts_ms: dict[str, float] = {}
                for shape in problem.benchmarks:
                    bench = bench_shape(problem, shape, launches, kernels, options, job.arch, ctx, parts_ms)
                    result.benchmarks.append(bench)
            clock.lap("timed_rounds")
            result.stage_ms.update({f"timed_rounds.{part}": ms for part, ms in parts_ms.items()})
            result.telemetry = gpu.telemetry(ctx)
            clock.lap("telemetry")
        result.message = _summary(result)
    except JobFailed as failure:
        result.verdict, result.message, result.error = failure.verdict, failure.message, failure.error
    except plan_mod.PlanError as exc:
        result.verdict, result.message = Verdict.PLAN_ERROR, str(exc)
    except hopper.BindingsMissing as exc:
        result.verdict, result.message, result.error = Verdict.INTERNAL_ERROR, str(exc), repr(exc)
    except CUDA_ERRORS as exc:
        result.verdict, result.message, result.error = (
            Verdict.RUNTIME_ERROR,
            f"CUDA error during {stage}: {exc}",
            repr(exc),
        )
    result.lock_wait_ms = (gpu.DEVICE_LOCK.waited_s - waited_before) * 1e3
    return result


class _StageClock:
    """Records, under each stage's name, the milliseconds since the previous lap (where a job's time goes)."""

    def __init__(self, into: dict[str, float]):
        self.into, self.last = into, time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.into[stage] = (now - self.last) * 1e3
        self.last = now


def _check_arch(arch: str, ctx: gpu.GpuContext) -> None:
    major, minor = divmod(int(arch[3:].rstrip("a")), 10)
    exact = arch.endswith("a")  # sm_90a code runs on compute capability 9.0 only
    runs = major == ctx.cc_major and (minor == ctx.cc_minor if exact else minor <= ctx.cc_minor)
    if not runs:
        raise JobFailed(
            Verdict.INTERNAL_ERROR, f"compiled for {arch}, but this GPU is compute capability {ctx.compute_capability}"
        )


# ---- loading ---------------------------------------------------------------------------------------


@dataclass
class LoadedKernel:
    function: cp.cuda.function.Function
    resources: KernelResources
    module: cp.cuda.function.Module  # the function is valid only while its module stays loaded
    triton: triton_launch.TritonCall | None = None  # a Triton build: launched with Triton's convention (issue 46)


def load_kernels(
    job: GpuJob, problem: Problem, launches, ctx: gpu.GpuContext, result: JudgeResult
) -> dict[str, LoadedKernel]:
    """The job's kernels loaded, their resources read into `result.kernels`, the plan fitted to them (the judged job
    and the profile target, kernels/profile_target.py, load alike)."""
    if job.language == "triton":
        kernels = _load_triton(job, problem)
        result.kernels = [k.resources for k in kernels.values()]
        _fit_launches(problem, launches, kernels, ctx, job.arch)
        return kernels
    module = cp.cuda.function.Module()
    module.load(job.cubin)
    compiled = {k["name"]: KernelResources.from_dict(k) for k in job.kernels}
    kernels = {}
    for name, lowered in job.lowered_names.items():
        function = module.get_function(lowered)
        resources = compiled.get(name) or KernelResources(name, lowered)
        _read_resources(function, resources)
        kernels[name] = LoadedKernel(function, resources, module)
    result.kernels = [kernels[n].resources for n in job.lowered_names]
    _fit_launches(problem, launches, kernels, ctx, job.arch)
    return kernels


def _load_triton(job: GpuJob, problem: Problem) -> dict[str, LoadedKernel]:
    """Each Triton build's cubin in a module of its own, its entry checked against the build's parameters (the
    problem's arguments then Triton's two scratch pointers) and its resources read as CUDA's are."""
    compiled = {k["name"]: KernelResources.from_dict(k) for k in job.kernels}
    kernels = {}
    try:
        for build in job.triton:
            triton_launch.check_build(build, problem)
            module = cp.cuda.function.Module()
            module.load(build.cubin)
            function = module.get_function(build.symbol)
            try:
                found = hopper.parameter_sizes(function.ptr)
            except hopper.BindingsMissing:
                found = None  # no cuda-bindings: the compile's count of the PTX entry's parameters stands
            triton_launch.check_parameter_bytes(build, found)
            resources = compiled.get(build.name) or KernelResources(build.name, build.symbol)
            _read_resources(function, resources)
            kernels[build.name] = LoadedKernel(function, resources, module, triton_launch.TritonCall(build))
    except triton_launch.TritonLaunchError as exc:
        raise JobFailed(Verdict.INTERNAL_ERROR, "the judge cannot launch this Triton build", str(exc)) from exc
    return kernels


def _read_resources(function: cp.cuda.function.Function, resources: KernelResources) -> None:
    """The loaded function's registers, shared, local and constant memory and its most threads per block."""
    resources.registers = _attribute(function, _FUNC_NUM_REGS)
    resources.static_shared_bytes = _attribute(function, _FUNC_SHARED)
    resources.local_bytes = _attribute(function, _FUNC_LOCAL)
    resources.const_bytes = _attribute(function, _FUNC_CONST)
    resources.max_threads_per_block = _attribute(function, _FUNC_MAX_THREADS)


def _attribute(function: cp.cuda.function.Function, which: int) -> int:
    return driver.funcGetAttribute(which, function.ptr)


def _fit_launches(problem: Problem, launches, kernels, ctx: gpu.GpuContext, arch: str) -> None:
    """Refuse what the loaded kernels cannot launch; raise the dynamic shared memory limit where needed; for
    Hopper launches, opt into non-portable clusters, check the kernel's parameters against the arguments and
    tensor maps the plan passes, and the cluster against what the GPU can co-schedule."""
    dynamic_needed: dict[str, int] = {}
    hopper_launches: dict[str, list] = {}
    for sizes in problem.all_shapes():
        for launch in launches:
            resolved = plan_mod.resolve(launch, sizes, arch, problem, ctx.sm_count)
            res = kernels[launch.kernel].resources
            threads = resolved.block[0] * resolved.block[1] * resolved.block[2]
            if threads > res.max_threads_per_block:
                raise plan_mod.PlanError(
                    f"{launch.kernel}: {threads} threads per block, but with {res.registers} registers per thread "
                    f"it can launch at most {res.max_threads_per_block}"
                )
            if res.static_shared_bytes + resolved.shared_bytes > ctx.max_shared_optin_bytes:
                raise plan_mod.PlanError(
                    f"{launch.kernel}: {res.static_shared_bytes} static + {resolved.shared_bytes} dynamic bytes of "
                    f"shared memory exceed this GPU's {ctx.max_shared_optin_bytes} per block"
                )
            dynamic_needed[launch.kernel] = max(dynamic_needed.get(launch.kernel, 0), resolved.shared_bytes)
            if resolved.needs_driver:
                hopper_launches.setdefault(launch.kernel, []).append(resolved)
    for name, needed in dynamic_needed.items():
        if needed > _DEFAULT_DYNAMIC_SHARED_BYTES - kernels[name].resources.static_shared_bytes:
            driver.funcSetAttribute(kernels[name].function.ptr, _FUNC_MAX_DYNAMIC_SHARED, needed)
    for name, resolved_list in hopper_launches.items():
        _fit_hopper(problem, kernels[name].function.ptr, resolved_list)


def _fit_hopper(problem: Problem, function_ptr: int, resolved_list: list) -> None:
    """A kernel launched with clusters or tensor maps: its parameter list must be the problem's arguments then
    one 128-byte CUtensorMap per map the launch names (else the driver would read past what the judge passes);
    non-portable clusters are allowed where asked; each cluster must fit on the GPU."""
    first = resolved_list[0]
    sizes = hopper.parameter_sizes(function_ptr)
    for resolved in resolved_list:
        expected = len(problem.args) + len(resolved.tensor_maps)
        if sizes is not None and (
            len(sizes) != expected or any(size != hopper.TENSOR_MAP_BYTES for size in sizes[len(problem.args) :])
        ):
            raise plan_mod.PlanError(
                f"{first.kernel}: the kernel takes {len(sizes)} parameters of {sizes} bytes; the plan passes the "
                f"{len(problem.args)} arguments of {problem.name} then {len(resolved.tensor_maps)} tensor maps of "
                f"{hopper.TENSOR_MAP_BYTES} bytes (declare each as `const __grid_constant__ CUtensorMap name`)"
            )
    if any(r.non_portable_cluster for r in resolved_list):
        hopper.allow_non_portable_clusters(function_ptr)
    stream = cp.cuda.get_current_stream().ptr
    checked = set()
    for resolved in resolved_list:
        key = (resolved.block, resolved.shared_bytes, resolved.cluster)
        if resolved.cluster is None or key in checked:
            continue
        checked.add(key)
        blocks = resolved.cluster[0] * resolved.cluster[1] * resolved.cluster[2]
        most = hopper.max_cluster_blocks(function_ptr, resolved, stream)
        if most is not None and blocks > most:
            raise plan_mod.PlanError(
                f"{resolved.kernel}: clusters of {blocks} blocks of {resolved.block} threads with "
                f"{resolved.shared_bytes} bytes of dynamic shared memory cannot be co-scheduled on this GPU "
                f"(at most {most})"
            )


def _summary(result: JudgeResult) -> str:
    text = f"correct at all {len(result.checks)} test shapes"
    for bench in result.benchmarks:
        figure = f"{bench.gbps:.0f} GB/s" if bench.unit == "GB/s" else f"{bench.tflops:.2f} TFLOP/s"
        text += (
            f"; {label(bench.sizes)}: {bench.candidate.median_ms:.3f} ms, {figure}, "
            f"{bench.pct_of_baseline:.1f}% of baseline"
        )
        if bench.unit == "GB/s":
            text += f", {bench.pct_of_roofline:.1f}% of the copy bandwidth"
    return text

"""The parent side of a GPU run: send a compiled submission to a sandboxed worker, turn its fate into a verdict.

    judge = GpuJudge()                      # one per GPU; keeps a warm child between submissions
    compiled = compile_submission(src, "sgemm")
    result = judge.judge(compiled)          # JudgeResult; never raises for a bad submission
    judge.close()

`judge_submission` does both steps for one submission with a throw-away worker.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass

from kernels import ceilings, compiler, devicelock, problems, sandbox, triton_launch
from kernels.payloads import GpuJob, JobOptions, SetupAnswer, SetupRequest
from kernels.results import CompileResult, JudgeResult, Verdict

log = logging.getLogger(__name__)

WARM_UP = "kernels.gpu:warm_up"
JOB = "kernels.runner:judge_job"
# Spare children per GPU worker (kernels/sandbox.py has the schedule): they set up while jobs run, so a burst
# waits for none unless jobs come faster than this many setups. Each set-up spare holds a CUDA context and uses
# a CPU core while it sets up; README's capacity section has the measured setup time and memory per spare.
DEFAULT_SPARES = 4
# Said with each measurement of the ceilings (a worker's first setup, and again on another device identity).
PAGEABLE_MEMORY_WARNING = (
    "%s lets kernels read and write pageable host memory (HMM): a reader's kernel can reach its job child's own "
    "memory, the judge's Python included. Turn it off on judging nodes: options nvidia_uvm uvm_disable_hmm=1 "
    "(README, Operators)"
)


@dataclass(frozen=True)
class JudgeOptions:
    seed: int | None = None  # None: a fresh random seed per run (recorded in the result); set it on ranked runs
    bench: bool = True  # False: correctness only
    timeout_s: float = 120.0  # wall clock for the whole GPU job; the child is killed after it
    time_budget_s: float = 4.0  # per benchmark shape, for the timed rounds
    min_rounds: int = 10
    max_rounds: int = 100
    target_rel_std_err: float = 0.005


class GpuJudge:
    """A GPU worker that runs each submission in a child process of its own.

    A kernel runs in its child's CUDA context and can write anywhere in that context's memory (CuPy's pool,
    cuBLAS's workspace, the flush buffer), so no later submission may run where it ran: the child is ended
    after every job. With `warm`, up to `spares` children are kept set up (CUDA context, cuBLAS handle, flush
    buffer, rehearsal of the problem being judged) and as many more importing; they set up while a job runs,
    taking turns with its timed rounds through the worker's device lock (kernels/devicelock.py: a lock file
    this judge makes and hands to every child), so the next job's child is a spare already set up and no timed
    launch shares the GPU with a setup (the schedule: kernels/sandbox.py).

    The ceilings are measured by the first child and kept here; every later child receives them in its setup
    request and measures again only on another device identity, or when they are older than
    `ceilings_max_age_s` (kernels/ceilings.py); a child that idled past that age is replaced before the next
    job, by one that measures in its setup. `ceilings_measured` counts the children that measured."""

    def __init__(
        self,
        warm: bool = True,
        job: str = JOB,
        warm_up: str = WARM_UP,
        ceilings_max_age_s: float = ceilings.CEILINGS_MAX_AGE_S,
        warm_ahead: bool = True,
        spares: int = DEFAULT_SPARES,
    ):
        # job / warm_up ("module:function") are the GPU runner's unless a caller (a test's CPU stand-in) says otherwise.
        # warm_ahead=False starts the successor only after the job (its imports then wait too; no spares, so no
        # device lock): the comparison that shows the overlap leaves the timing alone (bench/judge_load.py
        # --hidden-check).
        self.warm = warm
        self.job = job
        self.warm_ahead = warm and warm_ahead
        self.ceilings_max_age_s = ceilings_max_age_s
        self.kept: SetupAnswer | None = None  # the latest setup's answer: device identity, ceilings, baselines
        self.profiling_off = ""  # why profiling is off on this node, once a profile found it so (see `profile`)
        self.ceilings_measured = 0
        self._rehearse: list[str] | None = None  # None: the first child rehearses every problem
        self.device_lock = devicelock.new_lock_file() if self.warm_ahead else None
        self.worker = sandbox.Worker(
            setup=warm_up if warm else None,
            preload=(job,),
            access=gpu_access((job, warm_up), self.device_lock),
            setup_payload=self._setup_payload,
            spares=spares if self.warm_ahead else 0,
            setup_alone=self._measures,
            teardown_hold=(lambda: devicelock.setup_step_at(self.device_lock)) if self.device_lock else None,
        )

    def _setup_payload(self) -> SetupRequest:
        # The latest setup's answer first: a spare released while the first job runs must get the ceilings the
        # first child has just measured, not measure them again beside the job.
        self._keep_setup_answer()
        return ceilings.payload_for(self.kept, self.ceilings_max_age_s, self._rehearse, device_lock=self.device_lock)

    def _measures(self) -> bool:
        """Whether the next child's setup would measure the ceilings (which needs the device to itself); not
        when setups have answered without any (a warm-up that keeps none, e.g. a CPU stand-in's)."""
        request = self._setup_payload()  # keeps the latest setup's answer first
        if self.worker.setups_done and self.kept is None:
            return False
        return request.ceilings is None

    def _ceilings_stale(self) -> bool:
        ceilings = (self.kept.ceilings if self.kept is not None else None) or {}
        return bool(ceilings) and time.time() - (ceilings.get("measured_at") or 0.0) >= self.ceilings_max_age_s

    def _keep_setup_answer(self) -> None:
        answer = self.worker.setup_value
        if isinstance(answer, SetupAnswer) and answer is not self.kept:
            self.kept = answer
            self.ceilings_measured += answer.measured
            if answer.measured and self.ceilings_measured > 1:
                # Seconds of the device held alone: an operator should see why it happened again.
                log.warning("a child measured the ceilings again: %s", answer.why_measured)
            if answer.measured and answer.identity.get("pageable_memory_access"):
                log.warning(PAGEABLE_MEMORY_WARNING, answer.identity.get("name", "this GPU"))

    def start(self) -> str | None:
        """Start the child now (CUDA context, cuBLAS handle, ceilings); returns an error text if that failed."""
        outcome = self.worker.start()
        self._keep_setup_answer()
        return (
            None if outcome.status is sandbox.Status.OK else (outcome.error or outcome.died_of or outcome.status.value)
        )

    def judge(self, compiled: CompileResult, options: JudgeOptions = JudgeOptions()) -> JudgeResult:
        if not compiled.ok:
            return JudgeResult(
                verdict=compiled.verdict,
                message=compiled.message,
                problem=compiled.problem,
                error=compiled.log,
                compile_time_ms=compiled.compile_time_ms,
            )
        seed = options.seed if options.seed is not None else secrets.randbits(31)
        job_options = {k: v for k, v in asdict(options).items() if k not in ("seed", "timeout_s")}
        try:
            job = gpu_job(compiled, JobOptions(seed=seed, **job_options))
        except triton_launch.TritonLaunchError as exc:
            log.error("a Triton result the GPU job cannot carry: %s", exc)
            return JudgeResult(
                verdict=Verdict.INTERNAL_ERROR,
                message="the judge failed; this is not your fault",
                problem=compiled.problem,
                seed=seed,
                error=str(exc),
                compile_time_ms=compiled.compile_time_ms,
            )
        if self.warm:
            # Spares set up from now on rehearse this problem, the likeliest next one (a burst is one exercise);
            # set before the job, so that those released while it runs do not rehearse every problem.
            self._rehearse = [compiled.problem]
        if self.warm and self._ceilings_stale():
            # The children set up idled past the ceilings' age: a new one measures them first, alone.
            self.worker.discard_set_up()
            self.worker.promote()
        if self.warm_ahead:
            # Imported spares are released before the job is sent, so that their setups' first steps may go ahead of
            # its timed rounds; missing ones are spawned where it delays nothing (a few ms each): once the job is
            # sent, or before the job waits for a setup.
            self.worker.release_spares()
        spawn = self.worker.spawn_spares if self.warm_ahead else None
        outcome = self.worker.call(self.job, job, options.timeout_s, overlap=spawn)
        self._keep_setup_answer()
        if self.warm:
            self.worker.promote()
        else:
            self.worker.close()
        result = _from_outcome(outcome, compiled.problem, seed, options.timeout_s)
        result.compile_time_ms = compiled.compile_time_ms
        result.setup_wait_ms = self.worker.setup_wait_ms
        return result

    def profile(self, compiled: CompileResult, judged: JudgeResult, *, ncu_setting: str = "", budget_s: float = 10.0):
        """Profile an accepted submission (issue 43: kernels/profile_run.py) in a child of its own, with the
        device held alone: no spare's setup step runs beside its replays. Returns a `profile_run.ProfileRun`.

        Once a profile finds profiling off on this node (counters refused, or the profiler unable to start: the
        node's doing, not a kernel's), later ones answer that at once, spending no GPU time, until the worker
        restarts (`profiling_off`)."""
        from kernels import profile as profile_mod
        from kernels import profile_run

        if self.profiling_off:
            gpu_name = judged.telemetry.gpu_name if judged.telemetry else ""
            return profile_run.ProfileRun(profile_mod.profile_off(self.profiling_off, gpu_name=gpu_name))
        lock = devicelock.DeviceLock()
        lock.use(self.device_lock)
        try:
            with lock.timed():
                run = profile_run.profile_compiled(
                    compiled, judged, ncu_setting=ncu_setting, budget_s=budget_s, seed=judged.seed or 0
                )
        finally:
            lock.use(None)
        if run.document.status == profile_mod.Status.OFF.value:
            self.profiling_off = run.document.reason
        return run

    def close(self) -> None:
        self.worker.close()
        if self.device_lock:
            devicelock.remove_lock_file(self.device_lock)

    def __enter__(self) -> GpuJudge:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def gpu_job(compiled: CompileResult, options: JobOptions) -> GpuJob:
    """The GPU job of a compiled submission: CUDA's one cubin and lowered names, or Triton's builds (issue 46),
    each a cubin of its own, with the plan as the runner resolves it (kernels/triton_launch.py)."""
    if compiled.language == "triton":
        return GpuJob(
            problem=compiled.problem,
            arch=compiled.arch,
            cubin=b"",
            lowered_names={},
            plan=triton_launch.gpu_plan(compiled),
            kernels=triton_launch.resources_named(compiled),
            options=options,
            language="triton",
            triton=triton_launch.gpu_builds(compiled),
        )
    if compiled.language != "cuda":
        raise triton_launch.TritonLaunchError(f"no GPU stage for {compiled.language!r} submissions")
    return GpuJob(
        problem=compiled.problem,
        arch=compiled.arch,
        cubin=compiled.cubin,
        lowered_names=compiled.lowered_names,
        plan=compiled.plan,
        kernels=[k.to_dict() for k in compiled.kernels],
        options=options,
    )


def gpu_access(code: tuple[str, ...], device_lock: str | None) -> sandbox.Access:
    """What a GPU child may open (kernels/confine.py): its code, CUDA's driver files and device nodes, CuPy's kernel
    cache (shared by the worker's children: they compile the same library kernels), the worker's lock files."""
    locks = (device_lock, devicelock.gate_path(device_lock)) if device_lock else ()
    cache = sandbox.child_cupy_cache_dir()
    os.makedirs(cache, exist_ok=True)
    return sandbox.Access.for_code(code).for_gpu().plus(write=(*locks, cache))


def _from_outcome(outcome: sandbox.Outcome, problem: str, seed: int, timeout_s: float) -> JudgeResult:
    if outcome.status is sandbox.Status.OK:
        result = outcome.value
    elif outcome.status is sandbox.Status.TIMED_OUT:
        result = JudgeResult(
            Verdict.TIMED_OUT,
            f"no answer within {timeout_s:g} s (an endless loop, or far too slow); the run was killed",
            problem,
            seed,
        )
    elif outcome.status is sandbox.Status.CRASHED:
        result = JudgeResult(Verdict.CRASHED, f"the GPU process died ({outcome.died_of})", problem, seed)
    else:
        result = JudgeResult(
            Verdict.INTERNAL_ERROR, "the judge failed; this is not your fault", problem, seed, error=outcome.error
        )
    result.output, result.output_bytes = outcome.output, outcome.output_bytes
    result.wall_time_ms = outcome.wall_time_ms
    return result


def gpu_present() -> bool:
    """Whether an NVIDIA GPU answers, asked of nvidia-smi so that this process creates no CUDA context."""
    if not shutil.which("nvidia-smi"):
        return False
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return listing.returncode == 0 and "GPU" in listing.stdout


def judge_submission(
    submission: str | CompileResult,
    problem: str | problems.Problem | None = None,
    arch: str = compiler.DEFAULT_ARCH,
    options: JudgeOptions = JudgeOptions(),
    judge: GpuJudge | None = None,
    language: str = "cuda",
) -> JudgeResult:
    """Compile (unless given a CompileResult) and judge one submission; a temporary worker unless `judge`.
    `language`: "cuda", or "triton" for a Triton .py file (issue 46)."""
    compiled = (
        submission
        if isinstance(submission, CompileResult)
        else compiler.compile_submission(submission, problem, arch, language=language)
    )
    if judge is not None:
        return judge.judge(compiled, options)
    with GpuJudge(warm=False) as temporary:
        return temporary.judge(compiled, options)

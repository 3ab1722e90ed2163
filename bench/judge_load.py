"""The GPU pool measured through the real pipeline (issue 18): submissions created by the site's service from
many readers, compiled by a Celery compile worker, judged by one Celery GPU worker per GPU.

    .venv/bin/python bench/judge_load.py                     # on a GPU node: every figure the issue asks for
    .venv/bin/python bench/judge_load.py --cpu-standin --submissions 12 --readers 4 --heavy 4 --alone 2 \\
        --hidden-check 2                                     # anywhere: a smoke test of the pipeline's logic

Everything lives in a fresh folder (VAR_DIR), removed at the end unless --keep: the embedded defaults of
`make run` (SQLite, Celery's file-system broker polled every 10 ms), the mini book with an exercise of
--problem on its free capsule, and --readers + 2 readers. The kernel is kernels/problems/<problem>/example.cu.
With --use-env-services the database and broker come from DATABASE_URL and CELERY_BROKER_URL instead
(give it a database of its own: the tool migrates it and adds its readers and submissions).

In order:
1. hidden-from-timing (--hidden-check N, no Celery): the same compiled kernel judged by a GpuJudge with its
   pool of spares beside each job (as the GPU worker runs: importing and setting up while the job runs, their
   GPU steps taking turns with its timed launches through the device lock) and by one whose successor starts
   only after the job, in blocks of N jobs, ABAB; the
   medians of the kernel's median time must agree within 1%. It also prints what a spare holds (CPU RSS,
   GPU memory).
2. The workers: a compile worker (-c --compile-concurrency) and one GPU worker per GPU (the first --gpus of
   those nvidia-smi -L lists, or GPU_IDS; all by default), started as operators start them: `manage.py
   gpu_worker --gpus 0,1,...`, the supervisor that gives each its CUDA_VISIBLE_DEVICES and node name gpuN@host
   and starts it again if it dies; one submission per GPU is judged first so that each worker's first child
   (which measures the ceilings) is done.
3. alone (--alone N): one submission at a time on the idle pool, each after the previous one's result and a
   pause (--idle-s) that lets the successor child warm up: submit-to-result on an idle pool, and the
   reference for the burst's verdicts and timings.
4. burst (--submissions S): the heavy reader's --heavy submissions, then one of the lone reader, then the
   rest spread over the other readers, created as fast as the service takes them. Prints submissions per
   minute per GPU (first GPU start to last result), submit-to-result p50/p95, the compile stage (queue and
   NVRTC), the GPU queue wait, GPU time per job, and the fairness check: how many jobs started between the
   lone reader's submission being compiled and its own start (at most 1). Profiling is on, as the site's default
   (issue 43): each passed judgement queues a profile, which the GPU worker runs when no judgement waits, or copies
   from an identical kernel's (`PROFILE_REUSE_DAYS`); the phase's profiles recorded, copies and GPU-seconds are
   printed beside its rate (PROFILES_ENABLED=false in the environment turns them off, to compare).
5. The comparison: the same verdicts in the burst as alone, and the median of the kernel's timed median
   within 1%. Per GPU (the index its worker owns, recorded with each job, and the device UUIDs the jobs
   reported): jobs and jobs per minute, and the check that no GPU ran two jobs at once (no two [start, end]
   intervals overlap on one GPU); and the node's submissions per minute.

Multi-GPU modes, instead of 3-4 (issue 19):
--scaling 1,2,4,8   a burst of n x --submissions on the first n GPUs for each n, workers restarted in between:
                    the node's rate against n times the one-GPU rate (at least 0.9 x linear on a GPU node).
--interference N    N jobs one at a time on the first GPU with no worker on the others, then a burst that keeps
                    every GPU judging (compiled in full before the GPUs' workers start, so that all of them have
                    work from the start whatever the compiles' pace): the kernel's median from the first GPU's
                    jobs during which every other GPU was busy (90% of the job's time at least), against alone
                    (within 1% on a GPU node).
--kill-mid-job      during the burst, the first GPU's worker is SIGKILLed (with its judge's child) while it runs
                    a job: that job must be judged again once (attempts 2), one result per job, and the
                    supervisor must start the worker again. Needs a Redis broker (--use-env-services with
                    CELERY_BROKER_URL=redis://...): the file-system broker loses an unacknowledged message.

A summary line `JUDGE_LOAD {json}` ends the output (and --json PATH gets it); the exit status is 1 when a check
fails (with --cpu-standin only the pipeline's own checks count: its figures are made up). Without a GPU and
without --cpu-standin the tool refuses to run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
MINI_BOOK = ROOT / "tests" / "catalog" / "books" / "mini"
STANDIN = "tests.submissions.standin_judge"
READY_TIMEOUT_S = 120
FINISHED = {"passed", "failed", "error", "timed_out"}
TOLERANCE_PCT = 1.0  # the "within 1%"
CONTROL_JOBS = 4  # jobs of the hidden check's control, each after 5 s of its disturbing child's imports
QUIET = ["--without-gossip", "--without-mingle", "--without-heartbeat"]  # no broadcasts between the workers
SCALING_EFFICIENCY = 0.9  # the "at least 0.9 x linear"
BURST_PER_MINUTE_PER_GPU = 90  # issue 30: sgemm example submissions a minute on one GPU, in the default burst
STARTED = time.monotonic()
JOB_STAGES = ("load", "checks", "timed_rounds", "telemetry")  # kernels/runner.py's stage_ms


def main() -> int:
    args = parse_args()
    from kernels.judge import gpu_present

    if not args.cpu_standin and not gpu_present():
        print(
            "judge_load: no NVIDIA GPU answers here (nvidia-smi -L). Run it on a GPU node, or pass --cpu-standin "
            "for a smoke test of the pipeline with the CPU stand-in (its figures say nothing about a GPU).",
            file=sys.stderr,
        )
        return 2
    gpus = gpu_ids(args)
    if gpus is None:
        return 2
    var_dir = Path(tempfile.mkdtemp(prefix="judge-load-"))
    env = tool_env(var_dir, args)
    os.environ.update(env)
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"):
        if name not in env:
            os.environ.pop(name, None)
    report: dict = {"gpus": len(gpus), "gpu_ids": gpus, "cpu_standin": args.cpu_standin, "problem": args.problem}
    report["checks"] = {}
    processes = Processes(var_dir, env)
    try:
        if args.hidden_check:
            report["hidden"] = progress("hidden", hidden_check(args))
        if args.scaling or args.interference or args.alone or args.submissions:
            exercise, readers = prepare(args)
            processes.start_compile(args.compile_concurrency)
        if args.scaling:
            report["scaling"] = phase_scaling(processes, exercise, readers, args, gpus)
        elif args.interference:
            report["interference"] = phase_interference(processes, exercise, readers, args, gpus)
        elif args.alone or args.submissions:
            processes.start_gpus("gpus", gpus)
            report["first_jobs"] = progress(
                "first_jobs", phase_first_jobs(exercise, readers["alone"], gpus, args.timeout)
            )
            if args.alone:
                report["alone"] = progress(
                    "alone", phase_alone(exercise, readers["alone"], args.alone, args.idle_s, args.timeout)
                )
            if args.submissions:
                kill = processes.kill_gpu if args.kill_mid_job else None
                report["burst"] = progress("burst", phase_burst(exercise, readers, args, gpus, kill=kill))
                if args.kill_mid_job:
                    report["burst"]["kill"]["restarted"] = restarted(processes, gpus[0])
        report["checks"] = checks(report, args)
        if not all(report["checks"].values()):
            print_log_problems(var_dir)  # the workers' logs go with the folder (unless --keep)
    except RuntimeError:
        print_log_tails(var_dir)  # why a phase stalled is in the workers' logs, which go with the folder
        raise
    finally:
        processes.stop_all()
        if args.logs:
            copy_logs(var_dir, Path(args.logs))
        if args.keep:
            print(f"kept: {var_dir}")
        else:
            shutil.rmtree(var_dir, ignore_errors=True)
    print_report(report)
    line = json.dumps(report)
    print(f"JUDGE_LOAD {line}")
    if args.json:
        Path(args.json).write_text(line + "\n")
    return 0 if all(report["checks"].values()) else 1


def progress(phase: str, figures: dict) -> dict:
    """Each phase's figures as it ends (the report comes only at the end, which a run cut short never reaches)."""
    print(f"judge_load: {phase} done at {time.monotonic() - STARTED:.0f} s: {json.dumps(figures)}", flush=True)
    return figures


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-standin", action="store_true", help="judge with the CPU stand-in (no GPU needed)")
    parser.add_argument("--standin-job-s", type=float, default=0.0, help="with --cpu-standin: seconds per job")
    parser.add_argument("--problem", default="sgemm", help="a problem with an example.cu (default sgemm)")
    parser.add_argument("--submissions", type=int, default=200, help="the burst's size (0: no burst)")
    parser.add_argument("--readers", type=int, default=40, help="readers the burst comes from (heavy one included)")
    parser.add_argument("--heavy", type=int, default=20, help="how many the heavy reader queues first")
    parser.add_argument("--alone", type=int, default=10, help="submissions judged one at a time on the idle pool")
    parser.add_argument("--idle-s", type=float, default=2.0, help="pause before each alone submission")
    parser.add_argument("--hidden-check", type=int, default=8, help="jobs per block of the hidden check (0: skip)")
    parser.add_argument(
        "--gpus", type=int, default=0, help="GPU workers, one per GPU (default: every GPU nvidia-smi -L lists)"
    )
    parser.add_argument(
        "--scaling",
        default="",
        help="e.g. 1,2,4,8: a burst of --submissions per GPU on that many GPUs, in turn; node throughput vs GPUs",
    )
    parser.add_argument(
        "--interference",
        type=int,
        default=0,
        help="N: the kernel's median on the first GPU alone (N jobs), then while every other GPU judges a burst",
    )
    parser.add_argument(
        "--kill-mid-job",
        action="store_true",
        help="SIGKILL the first GPU's worker during its first burst job (needs a Redis broker: --use-env-services)",
    )
    parser.add_argument(
        "--spares", type=int, help="spare children per GPU worker (GPU_WARM_SPARES; default: the setting's)"
    )
    parser.add_argument("--compile-concurrency", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a phase may take")
    parser.add_argument("--use-env-services", action="store_true", help="DATABASE_URL and CELERY_BROKER_URL")
    parser.add_argument("--json", help="also write the summary here")
    parser.add_argument("--keep", action="store_true", help="keep the folder (logs of the workers)")
    parser.add_argument("--logs", help="copy the workers' logs here at the end (a device call's $OUT)")
    return parser.parse_args()


def gpu_ids(args) -> list[str] | None:
    """The GPUs to start workers on: the first --gpus (or the largest --scaling step) of those nvidia-smi -L
    lists (or GPU_IDS). The CPU stand-in makes up as many as asked ("0", "1", ...: its workers get them as
    CUDA_VISIBLE_DEVICES, which nothing reads but the stand-in's made-up UUID)."""
    from apps.submissions.gpu_node import listed_gpus

    wanted = max(steps(args.scaling) or [args.gpus or 0])
    listed = listed_gpus()
    if args.cpu_standin and not listed:
        listed = [str(n) for n in range(max(wanted, 2 if args.interference else 1))]
    if args.interference and len(listed) < 2:
        print("judge_load: --interference needs at least two GPUs", file=sys.stderr)
        return None
    if wanted > len(listed):
        print(f"judge_load: {wanted} GPUs asked for, {len(listed)} listed ({listed})", file=sys.stderr)
        return None
    if args.kill_mid_job and not (
        args.use_env_services and os.environ.get("CELERY_BROKER_URL", "").startswith("redis")
    ):
        print(
            "judge_load: --kill-mid-job needs a Redis broker (--use-env-services, CELERY_BROKER_URL=redis://...): "
            "the killed job's message comes back only from a broker with acknowledgements",
            file=sys.stderr,
        )
        return None
    return listed[:wanted] if wanted else listed


def steps(text: str) -> list[int]:
    return [int(n) for n in text.split(",") if n.strip()] if text else []


def tool_env(var_dir: Path, args) -> dict[str, str]:
    services = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")
    env = {k: v for k, v in os.environ.items() if args.use_env_services or k not in services}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.dev",
        VAR_DIR=str(var_dir),
        DEBUG="false",  # no query log kept in memory by every process
        SUBMISSIONS_PER_HOUR="100000",  # the burst is the point, not the readers' quota
        SUBMISSIONS_PER_DAY="100000",
        # The file-system broker's poll (the embedded default; Redis, in production, pushes): short enough that a
        # burst's rate and an idle pool's latency measure the judge, not the poll.
        CELERY_BROKER_POLLING_INTERVAL_S="0.01",
        LOG_FORMAT="text",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    if args.kill_mid_job:
        # The killed job's message comes back after the visibility timeout (30 min in production); shorter
        # here, but longer than any job.
        env.setdefault("CELERY_BROKER_VISIBILITY_TIMEOUT_S", "60")
        env.setdefault("CELERY_BROKER_RESTORE_INTERVAL_S", "2")
    if args.spares is not None:
        env.update(GPU_WARM_SPARES=str(args.spares))
    if args.cpu_standin:
        env.update(SUBMISSIONS_JUDGE_JOB=f"{STANDIN}:judge_job", SUBMISSIONS_JUDGE_WARM_UP=f"{STANDIN}:warm_up")
        # The GPU workers' supervisor hands on only what a judge worker reads (config/judge_env.py) and what is named.
        env.update(
            STANDIN_JOB_S=str(args.standin_job_s),
            JUDGE_WORKER_EXTRA_ENV="STANDIN_JOB_S",
            KERNELS_CHILD_VARIABLES="STANDIN_JOB_S",
        )
    return env


# ---- 1. hidden from timing ---------------------------------------------------------------------------


def hidden_check(args) -> dict:
    """The kernel's median with the spare pool beside each job (as the GPU worker runs: spares importing,
    set-up spares idle, no setup in flight), and with nothing beside the job; then, as a control that the
    comparison can see a disturbance, with a full warm-up on the GPU (context, ceilings measured, problems
    rehearsed) started just as each job starts."""
    from kernels import GpuJudge, JudgeOptions, compile_submission

    compiled = compile_submission(example_source(args.problem), args.problem)
    if not compiled.ok:
        raise RuntimeError(f"the example does not compile: {compiled.log}")
    kw = {"job": f"{STANDIN}:judge_job", "warm_up": f"{STANDIN}:warm_up"} if args.cpu_standin else {}
    if args.spares is not None:
        kw["spares"] = args.spares
    medians: dict[str, list[float]] = {"warm_ahead": [], "alone": [], "control": []}
    verdicts = set()
    footprint: dict | None = None
    kept = (
        None  # the first judge's measuring setup (ceilings, baselines), handed on as a worker hands it to its children
    )
    for mode in ("warm_ahead", "alone", "warm_ahead", "alone", "control"):
        with GpuJudge(warm=True, warm_ahead=mode == "warm_ahead", **kw) as judge:
            judge.kept = kept
            error = judge.start()
            kept = judge.kept
            if error:
                raise RuntimeError(f"the judge did not start: {error}")
            for _ in range(min(args.hidden_check, CONTROL_JOBS) if mode == "control" else args.hidden_check):
                with warm_up_beside(kw.get("warm_up"), on=mode == "control"):
                    result = judge.judge(compiled, JudgeOptions())
                verdicts.add(result.verdict.value)
                if result.benchmarks:
                    medians[mode].append(result.benchmarks[-1].candidate.median_ms)
            if mode == "warm_ahead" and footprint is None:
                footprint = spare_footprint(judge)
    with_successor, without, control = (median(medians[m]) for m in ("warm_ahead", "alone", "control"))
    return {
        "jobs_per_mode": 2 * args.hidden_check,
        "verdicts": sorted(verdicts),
        "median_ms_successor_importing": with_successor,
        "median_ms_nothing_beside": without,
        "diff_pct": pct_diff(with_successor, without),
        "median_ms_control_warm_up_beside": control,
        "control_diff_pct": pct_diff(control, without),
        "spares": footprint,
    }


def spare_footprint(judge) -> dict:
    """What the pool's spares hold between jobs (kernels/sandbox.py): the CPU memory (RSS) of a set-up spare
    and of one that has only imported, and the GPU memory of a set-up spare (nvidia-smi, where there is one)."""
    from kernels.sandbox import Stage

    spares = judge.worker._spares
    if spares and not any(s.stage is Stage.READY or s.setting_up for s in spares):
        # Whether a spare is set up at this instant depends on where the pool's cycle stands (how busy the machine
        # was): set one up now, between jobs, where a setup may run, so that there is one to measure.
        spares[0].release(judge.worker.setup_payload())
    for spare in list(spares):
        if spare.setting_up:  # released in the last gap: no job runs now, so wait for it
            judge.worker._await_setup(spare)
    for spare in spares:
        spare.poll_imported()
    gpu_mib: dict[int, float] = {}
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        listing = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout
        for line in listing.splitlines():
            with contextlib.suppress(ValueError):
                pid, used = line.split(",")
                gpu_mib[int(pid)] = float(used)
    set_up = [s.process.pid for s in spares if s.stage is Stage.READY]
    imported = [s.process.pid for s in spares if s.stage is Stage.IMPORTED]
    return {
        "size": judge.worker.spares,
        "set_up": len(set_up),
        "imported": len(imported),
        "rss_mib_set_up": median([m for p in set_up if (m := rss_mib(p)) is not None]),
        "rss_mib_imported": median([m for p in imported if (m := rss_mib(p)) is not None]),
        "gpu_mib_set_up": median([gpu_mib[p] for p in set_up if p in gpu_mib]),
    }


def rss_mib(pid: int) -> float | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return None


@contextlib.contextmanager
def warm_up_beside(warm_up: str | None, on: bool):
    """A child of its own whose imports are done beforehand and whose setup (the GPU part of a warm-up)
    is released as the block starts: what the GPU worker must never do while a job is timed."""
    if not on:
        yield
        return
    from kernels import judge, sandbox

    other = sandbox.Worker(setup=warm_up or judge.WARM_UP)
    other.prepare_spares()
    time.sleep(5.0)  # its imports (CuPy, the problems), which do not touch the GPU
    other.promote()
    try:
        yield
    finally:
        other.close()


# ---- 2. the site and its workers ---------------------------------------------------------------------


def example_source(problem: str) -> str:
    return (ROOT / "kernels" / "problems" / problem / "example.cu").read_text()


def prepare(args):
    """Schema, the mini book, an exercise of --problem on its free capsule, the readers."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from apps.catalog.models import Book
    from apps.catalog.services import book_import
    from apps.submissions.models import Exercise

    call_command("migrate", verbosity=0)
    book_import(folder=MINI_BOOK)
    capsule = Book.objects.get(slug="mini-book").capsules.get(number=1)
    source = example_source(args.problem)
    exercise, _ = Exercise.objects.update_or_create(
        capsule=capsule,
        defaults={
            "problem": args.problem,
            "title": f"{args.problem} (load)",
            "statement": "Load test.",
            "starter_source": source,
            "starter_name": "example.cu",
        },
    )
    users = get_user_model().objects
    stamp = int(time.time())
    make = lambda name: users.create_user(email=f"{name}.{stamp}@judge-load.example.org", password=None)  # noqa: E731
    readers = {
        "alone": make("alone"),
        "heavy": make("heavy"),
        "lone": make("lone"),
        "others": [make(f"reader{n}") for n in range(max(args.readers - 2, 1))],
    }
    return exercise, readers


class Processes:
    """The Celery workers, each in a session of its own (ended with its children), logging to a file. The GPU
    workers are started as operators start them: `manage.py gpu_worker --gpus ...`, the supervisor that gives
    each GPU its worker (CUDA_VISIBLE_DEVICES, node name gpuN@host) and starts one again when it dies."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.folder, self.env, self.running = folder, env, {}
        self.gpu_dirs: dict[str, Path] = {}  # GPU index -> its supervisor's folder (gpuN.log, gpuN.pid)

    def start(self, name: str, command: list[str], **env: str) -> None:
        log = self.folder / f"{name}.log"
        self.running[name] = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**self.env, **env},
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def start_compile(self, concurrency: int) -> None:
        celery = [sys.executable, "-m", "celery", "-A", "config", "worker"]
        self.start(
            "compile",
            [*celery, "-Q", "default,compile", "-c", str(concurrency), "-n", "compile@%h"]
            + ["--prefetch-multiplier", "1", "-l", "INFO", *QUIET],
        )
        self.wait_ready("compile", lambda: self.log("compile"))

    def start_gpus(self, name: str, gpus: list[str]) -> None:
        """One GPU worker per GPU in `gpus`, under a supervisor called `name`."""
        folder = self.folder / name
        command = [sys.executable, "manage.py", "gpu_worker", "--gpus", ",".join(gpus), "--kind", "h200"]
        self.start(name, [*command, "--log-dir", str(folder), "--celery-args", " ".join(QUIET)])
        for gpu in gpus:
            self.gpu_dirs[gpu] = folder
            self.wait_ready(name, lambda gpu=gpu: self.gpu_log(gpu))

    def wait_ready(self, name: str, read, times: int = 1) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while read().count(" ready.") < times:
            if self.running[name].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start:\n{self.log(name)[-3000:]}\n{read()[-3000:]}")
            time.sleep(0.1)

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def gpu_log(self, gpu: str) -> str:
        path = self.gpu_dirs[gpu] / f"gpu{gpu}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def gpu_pid(self, gpu: str) -> int:
        return int((self.gpu_dirs[gpu] / f"gpu{gpu}.pid").read_text())

    def kill_gpu(self, gpu: str) -> None:
        """SIGKILL the worker of that GPU, its pool process and its judge's child: a worker lost mid-job."""
        os.killpg(self.gpu_pid(gpu), signal.SIGKILL)

    def stop(self, name: str) -> None:
        process = self.running.pop(name)
        gpus = [gpu for gpu, folder in self.gpu_dirs.items() if folder == self.folder / name]
        # A supervisor stops its workers itself (warm shutdown, nothing is running by now); a plain worker
        # gets a cold shutdown.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM if gpus else signal.SIGQUIT)
        try:
            process.wait(timeout=45 if gpus else 5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the judge's children, if any outlived their worker
        for gpu in gpus:
            with contextlib.suppress(ProcessLookupError, FileNotFoundError, ValueError):
                os.killpg(self.gpu_pid(gpu), signal.SIGKILL)
        for gpu in gpus:
            del self.gpu_dirs[gpu]

    def stop_all(self) -> None:
        for name in list(self.running):
            self.stop(name)


# ---- 3, 4. the phases ----------------------------------------------------------------------------------


def submit(user, exercise) -> int:
    from apps.submissions.services import submission_create

    return submission_create(user=user, exercise=exercise, source=exercise.starter_source, filename="example.cu").pk


def wait_finished(ids: list[int], timeout_s: float) -> None:
    wait_status(ids, FINISHED, timeout_s, "finished")


def wait_compiled(ids: list[int], timeout_s: float) -> None:
    wait_status(ids, {"compiled"}, timeout_s, "compiled")


def wait_status(ids: list[int], statuses, timeout_s: float, what: str) -> None:
    """Wait until every submission of `ids` has one of `statuses`; else say which have not, and where they stand."""
    from apps.submissions.models import Submission

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if Submission.objects.filter(pk__in=ids, status__in=statuses).count() == len(ids):
            return
        time.sleep(0.05)
    rows = Submission.objects.filter(pk__in=ids).exclude(status__in=statuses)
    rows = rows.values_list("pk", "status", "attempts", "gpu_index")
    raise RuntimeError(
        f"not every submission {what} within {timeout_s:g} s; the rest (id, status, attempts, gpu): {list(rows)}"
    )


def print_log_tails(folder: Path, chars: int = 2500) -> None:
    for log in sorted(folder.rglob("*.log")):
        print(f"---- {log.relative_to(folder)} (last {chars} characters)", file=sys.stderr)
        print(log.read_text(errors="replace")[-chars:], file=sys.stderr)


def copy_logs(folder: Path, to: Path) -> None:
    """The workers' logs, kept where a device call brings files back (the folder itself is removed, or stays on
    a machine that is handed back)."""
    for log in folder.rglob("*.log"):
        target = to / log.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, target)


def print_log_problems(folder: Path, lines: int = 40) -> None:
    """The workers' warnings, errors and tracebacks (a worker that measured the ceilings again says why)."""
    for log in sorted(folder.rglob("*.log")):
        found = [
            line
            for line in log.read_text(errors="replace").splitlines()
            if any(mark in line for mark in ("WARNING", "ERROR", "Traceback", "Error:"))
        ]
        if found:
            print(
                f"---- {log.relative_to(folder)}: {len(found)} warning or error lines, the first {lines}",
                file=sys.stderr,
            )
            print("\n".join(found[:lines]), file=sys.stderr)


def phase_first_jobs(exercise, user, gpus: list[str], timeout_s: float) -> dict:
    """One job per GPU worker at once: each worker's first child (ceilings measured, every problem
    rehearsed) has then served, and its successor is warm."""
    ids = [submit(user, exercise) for _ in gpus]
    wait_finished(ids, timeout_s)
    return figures(ids, len(gpus))


def phase_alone(exercise, user, n: int, idle_s: float, timeout_s: float) -> dict:
    ids = []
    for _ in range(n):
        time.sleep(idle_s)
        ids.append(submit(user, exercise))
        wait_finished(ids[-1:], timeout_s)
    return figures(ids, gpus=1)


def phase_burst(exercise, readers, args, gpus: list[str], size: int | None = None, kill=None, start_gpus=None) -> dict:
    """The burst; with `kill`, the first GPU's worker is SIGKILLed as soon as it runs a job of the burst; with
    `start_gpus`, no GPU worker runs while it is submitted: every job is compiled, then `start_gpus()` starts them."""
    from apps.submissions.models import GpuWorker

    size = args.submissions if size is None else size
    recorded_before = sum(GpuWorker.objects.values_list("jobs_done", flat=True))
    heavy = [submit(readers["heavy"], exercise) for _ in range(min(args.heavy, size))]
    lone = submit(readers["lone"], exercise)
    rest = [
        submit(readers["others"][n % len(readers["others"])], exercise) for n in range(max(size - len(heavy) - 1, 0))
    ]
    ids = [*heavy, lone, *rest]
    if start_gpus:
        wait_compiled(ids, args.timeout)
        start_gpus()
    killed = kill_when_running(ids, gpus[0], kill, args.timeout) if kill else None
    wait_finished(ids, args.timeout)
    burst = figures(ids, len(gpus))
    burst["fairness"] = fairness(lone, ids)
    burst["ids"] = ids
    burst["results_recorded"] = sum(GpuWorker.objects.values_list("jobs_done", flat=True)) - recorded_before
    if killed:
        burst["kill"] = killed_job(killed)
    return burst


def kill_when_running(ids: list[int], gpu: str, kill, timeout_s: float) -> int:
    """Wait until a job of `ids` runs on `gpu`, then kill that GPU's worker; returns the job's id."""
    from apps.submissions.models import Submission

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        running = Submission.objects.filter(pk__in=ids, status="running", gpu_index=gpu).values_list("pk", flat=True)
        if running:
            kill(gpu)
            print(f"judge_load: killed GPU {gpu}'s worker while it ran submission {running[0]}", flush=True)
            return running[0]
        time.sleep(0.02)
    raise RuntimeError(f"GPU {gpu} ran no job of the burst within {timeout_s:g} s")


def killed_job(pk: int) -> dict:
    from apps.submissions.models import Submission

    s = Submission.objects.get(pk=pk)
    return {"submission": pk, "status": s.status, "attempts": s.attempts, "judged_again_on_gpu": s.gpu_index}


def restarted(processes, gpu: str) -> bool:
    """Whether the supervisor started the killed worker again (a second " ready." in its log)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while processes.gpu_log(gpu).count(" ready.") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    return processes.gpu_log(gpu).count(" ready.") >= 2


def phase_scaling(processes, exercise, readers, args, gpus: list[str]) -> list[dict]:
    """For each step n of --scaling: workers on the first n GPUs, a burst of n x --submissions (the same
    work per GPU at every step), then the workers stopped. Efficiency: the node's rate over n times the
    rate of the first step per GPU (1 = linear)."""
    rows = []
    for n in steps(args.scaling):
        name = f"gpus-{n}"
        processes.start_gpus(name, gpus[:n])
        phase_first_jobs(exercise, readers["alone"], gpus[:n], args.timeout)
        burst = phase_burst(exercise, readers, args, gpus[:n], size=n * args.submissions)
        processes.stop(name)
        rows.append({"gpus": n, "burst": burst, "per_minute_node": burst["per_minute_node"]})
    base = rows[0]["per_minute_node"] / rows[0]["gpus"] if rows and rows[0]["per_minute_node"] else None
    for row in rows:
        row["efficiency"] = row["per_minute_node"] / (row["gpus"] * base) if base and row["per_minute_node"] else None
    return rows


def phase_interference(processes, exercise, readers, args, gpus: list[str]) -> dict:
    """The kernel's median on the first GPU alone (the others idle, no worker on them), then during a burst
    that keeps every GPU judging: only the first GPU's jobs during which each other GPU was busy at least
    90% of the time count. The same kernel on the same GPU; only the neighbours differ.

    The burst is compiled in full before any GPU worker starts (the first GPU's is stopped meanwhile): with the
    workers consuming as the compiles arrive, GPUs whose jobs take about as long as a compile take turns instead
    of running together (on a 2-core machine whose NVRTC took 7 s a file, no job of the first GPU had the other
    busy for 90% of its time)."""
    first, others = gpus[0], gpus[1:]
    processes.start_gpus("gpu-first", [first])
    phase_first_jobs(exercise, readers["alone"], [first], args.timeout)
    alone = phase_alone(exercise, readers["alone"], args.interference, args.idle_s, args.timeout)
    processes.stop("gpu-first")
    # Enough for every GPU to judge --interference jobs and more while the first one does.
    burst = phase_burst(
        exercise,
        readers,
        args,
        gpus,
        size=2 * args.interference * len(gpus),
        start_gpus=lambda: processes.start_gpus("gpu-all", gpus),
    )
    from apps.submissions.models import Submission

    jobs = list(Submission.objects.filter(pk__in=burst["ids"]).exclude(started_at=None).exclude(finished_at=None))
    busy = [s for s in jobs if s.gpu_index == first and all(busy_fraction(s, jobs, other) >= 0.9 for other in others)]
    with_busy = median([headline_ms(s.result or {}) for s in busy if headline_ms(s.result or {}) is not None])
    without = alone["kernel_median_ms"]["p50"] if alone.get("kernel_median_ms") else None
    return {
        "gpu": first,
        "alone": alone,
        "burst": burst,
        "jobs_alone": args.interference,
        "jobs_with_others_busy": len(busy),
        "median_ms_alone": without,
        "median_ms_others_busy": with_busy,
        "diff_pct": pct_diff(with_busy, without),
    }


def busy_fraction(job, jobs: list, gpu: str) -> float:
    """The share of `job`'s run during which `gpu` was running a job too."""
    span = (job.finished_at - job.started_at).total_seconds()
    covered = sum(
        max(0.0, (min(job.finished_at, s.finished_at) - max(job.started_at, s.started_at)).total_seconds())
        for s in jobs
        if s.gpu_index == gpu
    )
    return covered / span if span > 0 else 0.0


# ---- figures ---------------------------------------------------------------------------------------


def figures(ids: list[int], gpus: int) -> dict:
    from apps.submissions.models import Submission

    rows = list(Submission.objects.filter(pk__in=ids))
    judged = [s for s in rows if s.started_at and s.finished_at]
    seconds = lambda a, b: (b - a).total_seconds()  # noqa: E731
    window_s = (
        seconds(min(s.started_at for s in judged), max(s.finished_at for s in judged)) if len(judged) > 1 else None
    )
    results = [s.result or {} for s in judged]
    waits = [r.get("setup_wait_ms") or 0.0 for r in results]
    return {
        "submissions": len(rows),
        "statuses": dict(sorted(count(s.status for s in rows).items())),
        "verdicts": dict(sorted(count(s.verdict for s in rows).items())),
        # What went wrong where a job did not pass (the example always should): the message and the error's end.
        "not_passed": [
            {
                "id": s.pk,
                "verdict": s.verdict,
                "message": s.message[:300],
                "error": (s.result or {}).get("error", "")[-600:],
            }
            for s in rows
            if s.status != "passed"
        ][:5],
        "per_minute_per_gpu": len(judged) / window_s * 60 / gpus if window_s else None,
        "per_minute_node": len(judged) / window_s * 60 if window_s else None,
        "per_gpu": per_gpu(judged, window_s),
        "overlapping_jobs": overlapping(judged),
        "submit_to_result_s": spread([seconds(s.created_at, s.finished_at) for s in rows if s.finished_at]),
        "compile_stage_s": spread([seconds(s.created_at, s.compiled_at) for s in rows if s.compiled_at]),
        "nvrtc_ms": spread([(s.compiled or {}).get("compile_time_ms") for s in rows if s.compiled]),
        "gpu_queue_wait_s": spread([seconds(s.compiled_at, s.started_at) for s in judged if s.compiled_at]),
        "gpu_stage_s": spread([seconds(s.started_at, s.finished_at) for s in judged]),
        "gpu_job_ms": spread([r.get("wall_time_ms") for r in results]),
        "setup_wait_ms": spread([r.get("setup_wait_ms") for r in results]),
        "lock_wait_ms": spread([r.get("lock_wait_ms") for r in results]),
        # Rounds past the minimum (to reach the target relative standard error) are what makes a job's tail.
        "timed_rounds_n": spread([sum(b.get("rounds_checked", 0) for b in r.get("benchmarks") or []) for r in results]),
        **{f"{stage}_ms": spread([(r.get("stage_ms") or {}).get(stage) for r in results]) for stage in JOB_STAGES},
        # The pool makes most waits 0 and a few one (parallel) setup long: the mean is what a job pays.
        "setup_wait_ms_mean": statistics.fmean(waits) if waits else None,
        "jobs_waiting_for_setup": sum(w > 1.0 for w in waits),
        "between_jobs_s": spread(gaps(judged)),
        "kernel_median_ms": spread([headline_ms(r) for r in results]),
        "ceilings_measured_at": sorted({(r.get("ceilings") or {}).get("measured_at") or 0 for r in results}),
        "profiles": profiles_of(ids),
    }


def profiles_of(ids: list[int]) -> dict:
    """The profiles of these submissions recorded by the time the phase ended (issue 43: each passed judgement queues
    one, run when no judgement waits): by status, how many were copies of an identical kernel's (no GPU time), and
    the GPU-seconds of those that ran ncu."""
    from apps.submissions.models import Profile

    rows = list(Profile.objects.filter(submission_id__in=ids).values_list("status", "data"))
    copied = [data for _, data in rows if data.get("reused_from_profile_at")]
    made = [data for _, data in rows if not data.get("reused_from_profile_at")]
    return {
        "recorded": len(rows),
        "statuses": dict(sorted(count(status for status, _ in rows).items())),
        "copied": len(copied),
        "made_gpu_seconds": round(sum(data.get("gpu_seconds") or 0.0 for data in made), 2),
    }


def per_gpu(judged: list, window_s: float | None) -> dict[str, dict]:
    """Each GPU's share: the jobs it ran (by the index its worker owns), its rate over the node's window,
    and the device UUIDs its jobs reported (one per GPU, a different one on each)."""
    found: dict[str, dict] = {}
    for s in sorted(judged, key=lambda s: (len(s.gpu_index), s.gpu_index)):
        row = found.setdefault(s.gpu_index, {"jobs": 0, "per_minute": None, "uuids": []})
        row["jobs"] += 1
        if s.gpu_uuid and s.gpu_uuid not in row["uuids"]:
            row["uuids"].append(s.gpu_uuid)
    for row in found.values():
        row["per_minute"] = row["jobs"] / window_s * 60 if window_s else None
    return found


def overlapping(judged: list) -> list[list[int]]:
    """Pairs of jobs that one GPU ran at once: [start, end] intervals (claim to result) that overlap on the
    same GPU index. Never any: a GPU has one worker, of one process, that runs one job at a time."""
    found = []
    for gpu in {s.gpu_index for s in judged}:
        jobs = sorted((s for s in judged if s.gpu_index == gpu), key=lambda s: s.started_at)
        found += [[a.pk, b.pk] for a, b in zip(jobs, jobs[1:], strict=False) if b.started_at < a.finished_at]
    return found


def gaps(judged: list) -> list[float]:
    """Each worker's idle time from one result to its next job's start (the claim, the wait for a warm
    child, the broker): what the GPU does not spend on jobs."""
    by_worker: dict[str, list] = {}
    for s in judged:
        by_worker.setdefault(s.worker, []).append(s)
    found = []
    for jobs in by_worker.values():
        jobs.sort(key=lambda s: s.started_at)
        found += [(b.started_at - a.finished_at).total_seconds() for a, b in zip(jobs, jobs[1:], strict=False)]
    return found


def fairness(lone_id: int, ids: list[int]) -> dict:
    """How many jobs the lone reader's submission waited for: GPU starts between its compile and its own
    start. Also its place in the start order, and where FIFO would have put it."""
    from apps.submissions.models import Submission

    lone = Submission.objects.get(pk=lone_id)
    started = list(Submission.objects.filter(pk__in=ids).exclude(started_at=None).order_by("started_at"))
    others = [s for s in Submission.objects.filter(pk__in=ids).exclude(pk=lone_id) if s.compiled_at]
    waited = sum(1 for s in started if s.pk != lone_id and lone.compiled_at <= s.started_at < lone.started_at)
    # The check means something only when others were waiting for the GPU as the lone one became ready.
    backlog = sum(
        1 for s in others if s.compiled_at <= lone.compiled_at and (s.started_at or lone.compiled_at) > lone.compiled_at
    )
    return {
        "jobs_waited": waited,
        "backlog_when_compiled": backlog,
        "start_position": [s.pk for s in started].index(lone_id) + 1,
        "fifo_position": ids.index(lone_id) + 1,
    }


def headline_ms(result: dict) -> float | None:
    benchmarks = result.get("benchmarks") or []
    return benchmarks[-1]["candidate"]["median_ms"] if benchmarks else None


def count(values) -> dict:
    counts: dict = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def spread(values: list) -> dict | None:
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    at = lambda q: values[min(len(values) - 1, round(q * (len(values) - 1)))]  # noqa: E731
    return {
        "n": len(values),
        "p50": statistics.median(values),
        "p95": at(0.95),
        "max": values[-1],
        "mean": statistics.fmean(values),
    }


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def pct_diff(a: float | None, b: float | None) -> float | None:
    return 100 * abs(a - b) / b if a is not None and b else None


# ---- 5. checks and report ------------------------------------------------------------------------------


def checks(report: dict, args) -> dict[str, bool]:
    """The pipeline's own checks always; the issue's GPU targets only on a GPU."""
    found: dict[str, bool] = {}
    burst, alone, hidden = report.get("burst"), report.get("alone"), report.get("hidden")
    for name, phase in (("burst", burst), ("alone", alone)):
        if phase:
            found[f"{name}: every submission finished"] = sum(phase["statuses"].values()) == phase["submissions"]
    if burst:
        found["fairness: the lone reader waited at most one job"] = burst["fairness"]["jobs_waited"] <= 1
        restarts = 1 if burst.get("kill") else 0  # a worker started again measures again
        found["burst: one ceilings measurement per GPU worker"] = (
            len(burst["ceilings_measured_at"]) <= report["gpus"] + restarts
        )
    if burst and alone:
        found["burst and alone: the same verdicts"] = set(burst["verdicts"]) == set(alone["verdicts"])
        found["burst and alone: kernel median within 1%"] = within(burst["kernel_median_ms"], alone["kernel_median_ms"])
    pools = [("burst", burst, report["gpus"])]
    pools += [(f"scaling, {r['gpus']} GPUs", r["burst"], r["gpus"]) for r in report.get("scaling", [])]
    for name, phase, gpus in pools:
        if phase:
            pool_checks(found, name, phase, gpus)
    kill = (burst or {}).get("kill")
    if kill:
        found["kill: the killed job was judged again once"] = kill["status"] == "passed" and kill["attempts"] == 2
        found["kill: one result recorded per job"] = burst["results_recorded"] == burst["submissions"]
        found["kill: the supervisor started the killed worker again"] = kill["restarted"]
    interference = report.get("interference")
    if interference:
        found["interference: jobs on the first GPU while all others were busy"] = (
            interference["jobs_with_others_busy"] > 0
        )
        pool_checks(found, "interference burst", interference["burst"], report["gpus"])
    if hidden:
        found["hidden: the spares beside the job change the median by < 1%"] = (
            hidden["diff_pct"] is not None and hidden["diff_pct"] < TOLERANCE_PCT
        )
    if not args.cpu_standin:
        for row in report.get("scaling", [])[1:]:
            found[f"scaling: {row['gpus']} GPUs at least {SCALING_EFFICIENCY} x linear"] = (
                row["efficiency"] is not None and row["efficiency"] >= SCALING_EFFICIENCY
            )
        if interference:
            found["interference: the first GPU's median within 1% with every other GPU busy"] = (
                interference["diff_pct"] is not None and interference["diff_pct"] < TOLERANCE_PCT
            )
        if burst and burst["per_minute_per_gpu"] is not None:
            found[f"burst: at least {BURST_PER_MINUTE_PER_GPU} submissions a minute per GPU"] = (
                burst["per_minute_per_gpu"] >= BURST_PER_MINUTE_PER_GPU
            )
        if alone:
            found["alone: submit-to-result p50 under 3 s"] = alone["submit_to_result_s"]["p50"] < 3.0
    return found


def pool_checks(found: dict[str, bool], name: str, phase: dict, gpus: int) -> None:
    """One GPU, one job at a time, its own UUID; and a burst of at least two jobs per GPU reaches every GPU."""
    found[f"{name}: every submission finished"] = sum(phase["statuses"].values()) == phase["submissions"]
    found[f"{name}: no GPU ran two jobs at once"] = not phase["overlapping_jobs"]
    uuids = [u for row in phase["per_gpu"].values() for u in row["uuids"]]
    if uuids:
        found[f"{name}: one device UUID per GPU, a different one on each"] = (
            len(uuids) == len(set(uuids)) == len(phase["per_gpu"])
        )
    if phase["submissions"] >= 2 * gpus:
        found[f"{name}: every GPU judged part of it"] = len(phase["per_gpu"]) == gpus


def within(a: dict | None, b: dict | None) -> bool:
    return bool(a and b) and pct_diff(a["p50"], b["p50"]) < TOLERANCE_PCT


def print_report(report: dict) -> None:
    print(f"\njudge_load: {report['problem']} on {report['gpus']} GPU worker(s)", end="")
    print(" (CPU stand-in: made-up GPU figures, real pipeline)" if report["cpu_standin"] else "")
    if report.get("hidden"):
        h = report["hidden"]
        print(
            f"hidden-from-timing: median {fmt(h['median_ms_successor_importing'])} ms with the spares beside, "
            f"{fmt(h['median_ms_nothing_beside'])} ms with nothing beside the job: {fmt(h['diff_pct'])}% apart "
            f"({h['jobs_per_mode']} jobs each); control, a warm-up on the GPU beside each job: "
            f"{fmt(h['median_ms_control_warm_up_beside'])} ms, {fmt(h['control_diff_pct'])}% apart"
        )
        if f := h.get("spares"):
            print(
                f"spares (pool of {f['size']}): {f['set_up']} set up, RSS {fmt(f['rss_mib_set_up'])} MiB and GPU "
                f"{fmt(f['gpu_mib_set_up'])} MiB each; {f['imported']} imported only, "
                f"RSS {fmt(f['rss_mib_imported'])} MiB each"
            )
    rows = [
        ("submit to result, s", "submit_to_result_s"),
        ("compile stage (queue + NVRTC), s", "compile_stage_s"),
        ("NVRTC in its child, ms", "nvrtc_ms"),
        ("GPU queue wait, s", "gpu_queue_wait_s"),
        ("GPU stage (claim to result), s", "gpu_stage_s"),
        ("GPU job in the child, ms", "gpu_job_ms"),
        ("job's wait for its child's setup, ms", "setup_wait_ms"),
        ("its timed rounds' wait for setups, ms", "lock_wait_ms"),
        *((f"  stage: {stage.replace('_', ' ')}, ms", f"{stage}_ms") for stage in JOB_STAGES),
        ("timed rounds per job (all checked)", "timed_rounds_n"),
        ("worker idle between jobs, s", "between_jobs_s"),
        ("kernel's timed median, ms", "kernel_median_ms"),
    ]
    phases = [(name, report[name]) for name in ("alone", "burst") if report.get(name)]
    if phases:
        print(f"{'':36}" + "".join(f"{name + ' p50 / p95':>26}" for name, _ in phases))
        rate = "".join(f"{fmt(p['per_minute_per_gpu']):>26}" for _, p in phases)
        print(f"{'submissions per minute per GPU':36}{rate}")
        waits = "".join(
            f"{fmt(p['setup_wait_ms_mean'])} / {p['jobs_waiting_for_setup']} jobs".rjust(26) for _, p in phases
        )
        print(f"{'setup wait: mean ms / jobs > 1 ms':36}{waits}")
        profiles = "".join(
            f"{p['profiles']['recorded']} ({p['profiles']['copied']} copied, "
            f"{fmt(p['profiles']['made_gpu_seconds'])} GPU-s)".rjust(26)
            for _, p in phases
        )
        print(f"{'profiles recorded (issue 43)':36}{profiles}")
        for label, key in rows:
            cells = [f"{fmt(p[key]['p50'])} / {fmt(p[key]['p95'])}" if p.get(key) else "-" for _, p in phases]
            print(f"{label:36}" + "".join(f"{cell:>26}" for cell in cells))
        # The rate is one job per (mean GPU stage + mean idle): where a burst's minute goes.
        cycle = [
            f"{fmt(p['gpu_stage_s']['mean'])} + {fmt(p['between_jobs_s']['mean'])}"
            if p.get("gpu_stage_s") and p.get("between_jobs_s")
            else "-"
            for _, p in phases
        ]
        print(f"{'a job: mean GPU stage + mean idle, s':36}" + "".join(f"{cell:>26}" for cell in cycle))
    for name, phase in phases:
        print(f"{name}: statuses {phase['statuses']}, verdicts {phase['verdicts']}")
        for job in phase.get("not_passed") or []:
            print(f"  submission {job['id']}: {job['verdict']}: {job['message']} {job['error']}".rstrip())
    if report.get("burst"):
        f = report["burst"]["fairness"]
        print(
            f"fairness: the lone reader's submission waited {f['jobs_waited']} job(s) with "
            f"{f['backlog_when_compiled']} others waiting for the GPU as it was compiled; started "
            f"{f['start_position']}th (FIFO: {f['fifo_position']}th)"
        )
        print_gpus("burst", report["burst"])
        if report["burst"].get("kill"):
            k = report["burst"]["kill"]
            print(
                f"kill: submission {k['submission']} {k['status']} after {k['attempts']} attempts, judged again on "
                f"GPU {k['judged_again_on_gpu']}; results recorded {report['burst']['results_recorded']} for "
                f"{report['burst']['submissions']} submissions; killed worker started again: {k['restarted']}"
            )
    if report.get("scaling"):
        print(f"{'GPUs':>5}{'submissions':>13}{'per minute, node':>18}{'per GPU':>10}{'x linear':>10}  per GPU index")
        for row in report["scaling"]:
            b = row["burst"]
            shares = ", ".join(f"{gpu}: {fmt(g['per_minute'])}" for gpu, g in b["per_gpu"].items())
            print(
                f"{row['gpus']:>5}{b['submissions']:>13}{fmt(row['per_minute_node']):>18}"
                f"{fmt(b['per_minute_per_gpu']):>10}{fmt(row['efficiency']):>10}  {shares}"
            )
    if report.get("interference"):
        i = report["interference"]
        print(
            f"interference on GPU {i['gpu']}: kernel median {fmt(i['median_ms_alone'])} ms alone ({i['jobs_alone']} "
            f"jobs, the other GPUs idle), {fmt(i['median_ms_others_busy'])} ms with every other GPU judging "
            f"({i['jobs_with_others_busy']} jobs): {fmt(i['diff_pct'])}% apart"
        )
        print_gpus("interference burst", i["burst"])
    for name, ok in report["checks"].items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")


def print_gpus(name: str, phase: dict) -> None:
    print(
        f"{name}: {fmt(phase['per_minute_node'])} submissions per minute on the node; "
        f"jobs at once on one GPU: {len(phase['overlapping_jobs'])}"
    )
    for gpu, row in phase["per_gpu"].items():
        print(f"  GPU {gpu}: {row['jobs']} jobs, {fmt(row['per_minute'])} per minute, {', '.join(row['uuids']) or '-'}")


def fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


if __name__ == "__main__":
    sys.exit(main())

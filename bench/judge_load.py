"""The GPU pool measured through the real pipeline (issue 18): submissions created by the site's service from
many readers, compiled by a Celery compile worker, judged by one Celery GPU worker per GPU.

    .venv/bin/python bench/judge_load.py                     # on a GPU node: every figure the issue asks for
    .venv/bin/python bench/judge_load.py --cpu-standin --submissions 12 --readers 4 --heavy 4 --alone 2 \\
        --hidden-check 2                                     # anywhere: a smoke test of the pipeline's logic

Everything lives in a fresh folder (VAR_DIR), removed at the end unless --keep: the embedded defaults of
`make run` (SQLite, Celery's file-system broker polled every 50 ms), the mini book with an exercise of
--problem on its free capsule, and --readers + 2 readers. The kernel is kernels/problems/<problem>/example.cu.
With --use-env-services the database and broker come from DATABASE_URL and CELERY_BROKER_URL instead
(give it a database of its own: the tool migrates it and adds its readers and submissions).

In order:
1. hidden-from-timing (--hidden-check N, no Celery): the same compiled kernel judged by a GpuJudge whose
   successor imports during each job (as the GPU worker runs) and by one whose successor starts only after
   the job, in blocks of N jobs, ABAB; the medians of the kernel's median time must agree within 1%.
2. The workers: a compile worker (-c --compile-concurrency) and one GPU worker per GPU (--gpus; all that
   nvidia-smi lists), as `manage.py gpu_worker` starts them; one submission per GPU is judged first so that
   each worker's first child (which measures the ceilings) is done.
3. alone (--alone N): one submission at a time on the idle pool, each after the previous one's result and a
   pause (--idle-s) that lets the successor child warm up: submit-to-result on an idle pool, and the
   reference for the burst's verdicts and timings.
4. burst (--submissions S): the heavy reader's --heavy submissions, then one of the lone reader, then the
   rest spread over the other readers, created as fast as the service takes them. Prints submissions per
   minute per GPU (first GPU start to last result), submit-to-result p50/p95, the compile stage (queue and
   NVRTC), the GPU queue wait, GPU time per job, and the fairness check: how many jobs started between the
   lone reader's submission being compiled and its own start (at most 1).
5. The comparison: the same verdicts in the burst as alone, and the median of the kernel's timed median
   within 1%.

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
    gpus = args.gpus or (1 if args.cpu_standin else count_gpus())
    var_dir = Path(tempfile.mkdtemp(prefix="judge-load-"))
    env = tool_env(var_dir, args)
    os.environ.update(env)
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"):
        if name not in env:
            os.environ.pop(name, None)
    report: dict = {"gpus": gpus, "cpu_standin": args.cpu_standin, "problem": args.problem, "checks": {}}
    processes = Processes(var_dir, env)
    try:
        if args.hidden_check:
            report["hidden"] = hidden_check(args)
        if args.alone or args.submissions:
            exercise, readers = prepare(args)
            processes.start_workers(gpus, args.compile_concurrency)
            report["first_jobs"] = phase_first_jobs(exercise, readers["alone"], gpus, args.timeout)
        if args.alone:
            report["alone"] = phase_alone(exercise, readers["alone"], args.alone, args.idle_s, args.timeout)
        if args.submissions:
            report["burst"] = phase_burst(exercise, readers, args, gpus)
        report["checks"] = checks(report, args)
    finally:
        processes.stop_all()
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
    parser.add_argument("--gpus", type=int, default=0, help="GPU workers (default: every GPU nvidia-smi lists)")
    parser.add_argument("--compile-concurrency", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a phase may take")
    parser.add_argument("--use-env-services", action="store_true", help="DATABASE_URL and CELERY_BROKER_URL")
    parser.add_argument("--json", help="also write the summary here")
    parser.add_argument("--keep", action="store_true", help="keep the folder (logs of the workers)")
    return parser.parse_args()


def count_gpus() -> int:
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    return sum(1 for line in listing.stdout.splitlines() if line.startswith("GPU "))


def tool_env(var_dir: Path, args) -> dict[str, str]:
    services = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")
    env = {k: v for k, v in os.environ.items() if args.use_env_services or k not in services}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.dev",
        VAR_DIR=str(var_dir),
        DEBUG="false",  # no query log kept in memory by every process
        SUBMISSIONS_PER_HOUR="100000",  # the burst is the point, not the readers' quota
        SUBMISSIONS_PER_DAY="100000",
        CELERY_BROKER_POLLING_INTERVAL_S="0.05",
        LOG_FORMAT="text",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    if args.cpu_standin:
        env.update(SUBMISSIONS_JUDGE_JOB=f"{STANDIN}:judge_job", SUBMISSIONS_JUDGE_WARM_UP=f"{STANDIN}:warm_up")
        env.update(STANDIN_JOB_S=str(args.standin_job_s))
    return env


# ---- 1. hidden from timing ---------------------------------------------------------------------------


def hidden_check(args) -> dict:
    """The kernel's median with the successor importing during each job (as the GPU worker runs), and with
    nothing beside the job; then, as a control that the comparison can see a disturbance, with a full
    warm-up on the GPU (context, ceilings measured, problems rehearsed) started just as each job starts."""
    from kernels import GpuJudge, JudgeOptions, compile_submission

    compiled = compile_submission(example_source(args.problem), args.problem)
    if not compiled.ok:
        raise RuntimeError(f"the example does not compile: {compiled.log}")
    kw = {"job": f"{STANDIN}:judge_job", "warm_up": f"{STANDIN}:warm_up"} if args.cpu_standin else {}
    medians: dict[str, list[float]] = {"warm_ahead": [], "alone": [], "control": []}
    verdicts = set()
    for mode in ("warm_ahead", "alone", "warm_ahead", "alone", "control"):
        with GpuJudge(warm=True, warm_ahead=mode == "warm_ahead", **kw) as judge:
            error = judge.start()
            if error:
                raise RuntimeError(f"the judge did not start: {error}")
            for _ in range(min(args.hidden_check, CONTROL_JOBS) if mode == "control" else args.hidden_check):
                with warm_up_beside(kw.get("warm_up"), on=mode == "control"):
                    result = judge.judge(compiled, JudgeOptions())
                verdicts.add(result.verdict.value)
                if result.benchmarks:
                    medians[mode].append(result.benchmarks[-1].candidate.median_ms)
    with_successor, without, control = (median(medians[m]) for m in ("warm_ahead", "alone", "control"))
    return {
        "jobs_per_mode": 2 * args.hidden_check,
        "verdicts": sorted(verdicts),
        "median_ms_successor_importing": with_successor,
        "median_ms_nothing_beside": without,
        "diff_pct": pct_diff(with_successor, without),
        "median_ms_control_warm_up_beside": control,
        "control_diff_pct": pct_diff(control, without),
    }


@contextlib.contextmanager
def warm_up_beside(warm_up: str | None, on: bool):
    """A child of its own whose imports are done beforehand and whose setup (the GPU part of a warm-up)
    is released as the block starts: what the GPU worker must never do while a job is timed."""
    if not on:
        yield
        return
    from kernels import judge, sandbox

    other = sandbox.Worker(setup=warm_up or judge.WARM_UP)
    other.prepare_successor()
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
    """The Celery workers, each in a session of its own (ended with its children), logging to a file."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.folder, self.env, self.running = folder, env, {}

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

    def start_workers(self, gpus: int, compile_concurrency: int) -> None:
        from apps.submissions.management.commands.gpu_worker import worker_command

        celery = [sys.executable, "-m", "celery", "-A", "config", "worker"]
        quiet = ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        self.start(
            "compile",
            [*celery, "-Q", "default,compile", "-c", str(compile_concurrency), "-n", "compile@%h"]
            + ["--prefetch-multiplier", "1", "-l", "INFO", *quiet],
        )
        for gpu in range(gpus):
            command = worker_command(str(gpu), "h200", "INFO")  # as `manage.py gpu_worker --gpu N` runs it
            self.start(
                f"gpu{gpu}", [sys.executable, "-m", *command, *quiet], CUDA_VISIBLE_DEVICES=str(gpu), GPU_KIND="h200"
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        for name, process in self.running.items():
            while " ready." not in self.log(name):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"worker {name} did not start:\n{self.log(name)[-3000:]}")
                time.sleep(0.1)

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def stop_all(self) -> None:
        for process in self.running.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGQUIT)  # cold shutdown: nothing is left to finish
        for process in self.running.values():
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # the judge's children, if any outlived the worker
        self.running = {}


# ---- 3, 4. the phases ----------------------------------------------------------------------------------


def submit(user, exercise) -> int:
    from apps.submissions.services import submission_create

    return submission_create(user=user, exercise=exercise, source=exercise.starter_source, filename="example.cu").pk


def wait_finished(ids: list[int], timeout_s: float) -> None:
    from apps.submissions.models import Submission

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if Submission.objects.filter(pk__in=ids, status__in=FINISHED).count() == len(ids):
            return
        time.sleep(0.05)
    raise RuntimeError(f"not every submission finished within {timeout_s:g} s")


def phase_first_jobs(exercise, user, gpus: int, timeout_s: float) -> dict:
    """One job per GPU worker at once: each worker's first child (ceilings measured, every problem
    rehearsed) has then served, and its successor is warm."""
    ids = [submit(user, exercise) for _ in range(gpus)]
    wait_finished(ids, timeout_s)
    return figures(ids, gpus)


def phase_alone(exercise, user, n: int, idle_s: float, timeout_s: float) -> dict:
    ids = []
    for _ in range(n):
        time.sleep(idle_s)
        ids.append(submit(user, exercise))
        wait_finished(ids[-1:], timeout_s)
    return figures(ids, gpus=1)


def phase_burst(exercise, readers, args, gpus: int) -> dict:
    heavy = [submit(readers["heavy"], exercise) for _ in range(args.heavy)]
    lone = submit(readers["lone"], exercise)
    rest = [
        submit(readers["others"][n % len(readers["others"])], exercise)
        for n in range(max(args.submissions - args.heavy - 1, 0))
    ]
    ids = [*heavy, lone, *rest]
    wait_finished(ids, args.timeout)
    burst = figures(ids, gpus)
    burst["fairness"] = fairness(lone, ids)
    return burst


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
    return {
        "submissions": len(rows),
        "statuses": dict(sorted(count(s.status for s in rows).items())),
        "verdicts": dict(sorted(count(s.verdict for s in rows).items())),
        "per_minute_per_gpu": len(judged) / window_s * 60 / gpus if window_s else None,
        "submit_to_result_s": spread([seconds(s.created_at, s.finished_at) for s in rows if s.finished_at]),
        "compile_stage_s": spread([seconds(s.created_at, s.compiled_at) for s in rows if s.compiled_at]),
        "nvrtc_ms": spread([(s.compiled or {}).get("compile_time_ms") for s in rows if s.compiled]),
        "gpu_queue_wait_s": spread([seconds(s.compiled_at, s.started_at) for s in judged if s.compiled_at]),
        "gpu_stage_s": spread([seconds(s.started_at, s.finished_at) for s in judged]),
        "gpu_job_ms": spread([r.get("wall_time_ms") for r in results]),
        "setup_wait_ms": spread([r.get("setup_wait_ms") for r in results]),
        "between_jobs_s": spread(gaps(judged)),
        "kernel_median_ms": spread([headline_ms(r) for r in results]),
        "ceilings_measured_at": sorted({(r.get("ceilings") or {}).get("measured_at") or 0 for r in results}),
    }


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
    return {"n": len(values), "p50": statistics.median(values), "p95": at(0.95), "max": values[-1]}


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
        found["burst: one ceilings measurement per GPU worker"] = len(burst["ceilings_measured_at"]) <= report["gpus"]
    if burst and alone:
        found["burst and alone: the same verdicts"] = set(burst["verdicts"]) == set(alone["verdicts"])
        found["burst and alone: kernel median within 1%"] = within(burst["kernel_median_ms"], alone["kernel_median_ms"])
    if hidden:
        found["hidden: successor importing beside the job changes the median by < 1%"] = (
            hidden["diff_pct"] is not None and hidden["diff_pct"] < TOLERANCE_PCT
        )
    if not args.cpu_standin:
        if burst and burst["per_minute_per_gpu"] is not None:
            found["burst: at least 60 submissions a minute per GPU"] = burst["per_minute_per_gpu"] >= 60
        if alone:
            found["alone: submit-to-result p50 under 3 s"] = alone["submit_to_result_s"]["p50"] < 3.0
    return found


def within(a: dict | None, b: dict | None) -> bool:
    return bool(a and b) and pct_diff(a["p50"], b["p50"]) < TOLERANCE_PCT


def print_report(report: dict) -> None:
    print(f"\njudge_load: {report['problem']} on {report['gpus']} GPU worker(s)", end="")
    print(" (CPU stand-in: made-up GPU figures, real pipeline)" if report["cpu_standin"] else "")
    if report.get("hidden"):
        h = report["hidden"]
        print(
            f"hidden-from-timing: median {fmt(h['median_ms_successor_importing'])} ms with the successor importing, "
            f"{fmt(h['median_ms_nothing_beside'])} ms with nothing beside the job: {fmt(h['diff_pct'])}% apart "
            f"({h['jobs_per_mode']} jobs each); control, a warm-up on the GPU beside each job: "
            f"{fmt(h['median_ms_control_warm_up_beside'])} ms, {fmt(h['control_diff_pct'])}% apart"
        )
    rows = [
        ("submit to result, s", "submit_to_result_s"),
        ("compile stage (queue + NVRTC), s", "compile_stage_s"),
        ("NVRTC in its child, ms", "nvrtc_ms"),
        ("GPU queue wait, s", "gpu_queue_wait_s"),
        ("GPU stage (claim to result), s", "gpu_stage_s"),
        ("GPU job in the child, ms", "gpu_job_ms"),
        ("job's wait for its child's setup, ms", "setup_wait_ms"),
        ("worker idle between jobs, s", "between_jobs_s"),
        ("kernel's timed median, ms", "kernel_median_ms"),
    ]
    phases = [(name, report[name]) for name in ("alone", "burst") if report.get(name)]
    if phases:
        print(f"{'':36}" + "".join(f"{name + ' p50 / p95':>26}" for name, _ in phases))
        rate = "".join(f"{fmt(p['per_minute_per_gpu']):>26}" for _, p in phases)
        print(f"{'submissions per minute per GPU':36}{rate}")
        for label, key in rows:
            cells = [f"{fmt(p[key]['p50'])} / {fmt(p[key]['p95'])}" if p.get(key) else "-" for _, p in phases]
            print(f"{label:36}" + "".join(f"{cell:>26}" for cell in cells))
    for name, phase in phases:
        print(f"{name}: statuses {phase['statuses']}, verdicts {phase['verdicts']}")
    if report.get("burst"):
        f = report["burst"]["fairness"]
        print(
            f"fairness: the lone reader's submission waited {f['jobs_waited']} job(s) with "
            f"{f['backlog_when_compiled']} others waiting for the GPU as it was compiled; started "
            f"{f['start_position']}th (FIFO: {f['fifo_position']}th)"
        )
    for name, ok in report["checks"].items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")


def fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


if __name__ == "__main__":
    sys.exit(main())

"""A burst of submissions on the embedded defaults (issue 20): SQLite, the file cache and Celery's file-system
broker, as `make run` has them, with the site's processes as they run there: the web server (runserver), a
worker of 2 processes on `default,compile` with beat (the sweeper), and a GPU worker whose judge is the CPU
stand-in (tests/submissions/standin_judge.py: there is no GPU here; it answers from the real cubin and plan).

    .venv/bin/python -m tests.submissions.burst --submissions 50 --readers 5

Every reader signs in over HTTP and posts their share of kernels to the exercise's submit form at once (one
in five does not compile: its verdict comes from the compile worker; the rest pass on the stand-in). The
script then waits until every submission has a final status and prints counts and timings; it exits 1 when
a POST failed, a submission is missing, or one is still in progress at --timeout.

`--lock-s S` holds SQLite's write lock for S seconds from the first accepted post on, and `--worker-busy-timeout-ms`
makes the workers give up waiting for it sooner than the site's 20 s: their tasks then meet "database is
locked" for real, and must retry (config.celery.SiteTask) rather than lose a submission.
Everything lives in a fresh folder (VAR_DIR), removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
MINI_BOOK = ROOT / "tests" / "catalog" / "books" / "mini"
STANDIN = "tests.submissions.standin_judge"
PASSWORD = "burst-password-0123"
NAIVE = (ROOT / "kernels" / "reference" / "01_naive.cu").read_text()
BROKEN = NAIVE.replace("float acc = 0.0f;", "float acc = 0.0f\n")  # a missing semicolon: a compile error
READY_TIMEOUT_S = 90
FINISHED = {"passed", "failed", "error", "timed_out"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def embedded_env(var_dir: Path) -> dict[str, str]:
    """The environment of `make run` on a fresh machine: no DATABASE_URL, REDIS_URL or CELERY_BROKER_URL."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.dev",
        VAR_DIR=str(var_dir),
        SUBMISSIONS_PER_HOUR="1000",  # the burst is the point, not the readers' quota
        SUBMISSIONS_PER_DAY="1000",
        LOG_FORMAT="text",
        PYTHONUNBUFFERED="1",
    )
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def prepare(readers: int) -> tuple[str, list[str]]:
    """Schema, the mini book with an exercise on its free capsule, and readers with verified addresses."""
    import django

    django.setup()
    from allauth.account.models import EmailAddress
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from apps.catalog.models import Book
    from apps.catalog.services import book_import
    from apps.submissions.models import Exercise

    call_command("migrate", verbosity=0)
    book_import(folder=MINI_BOOK)
    capsule = Book.objects.get(slug="mini-book").capsules.get(number=1)
    Exercise.objects.create(
        capsule=capsule,
        problem="sgemm",
        title="Write an SGEMM",
        statement="Multiply.",
        starter_source=NAIVE,
        starter_name="01_naive.cu",
    )
    emails = []
    for n in range(readers):
        email = f"reader{n}@burst.example.org"
        user = get_user_model().objects.create_user(email=email, password=PASSWORD)
        EmailAddress.objects.create(user=user, email=email, verified=True, primary=True)
        emails.append(email)
    return capsule.slug, emails


class Processes:
    """The site's processes, each in a session of its own (stopped with its children), logging to a file."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.folder, self.env = folder, env
        self.running: dict[str, subprocess.Popen] = {}
        self.ready_marks: dict[str, str] = {}  # what each prints once it serves

    def start(self, name: str, command: list[str], ready: str, **env: str) -> None:
        with (self.folder / f"{name}.log").open("wb") as log:  # the child keeps its own copy of the file
            self.running[name] = subprocess.Popen(
                command, cwd=ROOT, env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.ready_marks[name] = ready

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        for name, process in self.running.items():
            while self.ready_marks[name] not in self.log(name):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not start:\n{self.log(name)[-3000:]}")
                time.sleep(0.1)

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def stop_all(self) -> None:
        """Once every submission is judged nothing is left to finish: Celery's cold shutdown (SIGQUIT) and
        the end of runserver, then SIGKILL for whatever of them and their children remains."""
        for name, process in self.running.items():
            process.send_signal(signal.SIGTERM if name == "web" else signal.SIGQUIT)
        for process in self.running.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=2)  # (the worker with beat takes seconds to stop even so)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def start_site(processes: Processes, port: int, compile_processes: int, worker_busy_timeout_ms: int | None) -> None:
    celery = [sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "INFO"]
    worker_env = {"SQLITE_BUSY_TIMEOUT_MS": str(worker_busy_timeout_ms)} if worker_busy_timeout_ms else {}
    processes.start(
        "web", [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"], "Quit the server"
    )
    processes.start(
        "compile",
        [*celery, "--beat", "-Q", "default,compile", "-c", str(compile_processes), "-n", "compile@%h"],
        " ready.",
        **worker_env,
    )
    processes.start(
        "gpu",
        [*celery, "-Q", "gpu.h200", "-c", "1", "--prefetch-multiplier", "1", "-n", "gpu0@%h"],
        " ready.",
        GPU_KIND="h200",
        SUBMISSIONS_JUDGE_JOB=f"{STANDIN}:judge_job",
        SUBMISSIONS_JUDGE_WARM_UP=f"{STANDIN}:warm_up",
        **worker_env,
    )
    processes.wait_ready()


def csrf_token(session: requests.Session, url: str) -> str:
    page = session.get(url, timeout=60)
    page.raise_for_status()
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def reader_posts(base: str, email: str, slug: str, sources: list[str], posts: list[dict]) -> None:
    """Sign in over HTTP, then post each source to the submit form as a browser without JavaScript does."""
    session = requests.Session()
    session.headers["Referer"] = base + "/"
    signed_in = session.post(
        f"{base}/accounts/login/",
        {"login": email, "password": PASSWORD, "csrfmiddlewaretoken": csrf_token(session, f"{base}/accounts/login/")},
        timeout=60,
    )
    assert signed_in.ok and "sessionid" in session.cookies, f"{email} could not sign in ({signed_in.status_code})"
    token = csrf_token(session, f"{base}/capsules/{slug}/")
    for source in sources:
        started = time.monotonic()
        try:
            answer = session.post(
                f"{base}/capsules/{slug}/submit/",
                {"source": source, "csrfmiddlewaretoken": token},
                allow_redirects=False,
                timeout=120,
            )
            found = re.search(r"#submission-([0-9a-f-]{36})", answer.headers.get("Location", ""))
            outcome = {"status": answer.status_code, "public_id": found and found.group(1)}
        except requests.RequestException as error:
            outcome = {"status": None, "public_id": None, "error": str(error)}
        posts.append({**outcome, "seconds": time.monotonic() - started, "broken": source is BROKEN})


def hold_write_lock(database: Path, seconds: float) -> None:
    """What another writer does to every other one: SQLite's single write lock, held."""
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    time.sleep(seconds)
    connection.execute("COMMIT")
    connection.close()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] if ordered else float("nan")


def run(args) -> dict:
    var_dir = Path(args.var_dir or tempfile.mkdtemp(prefix="burst-"))
    env = embedded_env(var_dir)
    os.environ.clear()
    os.environ.update(env)  # this process is the one that prepares the data and watches the database
    clock = {"began": time.monotonic()}
    slug, emails = prepare(args.readers)
    clock["prepared"] = time.monotonic()

    from django.utils import timezone

    from apps.submissions.models import Submission

    port = free_port()
    processes = Processes(var_dir, env)
    try:
        start_site(processes, port, args.compile_processes, args.worker_busy_timeout_ms)
        clock["site_up"] = time.monotonic()
        shares = [[] for _ in emails]
        for n in range(args.submissions):
            shares[n % len(emails)].append(BROKEN if n % 5 == 4 else NAIVE)
        posts: list[dict] = []
        threads = [
            threading.Thread(target=reader_posts, args=(f"http://127.0.0.1:{port}", email, slug, share, posts))
            for email, share in zip(emails, shares, strict=True)
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        if args.lock_s:
            # From the first accepted post on, while the rest are posted and the first ones compiled: workers meet
            # the lock for certain (held after the whole burst, a fast compile node could finish before it), and
            # the web's posts wait for it (their busy timeout is far longer).
            while not posts and any(thread.is_alive() for thread in threads):
                time.sleep(0.01)
            hold_write_lock(var_dir / "db.sqlite3", args.lock_s)
        for thread in threads:
            thread.join()
        posted_s = time.monotonic() - started
        deadline = started + args.timeout
        while time.monotonic() < deadline:
            if not Submission.objects.exclude(status__in=FINISHED).exists():
                break
            time.sleep(0.5)
        wall_s = time.monotonic() - started
        submissions = list(Submission.objects.all())
    finally:
        clock["stopping"] = time.monotonic()
        processes.stop_all()
        clock["stopped"] = time.monotonic()
    logs = processes.log("compile") + processes.log("gpu")
    accepted = {p["public_id"] for p in posts if p["status"] == 302 and p["public_id"]}
    stored = {str(s.public_id) for s in submissions}
    to_verdict = [(s.finished_at - s.created_at).total_seconds() for s in submissions if s.finished_at]
    summary = {
        "submissions": args.submissions,
        "readers": args.readers,
        "compile_processes": args.compile_processes,
        "posts": {str(k): sum(p["status"] == k for p in posts) for k in sorted({p["status"] for p in posts}, key=str)},
        "post_s": {"p50": statistics.median(p["seconds"] for p in posts), "max": max(p["seconds"] for p in posts)},
        "posting_s": posted_s,
        "lost": len(accepted - stored),
        "unexpected": len(stored - accepted),
        "statuses": {k: sum(s.status == k for s in submissions) for k in sorted({s.status for s in submissions})},
        "verdicts": {k: sum(s.verdict == k for s in submissions) for k in sorted({s.verdict for s in submissions})},
        "stuck": sum(s.status not in FINISHED for s in submissions),
        "gpu_attempts": {
            str(k): sum(s.attempts == k for s in submissions) for k in sorted({s.attempts for s in submissions})
        },
        "sweeps": sum(s.sweeps for s in submissions),
        "to_verdict_s": {
            "p50": percentile(to_verdict, 0.5),
            "p95": percentile(to_verdict, 0.95),
            "max": max(to_verdict, default=float("nan")),
        },
        "wall_s": wall_s,
        "setup_s": {
            "schema_and_data": clock["prepared"] - clock["began"],
            "processes_start": clock.get("site_up", clock["prepared"]) - clock["prepared"],
            "processes_stop": clock["stopped"] - clock["stopping"],
        },
        "task_retries": len(re.findall(r"retry: Retry in", logs)),
        "database_locked_in_logs": logs.count("database is locked"),
        "lock_s": args.lock_s,
        "worker_busy_timeout_ms": args.worker_busy_timeout_ms,
        "finished_at": timezone.now().isoformat(timespec="seconds"),
    }
    if not args.keep:
        shutil.rmtree(var_dir, ignore_errors=True)
    else:
        summary["var_dir"] = str(var_dir)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=50)
    parser.add_argument("--readers", type=int, default=5)
    parser.add_argument("--compile-processes", type=int, default=2, help="the compile worker's -c")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds from the first POST")
    parser.add_argument("--lock-s", type=float, default=0.0, help="hold SQLite's write lock this long after posting")
    parser.add_argument("--worker-busy-timeout-ms", type=int, help="SQLITE_BUSY_TIMEOUT_MS of the workers")
    parser.add_argument("--var-dir", help="the folder of the database, cache and broker (default: a fresh one)")
    parser.add_argument("--keep", action="store_true", help="keep the folder (logs, database) afterwards")
    args = parser.parse_args(argv)
    summary = run(args)
    for key, value in summary.items():
        print(f"{key:>24}: {json.dumps(value) if isinstance(value, dict) else value}")
    print("BURST " + json.dumps(summary))
    ok = summary["posts"] == {"302": args.submissions} and not summary["lost"] and not summary["stuck"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

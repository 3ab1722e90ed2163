"""Real Celery worker processes for pipeline tests: `celery -A config worker`, on the test Redis broker and
the running test's database, the GPU stage judged by the CPU stand-in (tests/submissions/standin_judge.py)
inside the judge's real sandbox.

    pytestmark = pytest.mark.usefixtures("celery_workers")          # or take it as an argument:
    def test_x(celery_workers, transactional_db): ...             # (or live_server)

`celery_workers` (module-scoped) starts one `compile` worker (`-Q default,compile`) and one GPU worker
(`-Q gpu.h200 -c 1 --prefetch-multiplier 1`, GPU_KIND=h200), waits until both are ready and stops them at
the end of the module. Tests must commit what the workers should see: use `transactional_db` or
`live_server`, not `db`. `celery_workers.start("gpu-b")` adds a worker, `.kill("gpu-a")` SIGKILLs one with
its children, `.log("gpu-a")` returns what it printed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STANDIN = "tests.submissions.standin_judge"
READY_TIMEOUT_S = 60
# Short heartbeats and a short broker visibility timeout, so that a killed worker's job comes back within
# seconds (in production: 15 s heartbeats, 30 min visibility). Jobs in tests must stay shorter than it.
TEST_ENV = {
    "GPU_WORKER_HEARTBEAT_S": "1",
    "GPU_WORKER_ONLINE_WINDOW_S": "3",
    "CELERY_BROKER_VISIBILITY_TIMEOUT_S": "5",
    "CELERY_BROKER_RESTORE_INTERVAL_S": "1",
    "DB_CONN_MAX_AGE": "0",
    "SUBMISSIONS_JUDGE_JOB": f"{STANDIN}:judge_job",
    "SUBMISSIONS_JUDGE_WARM_UP": f"{STANDIN}:warm_up",
    "STANDIN_SLOW_S": "2.5",
    # These workers judge; a passed judgement's profile (issue 43) would run after the test has flushed the database
    # (tests/submissions/test_profile_runs.py tests the profile step and its queue on the real broker).
    "PROFILES_ENABLED": "false",
    # The stand-in's own settings, which the GPU workers' supervisor hands on only when named (config/judge_env.py).
    "JUDGE_WORKER_EXTRA_ENV": "STANDIN_SLOW_S,STANDIN_JOB_S",
    # ... and which the judge passes to its sandboxed children only when named too (kernels/confine.py).
    "KERNELS_CHILD_VARIABLES": "STANDIN_SLOW_S,STANDIN_JOB_S",
    "LOG_FORMAT": "text",
    "LOG_LEVEL": "INFO",
    "PYTHONUNBUFFERED": "1",
}


def database_url(settings_dict: dict) -> str:
    user, password = settings_dict.get("USER") or "", settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host, port = settings_dict.get("HOST") or "127.0.0.1", settings_dict.get("PORT") or "5432"
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


def workers_env(redis_url: str, broker_url: str, *, leave_out: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment of Celery worker processes on this run's test database: this process's variables (less
    PYTEST_XDIST_WORKER: the URLs given are this xdist worker's own already, config/settings/test.py, and the
    processes would shift them again), TEST_ENV, and the Redis and broker URLs given."""
    from django.db import connections

    return {
        **{name: value for name, value in os.environ.items() if name not in ("PYTEST_XDIST_WORKER", *leave_out)},
        **TEST_ENV,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(connections["default"].settings_dict),
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": broker_url,
    }


class CeleryWorkers:
    def __init__(self, env: dict[str, str]):
        self.env = env
        self.processes: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}
        self.folder = Path(tempfile.mkdtemp(prefix="celery-workers-"))

    def start(self, name: str, queues: str = "gpu.h200", wait: bool = True, concurrency: int = 1) -> None:
        log = self.folder / f"{name}.log"
        env = dict(self.env)
        if queues.startswith("gpu."):
            env["GPU_KIND"] = queues.split(",")[0][4:]
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            queues,
            "-c",
            str(concurrency),
            "-n",
            f"{name}@%h",
            "--prefetch-multiplier",
            "1",
            "-l",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        # A session of its own, so that kill() reaches the pool child and the judge's sandboxed child too.
        self.processes[name] = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True
        )
        self.logs[name] = log
        if wait:
            self.wait_ready(name)

    def wait_ready(self, name: str) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if " ready." in self.log(name):
                return
            if self.processes[name].poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"celery worker {name} did not start:\n{self.log(name)[-4000:]}")

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace") if name in self.logs else ""

    def node(self, name: str) -> str:
        """The node name as the worker reports it (name@host)."""
        import socket

        return f"{name}@{socket.gethostname()}"

    def kill(self, name: str) -> None:
        """SIGKILL the worker, its pool process and the judge's child: a machine lost mid-job."""
        process = self.processes.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self, name: str) -> None:
        process = self.processes.pop(name)
        try:
            os.killpg(process.pid, signal.SIGTERM)  # warm shutdown: the worker finishes and deregisters
            process.wait(timeout=15)
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self.processes.values():  # all at once: each warm shutdown takes a second or two
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for name in list(self.processes):
            self.stop(name)


def purge_broker(broker_url: str) -> None:
    """Start from an empty broker: no message (or unacknowledged job) of an earlier run may be redelivered."""
    import redis

    redis.Redis.from_url(broker_url).flushdb()


@pytest.fixture(scope="module")
def celery_workers(django_db_setup, django_db_blocker):
    # Per module, not per session: left running, the compile worker (which also serves `default`) would
    # take later modules' tasks off the shared broker.
    from django.conf import settings

    broker = settings.CELERY_BROKER_URL
    assert broker.startswith("redis://"), "the pipeline tests need the real Redis broker"
    purge_broker(broker)
    workers = CeleryWorkers(workers_env(settings.REDIS_URL, broker))
    try:
        workers.start("compile", queues="default,compile", wait=False)
        workers.start("gpu-a", wait=False)
        workers.wait_ready("compile")
        workers.wait_ready("gpu-a")
        yield workers
    finally:
        workers.stop_all()
        purge_broker(broker)


def wait_for(submission, done=lambda s: s.is_finished, timeout_s=30.0):
    """Poll the row until `done` holds (by default: a final status), or fail saying where it stopped."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        submission.refresh_from_db()
        if done(submission):
            return submission
        time.sleep(0.1)
    raise AssertionError(f"submission still {submission.status} after {timeout_s} s ({submission.message})")

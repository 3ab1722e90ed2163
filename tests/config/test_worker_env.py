"""Issue 41: each worker kind holds only the settings it uses. A reader's kernel source reaches the compile and GPU
workers, so whatever their environment holds, a hostile source may read.

Each worker is started the way operators start it, from a deployment whose .env is full of (fake) secrets: the
compose service's command with the environment compose gives its container (read from docker-compose.yml), and the
GPU node's supervisor (`manage.py gpu_worker --gpus`). What each started process holds is read from
/proc/<pid>/environ: the judge workers hold none of the site's secrets, the `default` worker holds what it needs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from config.judge_env import SITE_SECRETS
from tests.submissions.workers import STANDIN, database_url
from tests.test_compose import COMPOSE_FILE, command_of, container_environment, interpolate

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 60
# A Redis database of this module's own: no other test's queue is consumed by these workers.
BROKER_URL = "redis://127.0.0.1:6379/14"

FAKE_SECRETS = {
    "SECRET_KEY": "fake-secret-key-" + "k3rn3l" * 8,
    "SECRET_KEY_FALLBACKS": "fake-old-secret-key-" + "0ld" * 10,
    "STRIPE_SECRET_KEY": "sk_test_fake_" + "s7r1p3" * 6,
    "STRIPE_WEBHOOK_SECRET": "whsec_fake_" + "w3bh00k" * 5,
    "EMAIL_HOST_PASSWORD": "fake-mail-password-" + "m41l" * 5,
    "GITHUB_CLIENT_SECRET": "fake-github-secret-" + "g1thub" * 5,
}


@pytest.fixture
def dotenv(transactional_db) -> dict[str, str]:
    """An operator's .env, filled in: every secret, and the stores pointed at this run's test services."""
    from django.db import connections

    return {
        **FAKE_SECRETS,
        "ALLOWED_HOSTS": "kernel.example.com",
        "POSTGRES_PASSWORD": "fake-postgres-password",
        "REDIS_PASSWORD": "fake-redis-password",
        "DATABASE_URL": database_url(connections["default"].settings_dict),
        "REDIS_URL": "redis://127.0.0.1:6379/13",
        "CELERY_BROKER_URL": BROKER_URL,
        "EMAIL_HOST": "smtp.example.com",
        "STRIPE_PRICE_MONTHLY": "price_fake_monthly",
        "SENTRY_DSN": "https://fakepublickey@sentry.invalid/1",
        "LOG_FORMAT": "text",
        "GPU_WARM_SPARES": "0",
        "SECURE_SSL_REDIRECT": "false",
    }


def image_environment(tmp_path: Path) -> dict[str, str]:
    """What the image itself sets (Dockerfile ENV), for this checkout."""
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "VAR_DIR": str(tmp_path)}


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode()
    return dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)


@contextlib.contextmanager
def started(command: list[str], env: dict[str, str], log: Path, ready_when: str, pid_file: Path | None = None):
    """The process running `command`, once its log says `ready_when`; yields the pid of the worker itself (read from
    `pid_file` when a supervisor starts it). Ends the process and everything it started."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while ready_when not in log.read_text(errors="replace"):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")[-4000:]
            time.sleep(0.1)
        yield int(pid_file.read_text()) if pid_file else process.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def compose_service(name: str, dotenv: dict[str, str], tmp_path: Path, overrides: dict[str, str] | None = None):
    """Service `name` as `docker compose up` starts it, with one pool process (a container's concurrency is moot
    here) and `overrides` on its environment (as an override file would add)."""
    raw = yaml.safe_load(COMPOSE_FILE.read_text())
    argv = command_of(interpolate(raw, values=dotenv)["services"][name])
    assert argv[0] == "celery", argv
    if "worker" in argv:
        argv = [*argv, "--concurrency", "1", "--without-gossip", "--without-mingle"]
    env = {**image_environment(tmp_path), **container_environment(raw, name, dotenv), **(overrides or {})}
    ready = " ready." if "worker" in argv else "beat: Starting"
    return started([sys.executable, "-m", *argv], env, tmp_path / f"{name}.log", ready)


def held_secrets(environ: dict[str, str]) -> set[str]:
    """The fake secrets found anywhere in a process's environment, under any name."""
    blob = "\0".join(f"{key}={value}" for key, value in environ.items())
    return {name for name, value in FAKE_SECRETS.items() if value in blob}


@pytest.mark.slow
def test_the_default_worker_holds_the_secrets_its_work_needs(dotenv, tmp_path):
    with compose_service("worker", dotenv, tmp_path) as pid:
        environ = environ_of(pid)
    assert held_secrets(environ) == set(FAKE_SECRETS)  # Stripe events, mail, signed links: all from .env
    assert environ["DJANGO_SETTINGS_MODULE"] == "config.settings.prod"


@pytest.mark.slow
def test_the_compile_worker_holds_no_secret_of_the_site(dotenv, tmp_path):
    with compose_service("compile-worker", dotenv, tmp_path) as pid:
        environ = environ_of(pid)
    assert held_secrets(environ) == set()
    assert not set(environ) & set(SITE_SECRETS)
    assert environ["DJANGO_SETTINGS_MODULE"] == "config.settings.judge_worker"
    assert environ["DATABASE_URL"] == dotenv["DATABASE_URL"] and environ["CELERY_BROKER_URL"] == BROKER_URL
    assert environ["SENTRY_DSN"] == dotenv["SENTRY_DSN"]  # a send-only key: the judge's errors are reported


@pytest.mark.slow
def test_the_gpu_worker_container_holds_no_secret_of_the_site(dotenv, tmp_path):
    standin = {"SUBMISSIONS_JUDGE_JOB": f"{STANDIN}:judge_job", "SUBMISSIONS_JUDGE_WARM_UP": f"{STANDIN}:warm_up"}
    with compose_service("gpu-worker", dotenv, tmp_path, overrides=standin) as pid:
        environ = environ_of(pid)
    assert held_secrets(environ) == set()
    assert not set(environ) & set(SITE_SECRETS)
    assert environ["DJANGO_SETTINGS_MODULE"] == "config.settings.judge_worker"
    assert environ["CUDA_VISIBLE_DEVICES"] == "0" and environ["GPU_KIND"] == "h200"


@pytest.mark.slow
def test_beat_holds_what_production_settings_require_and_nothing_from_the_env_file(dotenv, tmp_path):
    with compose_service("beat", dotenv, tmp_path) as pid:
        environ = environ_of(pid)
    assert held_secrets(environ) == {"SECRET_KEY"}


@pytest.mark.slow
def test_the_gpu_node_supervisor_hands_its_workers_no_secret(dotenv, tmp_path):
    """`manage.py gpu_worker --gpus` started from a shell that holds every secret (development settings, which
    allow that): its worker holds none of them."""
    env = {
        **os.environ,
        **dotenv,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "SUBMISSIONS_JUDGE_JOB": f"{STANDIN}:judge_job",
        "SUBMISSIONS_JUDGE_WARM_UP": f"{STANDIN}:warm_up",
    }
    env.pop("PYTEST_XDIST_WORKER", None)  # the URLs above are this run's own already (config/settings/test.py)
    command = [sys.executable, "manage.py", "gpu_worker", "--gpus", "0", "--kind", "h200", "--log-dir", str(tmp_path)]
    with started(command, env, tmp_path / "supervisor.log", "started (pid", tmp_path / "gpu0.pid") as pid:
        environ = environ_of(pid)
    assert held_secrets(environ) == set()
    assert not set(environ) & set(SITE_SECRETS)
    assert environ["CUDA_VISIBLE_DEVICES"] == environ["GPU_ID"] == "0"


@pytest.mark.parametrize("secret", SITE_SECRETS)
def test_judge_worker_settings_refuse_to_start_beside_a_site_secret(secret):
    env = {
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "config.settings.judge_worker",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/kernel_engineering",
        "CELERY_BROKER_URL": BROKER_URL,
        secret: "redis://:leaked@127.0.0.1:6379/0" if secret == "REDIS_URL" else FAKE_SECRETS.get(secret, "x"),
    }
    load_settings = "from django.conf import settings; settings.DEBUG"
    run = subprocess.run(
        [sys.executable, "-c", load_settings], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode != 0
    assert "ImproperlyConfigured" in run.stderr and f"sets {secret}" in run.stderr


def test_judge_worker_settings_start_without_any_secret():
    env = {
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "config.settings.judge_worker",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/kernel_engineering",
        "CELERY_BROKER_URL": BROKER_URL,
    }
    run = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("settings_module", ["config.settings.prod", "config.settings.judge_worker"])
def test_the_gpu_node_supervisor_refuses_to_run_beside_the_site_secrets(settings_module, dotenv):
    env = {**os.environ, **dotenv, "DJANGO_SETTINGS_MODULE": settings_module}
    run = subprocess.run(
        [sys.executable, "manage.py", "gpu_worker", "--gpus", "0", "--print"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0 and "must not hold the site's secrets" in run.stderr

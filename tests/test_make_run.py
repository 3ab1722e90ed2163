"""`make run` on its embedded defaults: no PostgreSQL, no Redis, no DATABASE_URL.

Runs the real command in a scratch data folder and talks to it over HTTP, then sends a
task through the file-system broker to the worker that `make run` started."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # installs if needed, migrates, imports the demo book, starts two servers

ROOT = Path(__file__).resolve().parents[1]
# Also the Stripe and site settings: `make run` must choose test mode and its own address by itself.
SERVICE_VARS = (
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "STRIPE_SECRET_KEY",
    "STRIPE_WEBHOOK_SECRET",
    "STRIPE_PRICE_MONTHLY",
    "STRIPE_PRICE_YEARLY",
    "STRIPE_API_BASE",
    "STRIPE_TEST_MODE",
    "SITE_URL",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def _wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
def dev_site(tmp_path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    # The Stripe stand-in of test mode listens on a port of its own (by default PORT + 1, which may be taken).
    env.update(VAR_DIR=str(tmp_path), PORT=str(port), STRIPE_TEST_PORT=str(_free_port()), PYTHON=sys.executable)
    log_path = tmp_path / "make-run.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield f"http://127.0.0.1:{port}", env, log_path
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        # make is gone; what is left of its group (a Celery worker stuck in its warm shutdown) goes too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def _reachable(url: str) -> bool:
    try:
        return _get(url) == 200
    except OSError:
        return False


def test_make_run_serves_the_site_and_runs_tasks_with_no_services(dev_site):
    base_url, env, log_path = dev_site
    _wait_for(lambda: _reachable(base_url + "/health/"), 120, "the development server")

    for path in ("/", "/accounts/login/", "/admin/login/"):
        assert _get(base_url + path) == 200, path
    log = log_path.read_text()
    assert f"http://127.0.0.1:{base_url.rsplit(':', 1)[1]}/" in log
    assert "reader@example.com" in log and "kernel-demo-pass" in log
    assert (Path(env["VAR_DIR"]) / "db.sqlite3").exists()  # SQLite, as no DATABASE_URL is set

    # No Stripe key: subscriptions in test mode, the plans priced by the stand-in that make run started.
    def priced() -> bool:
        try:
            text = _text(base_url + "/pricing/")
        except OSError:  # runserver restarting after a source file changed
            return False
        return "€12" in text and "€120" in text and "Sign up to subscribe" in text  # anonymous: no plan form

    _wait_for(priced, 60, "the pricing page to show the stand-in's prices")
    pricing = _text(base_url + "/pricing/")
    assert 'id="test-mode-banner"' in pricing and "STRIPE_" not in pricing
    assert "TEST MODE" in log_path.read_text()

    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from apps.accounts.tasks import clear_expired_sessions; clear_expired_sessions.delay()",
        ],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings.dev"},  # as `make run` exports it (manage.py: prod)
        check=True,
        timeout=60,
    )
    _wait_for(
        lambda: "clear_expired_sessions" in log_path.read_text() and "succeeded" in log_path.read_text(),
        60,
        "the worker to run the task",
    )


def test_ctrl_c_stops_everything_cleanly(tmp_path):
    """Issue 29: Ctrl-C ended `make run` with "Segmentation fault" (its trap's `kill 0` re-triggered itself until
    bash overflowed its stack) and left the Celery worker behind. Ctrl-C is SIGINT to the whole foreground process
    group, as a terminal sends it."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    env.update(VAR_DIR=str(tmp_path), PORT=str(port), STRIPE_TEST_PORT=str(_free_port()), PYTHON=sys.executable)
    log_path = tmp_path / "make-run.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # A terminal's foreground job gets SIGINT; pytest's children may have inherited it ignored.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    try:
        _wait_for(lambda: _reachable(f"http://127.0.0.1:{port}/health/"), 120, "the development server")
        time.sleep(2)  # the worker and the Stripe stand-in are up too
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=60)

        def group_gone() -> bool:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return True
            return False

        _wait_for(group_gone, 15, "every process of make run to exit")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    log = log_path.read_text()
    assert "Segmentation fault" not in log and "Error" not in log.split("Quit the server with CONTROL-C.")[-1], log[
        -3000:
    ]
    assert log.rstrip().endswith("Stopped."), log[-3000:]
    assert log.count("Warm shutdown") <= 2  # one SIGINT from the terminal, one SIGTERM from make run: no storm

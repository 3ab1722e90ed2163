"""The web outlives a database restart (issue 20): a PostgreSQL of the test's own crashes and comes back
under a running web server (gunicorn, the production server, with persistent connections); the next
requests succeed without restarting the web, and what was written before is there."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.outages.servers import PostgresServer, free_port
from tests.submissions.workers import database_url

# The marker has pytest-django create the test database, whose schema the own server takes.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "kernel_engineering"
PASSWORD = "restart-proof-password-1"


@pytest.fixture(scope="module")
def own_postgres(django_db_setup, django_db_blocker):
    from django.db import connections

    server = PostgresServer()
    try:
        server.init()
        server.start()
        with django_db_blocker.unblock():
            server.load_schema_of(database_url(connections["default"].settings_dict), DATABASE)
        # The one row the site needs that migrations write (django.contrib.sites' SITE_ID = 1).
        server.psql(DATABASE, "INSERT INTO django_site (id, domain, name) VALUES (1, 'testserver', 'testserver')")
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def web(own_postgres, tmp_path_factory):
    """gunicorn with one worker process and one thread: one persistent connection (DB_CONN_MAX_AGE), the
    one a database restart breaks."""
    from django.conf import settings

    port = free_port()
    log = tmp_path_factory.mktemp("web") / "gunicorn.log"
    env = {
        **{name: value for name, value in os.environ.items() if name != "PYTEST_XDIST_WORKER"},
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": own_postgres.url(DATABASE),
        "DB_CONN_MAX_AGE": "600",
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
    }
    # The production server and its configuration, on this machine's loopback address only.
    command = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--config", "docker/gunicorn.conf.py"]
    command += ["--bind", f"127.0.0.1:{port}"]
    env.update(WEB_CONCURRENCY="1", GUNICORN_THREADS="1")
    output = log.open("wb")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"{base}/", timeout=5)
            break
        except requests.ConnectionError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not start:\n{log.read_text()[-3000:]}") from None
            time.sleep(0.2)
    process.base, process.log = base, log
    yield process
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    output.close()


def csrf_of(session: requests.Session, url: str) -> str:
    page = session.get(url, timeout=10)
    assert page.status_code == 200, page.text[:500]
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def sign_up(session: requests.Session, base: str, email: str) -> requests.Response:
    token = csrf_of(session, f"{base}/accounts/signup/")
    return session.post(
        f"{base}/accounts/signup/",
        {
            "email": email,
            "name": "Restart Proof",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "csrfmiddlewaretoken": token,
        },
        headers={"Referer": f"{base}/"},
        timeout=10,
    )


def test_after_a_database_crash_and_restart_the_next_requests_succeed_and_nothing_written_is_lost(own_postgres, web):
    reader = requests.Session()
    signed_up = sign_up(reader, web.base, "survivor@example.org")
    assert signed_up.status_code == 200 and "verify your email address" in signed_up.text.lower(), signed_up.text[:500]
    assert reader.get(f"{web.base}/pricing/", timeout=10).status_code == 200

    own_postgres.restart(mode="immediate")  # a crash: no checkpoint, the write-ahead log is replayed

    # The web process kept its connection from before: the very next requests must not fail with it.
    assert reader.get(f"{web.base}/pricing/", timeout=10).status_code == 200
    assert reader.get(f"{web.base}/health/", timeout=10).json()["checks"]["database"] == "ok"
    again = sign_up(requests.Session(), web.base, "survivor@example.org")
    assert again.status_code == 200 and "already registered" in again.text  # the account written before
    visitor = requests.Session()
    token = csrf_of(visitor, f"{web.base}/accounts/login/")
    signed_in = visitor.post(
        f"{web.base}/accounts/login/",
        {"login": "survivor@example.org", "password": PASSWORD, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{web.base}/"},
        timeout=10,
    )
    # The password was checked against the row written before the crash; the address is not yet verified.
    assert signed_in.status_code == 200 and "verify your email address" in signed_in.text.lower()

    assert (
        own_postgres.psql(DATABASE, "SELECT count(*) FROM accounts_user WHERE email = 'survivor@example.org'") == "1\n"
    )
    assert web.poll() is None and web.log.read_text().count("Booting worker") == 1  # never restarted

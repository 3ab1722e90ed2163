"""The load benchmark (bench/load.py) still runs end to end: its own database and gunicorn with production settings,
every page it measures answered 200, and a few seconds of simulated readers with no 5xx and no failed connection.
A couple of seconds of load measure nothing (the targets are not checked here); README's Benchmarks has figures."""

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from django.conf import settings

pytestmark = pytest.mark.slow  # migrates and imports the demo book into a database of its own, starts gunicorn

ROOT = Path(__file__).resolve().parents[1]


def test_the_load_benchmark_runs_end_to_end(tmp_path):
    database = settings.DATABASES["default"]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    database_url = (
        f"postgres://{database['USER']}:{database['PASSWORD']}@{database['HOST']}:{database['PORT']}"
        f"/kernel_bench_ci_{worker}"
    )
    figures = tmp_path / "figures.json"
    command = [
        sys.executable,
        "bench/load.py",
        "--workers=2",  # the suite's other processes share the 2 cores: a smoke run, not a measurement
        "--rounds=1",
        "--page-seconds=1",
        "--warmup-seconds=0.3",
        "--readers=20",
        "--mixed-seconds=4",
        "--think-s=0.5",
        "--no-targets",
        f"--database-url={database_url}",
        f"--redis-url={settings.REDIS_URL}",  # this test process's own Redis database, emptied by every test anyway
        f"--json={figures}",
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads(figures.read_text())
    assert set(results["pages"]) == {"static file", "landing", "free capsule", "subscriber's capsule"}
    for name, page in results["pages"].items():
        assert page["requests"] > 0 and set(page["statuses"]) == {"200"}, (name, page)
    mixed = results["mixed"]
    assert {"browse", "read"} <= set(mixed), mixed
    assert sum(action["requests"] for action in mixed.values()) > 20
    assert not any(action["server_errors"] or action["failures"] for action in mixed.values()), mixed
    assert "5xx answers: 0; failed connections: 0" in done.stdout
    with psycopg.connect(urlsplit(database_url)._replace(path="/postgres").geturl()) as connection:
        left = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [f"kernel_bench_ci_{worker}"])
        assert left.fetchone() is None, "the benchmark left its database behind"


def test_the_page_cost_benchmark_measures_each_page_and_leaves_no_database():
    database = settings.DATABASES["default"]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"kernel_page_cost_ci_{worker}"
    database_url = f"postgres://{database['USER']}:{database['PASSWORD']}@{database['HOST']}:{database['PORT']}/{name}"
    command = [sys.executable, "bench/page_cost.py", "--requests=3", "--repeats=1", f"--database-url={database_url}"]
    done = subprocess.run(
        [*command, f"--redis-url={settings.REDIS_URL}"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {line[:30].strip(): line[30:].split() for line in done.stdout.splitlines()[1:] if line.strip()}
    assert set(rows) == {"landing, anonymous", "free capsule, anonymous", "locked capsule, subscriber"}
    assert all(float(row[0]) > 0 for row in rows.values())
    # The signed-in page reads its session, its reader (whose stored access window decides what it may read: no
    # subscription table is read) and the progress (and, once a second, the public version); the capsule comes from
    # the process's memory. The anonymous pages come from the page cache.
    tables = {name.rstrip(",") for name in rows["locked capsule, subscriber"][2:]}
    assert {"django_session", "accounts_user"} <= tables, tables
    assert not tables & {"subscriptions_subscription", "subscriptions_complimentaryaccess", "catalog_capsule"}, tables
    assert rows["landing, anonymous"][1] in ("0:", "1:")  # the version, once a second
    with psycopg.connect(urlsplit(database_url)._replace(path="/postgres").geturl()) as connection:
        left = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        assert left.fetchone() is None, "the benchmark left its database behind"


def test_the_gpu_database_benchmark_times_each_step_and_leaves_no_database():
    database = settings.DATABASES["default"]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"kernel_gpu_db_cost_ci_{worker}"
    database_url = f"postgres://{database['USER']}:{database['PASSWORD']}@{database['HOST']}:{database['PORT']}/{name}"
    command = [sys.executable, "bench/gpu_db_cost.py", "--readers=30", "--history=5", "--jobs=4"]
    done = subprocess.run(
        [*command, f"--database-url={database_url}", f"--redis-url={settings.REDIS_URL}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()[2:] if line.strip()}
    assert set(rows) == {"claim", "load", "record"}, done.stdout
    assert all(float(row[0]) > 0 for row in rows.values())
    # The record neither reads nor writes the cubin back: its SQL is a few KB, not the compiled JSON's 130 KB.
    assert int(rows["record"][3]) < 20_000, done.stdout
    with psycopg.connect(urlsplit(database_url)._replace(path="/postgres").geturl()) as connection:
        left = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        assert left.fetchone() is None, "the benchmark left its database behind"

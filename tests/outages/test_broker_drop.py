"""The Celery broker (Redis) dropped while a worker holds an unacknowledged message (issue 28): kombu 5.7's Redis
transport raised AttributeError ('NoneType' object has no attribute 'hostname') from a channel of the closed
connection, and the worker and beat exited. config/kombu_redis.py turns that into a connection error; `make run`
restarts a worker that exits anyway (bin/keep-running)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import redis
from kombu import Connection

from config import kombu_redis
from tests.outages.servers import RedisServer, own_redis  # noqa: F401  (the fixture)
from tests.submissions.workers import ROOT, workers_env


def test_a_channel_of_a_closed_connection_raises_a_connection_error_not_attribute_error(own_redis):
    assert kombu_redis.install()  # still applies to the installed kombu
    with Connection(own_redis.url(3)) as connection:
        channel = connection.channel()
        channel.client.ping()
        transport = connection.transport
    # What kombu leaves behind after it closed the connection under a channel (Connection._do_close_transport).
    assert transport.client is None
    channel.__dict__.pop("client", None)
    channel._pool = None
    with pytest.raises(redis.exceptions.ConnectionError) as raised:
        channel._connparams()
    assert isinstance(raised.value, channel.connection_errors)  # Celery reconnects on these


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_survives_the_broker_dropped_mid_task_and_the_task_finishes_once_it_is_back():
    server = RedisServer()
    server.start()
    folder = Path(tempfile.mkdtemp(prefix="broker-drop-"))
    env = {**workers_env(server.url(0), server.url(1)), "VAR_DIR": str(folder)}
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "default", "-c", "1", "-l", "INFO"]
    command += ["--include", "tests.outages.slow_task", "--beat", "-s", str(folder / "beat-schedule")]
    log = folder / "worker.log"
    worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log.read_text(errors="replace"):
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        with Connection(server.url(1)) as connection:
            connection.default_channel.client.ping()
            from tests.outages.slow_task import sleep_then_mark

            sleep_then_mark.apply_async(args=[str(folder), "slow", 4], queue="default", connection=connection)
        deadline = time.monotonic() + 30
        while "sleep_then_mark" not in log.read_text(errors="replace"):  # received: held unacknowledged
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.1)

        server.stop()  # the broker goes away mid-task, and comes back after the task ended
        time.sleep(6)
        assert worker.poll() is None, log.read_text()[-3000:]
        server.start()

        deadline = time.monotonic() + 60
        marks = folder / "marks"
        while not (marks.exists() and "Connected to redis" in log.read_text(errors="replace").split("lost")[-1]):
            assert worker.poll() is None, log.read_text()[-3000:]  # neither the worker nor its beat exited
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        assert "slow" in marks.read_text().split()
        time.sleep(2)
        # (Gossip's restart may log an AttributeError of its own, which Celery handles: not this one.)
        assert worker.poll() is None and "attribute 'hostname'" not in log.read_text(errors="replace")
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        server.close()


def test_keep_running_starts_a_command_that_exits_again(tmp_path):
    # `make run` runs its Celery worker under bin/keep-running: a worker that exits is started again.
    counter = tmp_path / "runs"
    process = subprocess.Popen(
        [str(ROOT / "bin" / "keep-running"), "sh", "-c", f"echo run >> {counter}; exit 3"],
        env={**os.environ, "KEEP_RUNNING_DELAY_S": "0.2"},
        start_new_session=True,
    )
    time.sleep(1.5)
    os.killpg(process.pid, 15)
    process.wait(timeout=10)
    assert len(counter.read_text().split()) >= 3

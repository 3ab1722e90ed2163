"""One GPU worker per GPU (issue 19), on the CPU: the documented start-up (`manage.py gpu_worker --gpus`,
docker/gpu-workers.sh) gives each worker its own CUDA_VISIBLE_DEVICES and node name; two stand-in GPU
workers (GPUs "0" and "1") share a burst, each job records the GPU that ran it, and no GPU ever runs two
jobs at once; a worker SIGKILLed mid-job is started again by the supervisor and its job is judged again
once while the other worker goes on.

The workers are real `celery -A config worker` processes started by the supervisor, on a Redis of this
module's own (tests/outages/servers.py) and the test database; their judge's sandboxed child runs the CPU
stand-in (standin_judge.py), which reports a made-up device UUID from the CUDA_VISIBLE_DEVICES it sees.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from django.db.models import Sum

from apps.submissions.models import GpuWorker, Submission
from apps.submissions.services import submission_create
from tests.factories import UserFactory
from tests.outages import broker_at
from tests.outages.servers import own_redis  # noqa: F401  (the fixture)
from tests.submissions.conftest import NAIVE, marked
from tests.submissions.workers import CeleryWorkers, workers_env

ROOT = Path(__file__).resolve().parents[2]
Status = Submission.Status
GPUS = ("0", "1")
QUIET = "--without-gossip --without-mingle --without-heartbeat"
FAKE_NVIDIA_SMI = """#!/bin/sh
# nvidia-smi -L of a node with four GPUs
for n in 0 1 2 3; do echo "GPU $n: NVIDIA H200 (UUID: GPU-0000000$n-1111-2222-3333-444444444444)"; done
"""


def node(gpu: str) -> str:
    return f"gpu{gpu}@{socket.gethostname()}"


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    """A node with four GPUs, as nvidia-smi -L lists them (this machine has none)."""
    program = tmp_path / "bin" / "nvidia-smi"
    program.parent.mkdir()
    program.write_text(FAKE_NVIDIA_SMI)
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{program.parent}:{os.environ['PATH']}")
    monkeypatch.delenv("GPU_IDS", raising=False)


def manage(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_startup_command_gives_every_listed_gpu_a_worker_of_its_own(fake_nvidia_smi):
    run = manage("gpu_worker", "--gpus", "all", "--print")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 4
    for gpu, line in enumerate(lines):
        assert line.startswith(f"CUDA_VISIBLE_DEVICES={gpu} CUDA_DEVICE_ORDER=PCI_BUS_ID GPU_ID={gpu} GPU_KIND=h200 ")
        assert f" -Q gpu.h200,gpu.h200.profile -c 1 -n gpu{gpu}@%h --prefetch-multiplier 1 " in line

    chosen = manage("gpu_worker", "--gpus", "all", "--print", env={**os.environ, "GPU_IDS": "1,3"}).stdout
    assert [line.split()[0] for line in chosen.splitlines()] == ["CUDA_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=3"]
    listed = manage("gpu_worker", "--gpus", "2,0", "--print").stdout
    assert [line.split()[0] for line in listed.splitlines()] == ["CUDA_VISIBLE_DEVICES=2", "CUDA_VISIBLE_DEVICES=0"]


def test_the_docker_script_starts_one_container_per_listed_gpu(fake_nvidia_smi):
    script = ["bash", str(ROOT / "docker" / "gpu-workers.sh")]
    run = subprocess.run([*script, "up"], env={**os.environ, "DRY_RUN": "1"}, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "docker compose -p kernel-engineering --profile gpu build gpu-worker",
        *(f"GPU_ID={n} docker compose -p kernel-engineering-gpu{n} --profile gpu up -d gpu-worker" for n in range(4)),
    ]
    chosen = subprocess.run([*script, "ps"], env={**os.environ, "DRY_RUN": "1", "GPU_IDS": "2 3"}, capture_output=True)
    assert chosen.stdout.decode().split("\n")[:2] == [
        "GPU_ID=2 docker compose -p kernel-engineering-gpu2 --profile gpu ps gpu-worker",
        "GPU_ID=3 docker compose -p kernel-engineering-gpu3 --profile gpu ps gpu-worker",
    ]


def test_without_a_gpu_listed_the_command_says_how_to_name_them(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi at all
    run = subprocess.run(
        [sys.executable, "manage.py", "gpu_worker", "--gpus", "all"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "GPU_IDS"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0 and "no GPU found" in run.stderr and "GPU_IDS" in run.stderr


# ---- Two stand-in GPU workers under the supervisor -----------------------------------------------------


class Pool:
    """`manage.py gpu_worker --gpus 0,1` (the supervisor) and a compile worker, on the module's Redis."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        self.folder = Path(tempfile.mkdtemp(prefix="gpu-pool-"))
        self.compile = CeleryWorkers(env)
        self.supervisor: subprocess.Popen | None = None

    def start(self) -> None:
        # Two compiles at once, as a compile node runs several: two jobs become ready together, one for each GPU,
        # however slowly this machine compiles (one at a time, the GPUs could take turns behind the compiles).
        self.compile.start("compile", queues="default,compile", wait=False, concurrency=2)
        command = [sys.executable, "manage.py", "gpu_worker", "--gpus", ",".join(GPUS), "--kind", "h200"]
        command += ["--log-dir", str(self.folder), "--celery-args", QUIET]
        with (self.folder / "supervisor.log").open("wb") as log:
            self.supervisor = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.compile.wait_ready("compile")
        for gpu in GPUS:
            self.wait_ready(gpu)

    def log(self, gpu: str) -> str:
        path = self.folder / f"gpu{gpu}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def supervisor_log(self) -> str:
        return (self.folder / "supervisor.log").read_text(errors="replace")

    def pid(self, gpu: str) -> int:
        return int((self.folder / f"gpu{gpu}.pid").read_text())

    def wait_ready(self, gpu: str, times: int = 1, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while self.log(gpu).count(" ready.") < times:
            if time.monotonic() > deadline or self.supervisor.poll() is not None:
                raise RuntimeError(f"gpu{gpu} not ready:\n{self.log(gpu)[-3000:]}\n{self.supervisor_log()[-2000:]}")
            time.sleep(0.1)

    def kill(self, gpu: str) -> None:
        """SIGKILL the worker of that GPU with its pool process and the judge's child: a worker lost mid-job."""
        os.killpg(self.pid(gpu), signal.SIGKILL)

    def stop(self) -> None:
        if self.supervisor is not None:
            self.supervisor.send_signal(signal.SIGTERM)  # it stops its workers (warm shutdown)
            try:
                self.supervisor.wait(timeout=45)
            except subprocess.TimeoutExpired:
                self.supervisor.kill()
                self.supervisor.wait(timeout=10)
            for gpu in GPUS:
                with contextlib.suppress(ProcessLookupError, FileNotFoundError, ValueError):
                    os.killpg(self.pid(gpu), signal.SIGKILL)
        self.compile.stop_all()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def pool(own_redis, django_db_setup):
    env = {
        # GPU_IDS left out: the pool is given its GPUs on the command line (--gpus 0,1).
        **workers_env(own_redis.url(0), own_redis.url(1), leave_out=("GPU_IDS",)),
        # Each job takes longer than a compile on a busy 2-core machine, so that both GPU workers are busy at
        # once; the broker gives a lost job back after 12 s, longer than any job here (slow ones: 5.5 s).
        "STANDIN_JOB_S": "3",
        "CELERY_BROKER_VISIBILITY_TIMEOUT_S": "12",
    }
    workers = Pool(env)
    try:
        workers.start()
        yield workers
    finally:
        workers.stop()


@pytest.fixture
def on_own_redis(settings, own_redis, pool):
    settings.CELERY_BROKER_URL = own_redis.url(1)
    with broker_at(own_redis.url(1)):
        yield pool


def wait_all(ids: list[int], timeout_s: float = 90.0) -> list[Submission]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rows = list(Submission.objects.filter(pk__in=ids).order_by("started_at"))
        if all(s.is_finished for s in rows):
            return rows
        time.sleep(0.1)
    raise AssertionError(f"not finished: {[(s.pk, s.status) for s in rows if not s.is_finished]}")


def overlapping(jobs: list[Submission]) -> list[tuple[int, int]]:
    """Pairs of jobs on one GPU whose [start, end] intervals overlap."""
    found = []
    for gpu in {s.gpu_index for s in jobs}:
        on_gpu = sorted((s for s in jobs if s.gpu_index == gpu), key=lambda s: s.started_at)
        found += [(a.pk, b.pk) for a, b in zip(on_gpu, on_gpu[1:], strict=False) if b.started_at < a.finished_at]
    return found


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_each_worker_owns_its_gpu_and_the_two_share_a_burst_without_overlap(on_own_redis, exercise, admin_client):
    for gpu in GPUS:  # the processes themselves, as the supervisor started them
        environ = dict(
            item.split("=", 1)
            for item in Path(f"/proc/{on_own_redis.pid(gpu)}/environ").read_text().split("\0")
            if item
        )
        assert environ["CUDA_VISIBLE_DEVICES"] == environ["GPU_ID"] == gpu
        assert environ["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
        deadline = time.monotonic() + 30  # it registers from its pool process, which may start after " ready."
        while not GpuWorker.objects.filter(hostname=node(gpu)).exists():
            assert time.monotonic() < deadline, f"gpu{gpu} did not register"
            time.sleep(0.1)
        registered = GpuWorker.objects.get(hostname=node(gpu))
        assert registered.gpu_index == gpu and registered.gpu_kind == "h200"

    readers = [UserFactory(email=f"pool{n}@example.org") for n in range(4)]
    ids = [submission_create(user=readers[n % 4], exercise=exercise, source=NAIVE).pk for n in range(6)]
    jobs = wait_all(ids)

    assert {s.status for s in jobs} == {Status.PASSED} and all(s.attempts == 1 for s in jobs)
    for s in jobs:  # the GPU its worker owns, and the UUID its judge's child saw (stand-in: from CUDA_VISIBLE_DEVICES)
        assert s.gpu_index in GPUS and s.worker == node(s.gpu_index)
        assert s.gpu_uuid == s.result["telemetry"]["gpu_uuid"] == f"GPU-standin-{s.gpu_index}"
    per_gpu = {gpu: sum(1 for s in jobs if s.gpu_index == gpu) for gpu in GPUS}
    assert all(per_gpu.values()), per_gpu  # both judged
    assert overlapping(jobs) == []
    # Both GPUs were busy at once at some point: the work was shared, not taken in turns.
    assert any(
        a.started_at < b.finished_at and b.started_at < a.finished_at
        for a in jobs
        for b in jobs
        if a.gpu_index == "0" and b.gpu_index == "1"
    )
    page = admin_client.get(f"/admin/submissions/submission/{jobs[0].pk}/change/").content.decode()
    assert jobs[0].gpu_uuid in page


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_job_is_restarted_and_its_job_judged_again_once(on_own_redis, exercise, reader):
    done_before = GpuWorker.objects.aggregate(n=Sum("jobs_done"))["n"] or 0
    slow = submission_create(user=reader, exercise=exercise, source=marked("sgemm_standin_slow"))
    deadline = time.monotonic() + 30
    while not (slow.status == Status.RUNNING and slow.gpu_index):
        assert time.monotonic() < deadline, slow.status
        time.sleep(0.05)
        slow.refresh_from_db()
    victim = slow.gpu_index
    survivor = next(gpu for gpu in GPUS if gpu != victim)
    old_pid = on_own_redis.pid(victim)
    on_own_redis.kill(victim)  # mid-job: the stand-in answers after 5.5 s

    # The other GPU goes on meanwhile.
    others = [submission_create(user=UserFactory(), exercise=exercise, source=NAIVE).pk for _ in range(3)]
    rows = wait_all([slow.pk, *others], timeout_s=90)
    slow = next(s for s in rows if s.pk == slow.pk)

    assert {s.status for s in rows} == {Status.PASSED}
    assert slow.attempts == 2  # judged again once: by the survivor (the broker gave the job back) or the restart
    assert slow.gpu_index in GPUS and slow.gpu_uuid == f"GPU-standin-{slow.gpu_index}"
    assert any(s.gpu_index == survivor for s in rows if s.pk in others)
    assert overlapping(rows) == []
    # Exactly one result per job: the workers recorded four, whoever ran what.
    assert (GpuWorker.objects.aggregate(n=Sum("jobs_done"))["n"] or 0) - done_before == 4
    # The supervisor started the killed worker again, as a new process that registered again.
    on_own_redis.wait_ready(victim, times=2)
    assert on_own_redis.pid(victim) != old_pid
    assert f"gpu{victim} exited (-9)" in on_own_redis.supervisor_log()

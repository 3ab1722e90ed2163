"""Outages of the queue's machinery, with real processes (issue 20): the site's Redis (cache and broker, a
server of this module's own) stopped and started again under a running compile worker and GPU worker, and a
compile worker SIGKILLed in the middle of a compile. The GPU stage is judged by the CPU stand-in
(tests/submissions/standin_judge.py); see tests/submissions/workers.py for the workers' settings (among
them a broker visibility timeout of 5 s, 30 min in production)."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.urls import reverse

from apps.reading.models import EpubBuild
from apps.submissions.models import GpuWorker, Submission
from apps.submissions.services import submission_create, submission_sweep
from config.settings.base import cache_from_env
from tests.outages import broker_at
from tests.outages.servers import own_redis  # noqa: F401  (the fixture)
from tests.submissions.conftest import NAIVE, make_exercise
from tests.submissions.workers import CeleryWorkers, wait_for, workers_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
Status = Submission.Status
GPU_WORKER = "gpu-a"


@pytest.fixture(scope="module")
def workers(own_redis, django_db_setup):
    """A compile worker (`default,compile`) and a GPU worker, on the module's Redis and the test database."""
    processes = CeleryWorkers(workers_env(own_redis.url(0), own_redis.url(1)))
    try:
        processes.start("compile", queues="default,compile", wait=False)
        processes.start(GPU_WORKER, wait=False)
        processes.wait_ready("compile")
        processes.wait_ready(GPU_WORKER)
        yield processes
    finally:
        processes.stop_all()


@pytest.fixture
def site_on_own_redis(settings, own_redis, workers):
    """This process (the web) with its cache and broker on the module's Redis, as the workers have them."""
    caches = cache_from_env(own_redis.url(0))  # the site's aliases, the shared one on this Redis
    caches["default"]["KEY_PREFIX"] = "ke-outage"
    settings.CACHES = caches
    settings.CELERY_BROKER_URL = own_redis.url(1)
    with broker_at(own_redis.url(1)):
        yield own_redis


@pytest.fixture
def exercise(mini_book):
    return make_exercise(mini_book.capsules.get(number=1))


def sign_in(client: Client, email: str, password: str):
    return client.post(reverse("account_login"), {"login": email, "password": password}, REMOTE_ADDR="203.0.113.9")


def test_with_redis_down_readers_sign_in_read_and_submit_and_everything_recovers_once_it_is_back(
    site_on_own_redis, exercise, reader, password
):
    capsule = exercise.capsule
    site_on_own_redis.stop()
    try:
        client = Client()
        assert sign_in(client, reader.email, password).status_code == 302
        assert client.session["_auth_user_id"] == str(reader.pk)
        for page in (reverse("pages:landing"), capsule.get_absolute_url(), reverse("subscriptions:pricing")):
            assert client.get(page).status_code == 200, page
        assert client.get("/share/book.png").status_code == 200  # drawn without the shared cache (issue 28)
        assert client.get("/sample.epub").status_code == 202  # "being prepared": its build waits for the broker
        answer = client.post(reverse("submissions:submit", args=[capsule.slug]), {"source": NAIVE})
        assert answer.status_code == 302
        submission = Submission.objects.get(user=reader)
        assert submission.status == Status.QUEUED  # stored, its compile job refused by the broker
    finally:
        site_on_own_redis.start()
    back = time.monotonic()

    # The sign-in limit counts again: after five failures in a row from one place, the next try is refused.
    limited = Client()
    for _ in range(5):
        assert "Too many failed" not in sign_in(limited, reader.email, "wrong-password-0").content.decode()
    assert "Too many failed login attempts" in sign_in(limited, reader.email, password).content.decode()

    # Beat runs the sweep every minute: it sends the job again, and the workers, which lost their broker
    # meanwhile, have reconnected by themselves and judge it, once.
    assert submission_sweep().requeued == [submission.pk]
    wait_for(submission, timeout_s=60)
    assert submission.status == Status.PASSED and submission.attempts == 1
    assert time.monotonic() - back < 60

    # The EPUB page's next poll sends the build the broker refused; the worker builds it, once.
    client.get("/epub/sample/status/", headers={"HX-Request": "true"})
    deadline = time.monotonic() + 60
    while not EpubBuild.objects.filter(edition="sample", status=EpubBuild.Status.READY).exists():
        assert time.monotonic() < deadline, list(EpubBuild.objects.values("status", "error"))
        time.sleep(0.2)
    assert client.get("/sample.epub").status_code == 200 and EpubBuild.objects.filter(edition="sample").count() == 1


SLOW_TO_COMPILE = """
__global__ void slow_compile(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {{
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {{
        float r[64];
        for (int i = 0; i < 64; ++i) r[i] = B[i * N + col];
{body}
        float acc = 0.0f;
        for (int i = 0; i < 64; ++i) acc += r[i];
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
    }}
}}
/* @plan
[[launch]]
kernel = "slow_compile"
grid = ["cdiv(N, 16)", "cdiv(M, 16)"]
block = [16, 16]
*/
"""


def slow_to_compile() -> str:
    """A kernel that NVRTC takes a second or two to compile (a thousand dependent FMAs over 64 registers):
    time enough to kill its compile worker in the middle. The stand-in passes it."""
    body = "\n".join(
        f"        r[{i % 64}] = fmaf(r[{i * 7 % 64}], A[row * K + {i % 97}], r[{(i * 13 + 5) % 64}]);"
        for i in range(1000)
    )
    return SLOW_TO_COMPILE.format(body=body)


def test_a_compile_worker_killed_mid_compile_the_job_is_compiled_again_and_judged_once(
    site_on_own_redis, workers, exercise, reader
):
    judged_before = sum(GpuWorker.objects.values_list("jobs_done", flat=True))
    submission = submission_create(user=reader, exercise=exercise, source=slow_to_compile())
    wait_for(submission, done=lambda s: s.status == Status.COMPILING, timeout_s=30)

    workers.kill("compile")  # the machine is lost: worker, pool process and NVRTC's child at once
    workers.start("compile", queues="default,compile")  # a worker comes back (a fresh log)

    # The compile was acknowledged late, so the broker gives it back (after its visibility timeout) and
    # the new worker compiles it from the start; the GPU stage runs once.
    wait_for(submission, timeout_s=120)  # condition waits: generous for a loaded CI machine
    assert submission.status == Status.PASSED and submission.attempts == 1 and submission.sweeps == 0
    assert Submission.objects.filter(user=reader).count() == 1
    # Received and finished at least once by the new worker; on a loaded machine a compile can outlast the test's
    # 5 s visibility timeout and be handed out once more, which finds the work done (compile is idempotent).
    assert workers.log("compile").count("Task submissions.compile[") >= 2
    assert sum(GpuWorker.objects.values_list("jobs_done", flat=True)) == judged_before + 1

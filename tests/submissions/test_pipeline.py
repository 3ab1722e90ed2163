"""The whole pipeline with real Redis and real `celery -A config worker` processes: a compile worker and
GPU workers whose sandboxed child runs the CPU stand-in of the GPU job (standin_judge.py).

Submissions are created through the service the web uses; everything after that happens in the
workers. Kills are SIGKILLs of a whole worker (main process, pool process and the judge's child).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.submissions.models import GpuWorker, Submission
from apps.submissions.selectors import gpu_workers_online
from apps.submissions.services import submission_create, submission_sweep
from tests.submissions.conftest import BROKEN, NAIVE, marked
from tests.submissions.workers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
Status = Submission.Status


def test_a_submission_is_compiled_judged_and_recorded(celery_workers, exercise, reader):
    submission = submission_create(user=reader, exercise=exercise, source=NAIVE, filename="01_naive.cu")
    wait_for(submission)

    assert submission.status == Status.PASSED and submission.verdict == "accepted"
    assert submission.attempts == 1 and submission.worker == celery_workers.node("gpu-a")
    assert "sgemm_naive" in str(submission.compiled["lowered_names"]) and "Used 32 registers" in submission.compile_log
    # The result came from the judge's sandboxed child, built from what NVRTC produced.
    result = submission.result
    assert result["telemetry"]["gpu_name"] == "CPU stand-in" == submission.gpu_name
    assert result["kernels"][0]["registers"] == 32
    assert all(check["passed"] for check in result["checks"]) and len(result["checks"]) >= 3
    assert submission.pct_of_baseline == result["benchmarks"][-1]["pct_of_baseline"] and submission.tflops > 0
    assert submission.finished_at and submission.deadline_at is None
    worker = GpuWorker.objects.get(hostname=celery_workers.node("gpu-a"))
    assert worker.gpu_kind == "h200" and worker.jobs_done >= 1 and worker.current_submission is None
    assert gpu_workers_online("h200") >= 1


def test_a_compile_error_comes_back_from_the_cpu_queue_without_a_gpu(celery_workers, exercise, reader):
    submission = submission_create(user=reader, exercise=exercise, source=BROKEN)
    wait_for(submission)

    assert submission.status == Status.FAILED and submission.verdict == "compile_error"
    assert 'submission.cu(15): error: expected a ";"' in submission.compile_log
    assert submission.attempts == 0 and submission.started_at is None and submission.result is None
    assert submission.source == BROKEN  # kept as submitted


def test_a_hanging_kernel_is_timed_out_and_the_next_kernel_runs_cleanly(celery_workers, exercise, reader):
    exercise.gpu_time_limit_s = 2
    exercise.save()
    hanging = submission_create(user=reader, exercise=exercise, source=marked("sgemm_standin_hang"))
    good = submission_create(user=reader, exercise=exercise, source=NAIVE)
    wait_for(hanging, timeout_s=30)
    wait_for(good, timeout_s=30)

    assert hanging.status == Status.TIMED_OUT and hanging.verdict == "timed_out"
    assert "no answer within 2 s" in hanging.message and hanging.attempts == 1
    assert good.status == Status.PASSED and good.result["telemetry"]["gpu_name"] == "CPU stand-in"


def test_a_crashing_kernel_fails_without_taking_the_worker_down(celery_workers, exercise, reader):
    crashing = submission_create(user=reader, exercise=exercise, source=marked("sgemm_standin_crash"))
    wait_for(crashing)
    good = submission_create(user=reader, exercise=exercise, source=NAIVE)
    wait_for(good)

    assert crashing.status == Status.FAILED and crashing.verdict == "crashed" and "SIGABRT" in crashing.message
    assert good.status == Status.PASSED


def test_a_gpu_worker_killed_mid_job_loses_nothing_and_the_job_is_recorded_once(celery_workers, exercise, reader):
    celery_workers.start("gpu-b")  # a survivor, whichever of the two takes the job first
    try:
        slow = submission_create(user=reader, exercise=exercise, source=marked("sgemm_standin_slow"))
        wait_for(slow, done=lambda s: s.status == Status.RUNNING, timeout_s=20)
        first = slow.worker.split("@")[0]
        celery_workers.kill(first)  # mid-job: the stand-in answers after 2.5 s

        # Redis gives the unacknowledged job back; a surviving worker runs it again from the start.
        wait_for(slow, timeout_s=40)
        assert slow.status == Status.PASSED
        assert slow.attempts == 2 and slow.worker.split("@")[0] != first
        recorded = GpuWorker.objects.filter(hostname=slow.worker).get()
        assert recorded.jobs_done == 1 and recorded.current_submission is None
        assert not GpuWorker.objects.filter(hostname=celery_workers.node(first), jobs_done__gt=0).exists()
        # The sweeper has nothing left to do for it.
        report = submission_sweep()
        assert slow.pk not in report.requeued + report.failed
    finally:
        if "gpu-a" not in celery_workers.processes:
            celery_workers.start("gpu-a", wait=False)
        if "gpu-b" in celery_workers.processes:
            celery_workers.stop("gpu-b")
        celery_workers.wait_ready("gpu-a")


def test_the_sweeper_requeues_lost_jobs_and_gives_up_after_max_attempts(celery_workers, exercise, reader, settings):
    past = timezone.now() - timedelta(minutes=1)
    # A compile message that never reached the broker, and a job running on a worker that vanished.
    lost_compile = Submission.objects.create(
        user=reader,
        exercise=exercise,
        source=NAIVE,
        source_sha256="x",
        gpu_kind="h200",
        arch="sm_90",
        status=Status.QUEUED,
        deadline_at=past,
    )
    on_lost_worker = submission_create(user=reader, exercise=exercise, source=NAIVE)
    wait_for(on_lost_worker)
    Submission.objects.filter(pk=on_lost_worker.pk).update(
        status=Status.RUNNING,
        worker="gone@nowhere",
        attempts=1,
        started_at=past - timedelta(minutes=5),
        deadline_at=timezone.now() + timedelta(hours=1),
        result=None,
        finished_at=None,
    )
    hopeless = Submission.objects.create(
        user=reader,
        exercise=exercise,
        source=NAIVE,
        source_sha256="x",
        gpu_kind="h200",
        arch="sm_90",
        status=Status.COMPILING,
        deadline_at=past,
        sweeps=settings.SUBMISSION_MAX_ATTEMPTS,
    )

    report = submission_sweep()

    assert set(report.requeued) == {lost_compile.pk, on_lost_worker.pk} and report.failed == [hopeless.pk]
    wait_for(lost_compile)
    wait_for(on_lost_worker)
    hopeless.refresh_from_db()
    assert lost_compile.status == Status.PASSED and lost_compile.sweeps == 1
    assert on_lost_worker.status == Status.PASSED and on_lost_worker.attempts == 2
    assert on_lost_worker.worker == celery_workers.node("gpu-a")
    assert hopeless.status == Status.ERROR and "gave up" in hopeless.message

"""The submission services and selectors, without Celery workers: creating (and every refusal), the
compile stage with real NVRTC, the GPU stage with the judge's real sandbox running the CPU stand-in,
idempotency, status transitions, the sweeper, re-runs and reviews."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.submissions import selectors, services
from apps.submissions.models import GpuWorker, Submission
from apps.submissions.services import SubmissionRefused, TransitionRefused, submission_create
from kernels import CompileResult, GpuJudge
from kernels.results import BenchResult, JudgeResult, TimingStats, Verdict
from tests.factories import UserFactory
from tests.submissions.conftest import BROKEN, NAIVE

Status = Submission.Status
STANDIN = "tests.submissions.standin_judge"


@pytest.fixture(scope="module")
def standin_judge():
    """The real GpuJudge (sandboxed child per job), running the CPU stand-in of the GPU job."""
    with GpuJudge(warm=False, job=f"{STANDIN}:judge_job") as judge:
        yield judge


def create(user, exercise, source=NAIVE, **kwargs):
    return submission_create(user=user, exercise=exercise, source=source, **kwargs)


def refusal(user, exercise, source=NAIVE, **kwargs) -> SubmissionRefused:
    before = Submission.objects.count()
    with pytest.raises(SubmissionRefused) as caught:
        create(user, exercise, source, **kwargs)
    assert Submission.objects.count() == before  # a refusal stores nothing
    return caught.value


# --- Creating ---------------------------------------------------------------------------------------


def test_create_stores_the_source_first_and_queues_the_compile_on_commit(
    exercise, reader, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        submission = create(reader, exercise, NAIVE.replace("\n", "\r\n"), filename="naive.cu")
    submission.refresh_from_db()
    assert submission.status == Status.QUEUED and submission.source == NAIVE  # line ends normalised
    assert submission.filename == "naive.cu" and submission.gpu_kind == "h200" and submission.arch == "sm_90"
    assert len(submission.source_sha256) == 64 and submission.deadline_at > timezone.now()
    assert len(callbacks) == 1  # the compile task, sent only once the row is committed


def test_a_plan_typed_beside_the_editor_replaces_the_files_plan(exercise, reader):
    plan = '[[launch]]\nkernel = "sgemm_naive"\ngrid = ["cdiv(M, 16)", "cdiv(N, 16)"]\nblock = [16, 16]'
    submission = create(reader, exercise, NAIVE, plan=plan)
    assert submission.source.count("@plan") == 1 and "block = [16, 16]" in submission.source
    assert "block = [32, 32]" not in submission.source
    pasted = create(reader, exercise, NAIVE, plan=f"/* @plan\n{plan}\n*/")
    assert pasted.source == submission.source


def test_refusals_name_the_field_and_keep_nothing(exercise, reader):
    assert refusal(reader, exercise, "").field == "source"
    assert "empty" in refusal(reader, exercise, "  \n\t ").message
    huge = NAIVE + "// " + "x" * (1024 * 1024) + "\n"
    too_big = refusal(reader, exercise, huge)
    assert too_big.field == "source" and too_big.message == "The source is 1,026 KB; the limit is 256 KB."
    assert refusal(reader, exercise, "int x;\x00").field == "source"
    no_plan = refusal(reader, exercise, NAIVE.split("/* @plan")[0])
    assert no_plan.field == "plan" and "no launch plan" in no_plan.message
    broken_plan = refusal(reader, exercise, NAIVE, plan="[[launch]\nkernel = ")
    assert broken_plan.field == "plan" and "not valid TOML" in broken_plan.message
    assert refusal(reader, exercise, NAIVE, plan='kernel = "k" */ evil').field == "plan"


def test_a_locked_or_closed_exercise_takes_no_submission(locked_exercise, exercise, reader):
    locked = refusal(reader, locked_exercise)
    assert "locked" in locked.message and locked.field is None
    subscriber = UserFactory(is_staff=True)  # full access
    assert create(subscriber, locked_exercise).status == Status.QUEUED
    exercise.is_open = False
    exercise.save()
    assert "closed" in refusal(reader, exercise).message


def test_anonymous_readers_cannot_submit(exercise):
    from django.contrib.auth.models import AnonymousUser

    with pytest.raises(SubmissionRefused, match="Sign in"):
        create(AnonymousUser(), exercise)


def test_the_quota_counts_per_reader_per_hour_and_per_day(exercise, reader, settings):
    settings.SUBMISSIONS_PER_HOUR, settings.SUBMISSIONS_PER_DAY = 2, 3
    # A GPU is online: what waits for it counts (tests/submissions/test_gpu_availability.py: when none is).
    GpuWorker.objects.create(
        hostname="gpu0@node", gpu_kind="h200", started_at=timezone.now(), last_seen_at=timezone.now()
    )
    other = UserFactory()
    first = create(reader, exercise)
    create(reader, exercise)
    quota = selectors.quota_get(reader)
    assert (quota.used_hour, quota.used_day, quota.remaining) == (2, 2, 0)
    assert quota.resets_at == first.created_at + timedelta(hours=1)
    assert "2 submissions per hour" in refusal(reader, exercise).message
    assert selectors.quota_get(other).remaining == 2 and create(other, exercise)

    # An hour later the hour has room again, but the day allows one more only.
    Submission.objects.filter(user=reader).update(created_at=timezone.now() - timedelta(minutes=61))
    create(reader, exercise)
    quota = selectors.quota_get(reader)
    assert (quota.used_hour, quota.used_day, quota.remaining) == (1, 3, 0)
    assert "per day" in refusal(reader, exercise).message


# --- The compile stage ------------------------------------------------------------------------------


def test_compile_stores_the_cubin_and_queues_the_gpu_job(exercise, reader, django_capture_on_commit_callbacks):
    submission = create(reader, exercise)
    with django_capture_on_commit_callbacks() as callbacks:
        services.submission_compile(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == Status.COMPILED and submission.compiled["cubin"]
    assert submission.compiled_at and "Used 32 registers" in submission.compile_log
    assert len(callbacks) == 1
    assert selectors.queue_position(submission) == 1
    # A redelivered compile message finds the work done and changes nothing.
    with django_capture_on_commit_callbacks() as again:
        assert services.submission_compile(submission_id=submission.pk) is None
    assert again == []


def test_a_compile_error_finishes_the_submission_with_the_log(exercise, reader):
    submission = create(reader, exercise, BROKEN)
    services.submission_compile(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == Status.FAILED and submission.verdict == "compile_error"
    assert "submission.cu(15)" in submission.compile_log and submission.finished_at and submission.deadline_at is None


def test_a_plan_over_the_hardware_limits_is_a_plan_error_at_compile_time(exercise, reader):
    submission = create(reader, exercise, NAIVE, plan='[[launch]]\nkernel = "sgemm_naive"\ngrid = [1]\nblock = [2048]')
    services.submission_compile(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == Status.FAILED and submission.verdict == "plan_error" and "1024" in submission.message


# --- The GPU stage ------------------------------------------------------------------------------------


def compiled(user, exercise, source=NAIVE):
    submission = create(user, exercise, source)
    services.submission_compile(submission_id=submission.pk)
    return submission


def test_the_gpu_stage_records_the_judges_result(exercise, reader, standin_judge):
    submission = compiled(reader, exercise)
    GpuWorker.objects.create(
        hostname="gpu0@node", gpu_kind="h200", started_at=timezone.now(), last_seen_at=timezone.now()
    )
    assert services.submission_judge(submission_id=submission.pk, worker_name="gpu0@node", judge=standin_judge)
    submission.refresh_from_db()
    assert submission.status == Status.PASSED and submission.attempts == 1 and submission.worker == "gpu0@node"
    assert submission.gpu_name == "CPU stand-in" and submission.result["kernels"][0]["registers"] == 32
    assert submission.time_ms == submission.result["benchmarks"][-1]["candidate"]["median_ms"]
    assert submission.review == Submission.Review.NONE
    worker = GpuWorker.objects.get()
    assert worker.jobs_done == 1 and worker.current_submission is None
    # Delivered again (the ack was lost): already finished, not run, not recorded again.
    assert not services.submission_judge(submission_id=submission.pk, worker_name="gpu1@node", judge=standin_judge)
    assert GpuWorker.objects.get().jobs_done == 1


def test_claiming_and_recording_a_job_neither_read_nor_rewrite_its_cubin(exercise, reader, standin_judge):
    # The compiled JSON carries the cubin (about 130 KB for the sgemm example): the GPU task loads it once, to judge.
    submission = compiled(reader, exercise)
    stored = Submission.objects.get(pk=submission.pk).compiled
    with CaptureQueriesContext(connection) as claim:
        _, attempt = services.submission_gpu_claim(submission_id=submission.pk, worker_name="gpu0@node")
    result = standin_judge.judge(CompileResult.from_dict(stored))
    with CaptureQueriesContext(connection) as record:
        assert services.submission_gpu_record(submission_id=submission.pk, attempt=attempt, result=result)

    for query in claim.captured_queries + record.captured_queries:
        assert '"compiled"' not in query["sql"] and '"source"' not in query["sql"], query["sql"][:200]
    submission.refresh_from_db()
    assert submission.status == Status.PASSED and submission.compiled == stored and submission.source == NAIVE
    assert submission.result["verdict"] == "accepted"


def test_a_job_redelivered_after_a_lost_worker_runs_again_and_is_recorded_once(exercise, reader, standin_judge):
    submission = compiled(reader, exercise)
    first = services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu0@a")
    # gpu0@a dies mid-run; the broker gives the job to gpu1@b, which starts attempt 2.
    second = services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu1@b")
    assert (first, second) == (1, 2)
    result = standin_judge.judge(CompileResult.from_dict(Submission.objects.get(pk=submission.pk).compiled))
    assert not services.submission_gpu_record(submission_id=submission.pk, attempt=first, result=result)
    assert services.submission_gpu_record(submission_id=submission.pk, attempt=second, result=result)
    assert not services.submission_gpu_record(submission_id=submission.pk, attempt=second, result=result)
    submission.refresh_from_db()
    assert submission.status == Status.PASSED and submission.attempts == 2 and submission.worker == "gpu1@b"


def test_a_duplicate_message_does_not_restart_a_job_running_on_a_live_worker(exercise, reader):
    submission = compiled(reader, exercise)
    now = timezone.now()
    GpuWorker.objects.create(hostname="gpu0@a", gpu_kind="h200", started_at=now, last_seen_at=now)
    assert services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu0@a") == 1
    assert services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu1@b") is None
    # Once gpu0@a stops sending heartbeats, the job is taken over.
    GpuWorker.objects.update(last_seen_at=now - timedelta(minutes=5))
    assert services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu1@b") == 2


def test_a_job_that_keeps_losing_its_worker_fails_after_max_attempts(exercise, reader, settings):
    submission = compiled(reader, exercise)
    for attempt in range(1, settings.SUBMISSION_MAX_ATTEMPTS + 1):
        assert services.submission_gpu_start(submission_id=submission.pk, worker_name=f"w{attempt}") == attempt
    assert services.submission_gpu_start(submission_id=submission.pk, worker_name="last") is None
    submission.refresh_from_db()
    assert submission.status == Status.ERROR and "lost 3 times" in submission.message


def flagged_result(pct: float) -> JudgeResult:
    stats = TimingStats(10, 1.0, 1.0, 1.0, 1.0, 1.0, 0.001)
    bench = BenchResult(
        sizes={"M": 4096},
        candidate=stats,
        baseline=stats,
        baseline_name="cuBLAS",
        pct_of_baseline=pct,
        tflops=60.0,
        gbps=1.0,
        baseline_tflops=50.0,
        roofline_tflops=60.0,
        pct_of_roofline=99.0,
        rounds_checked=11,
        max_rel_err=0.0,
        flops=1,
        bytes_moved=1,
        flags=[f"faster than cuBLAS ({pct:.1f}%): review before trusting"],
    )
    return JudgeResult(verdict=Verdict.ACCEPTED, message="ok", problem="sgemm", benchmarks=[bench])


def test_results_faster_than_cublas_wait_for_review_and_staff_decide(exercise, reader, staff):
    submission = compiled(reader, exercise)
    attempt = services.submission_gpu_start(submission_id=submission.pk, worker_name="w")
    services.submission_gpu_record(submission_id=submission.pk, attempt=attempt, result=flagged_result(130.0))
    submission.refresh_from_db()
    assert submission.review == Submission.Review.PENDING and submission.pct_of_baseline == 130.0
    services.submission_review_set(submission=submission, valid=False, note="reads the answer", by=staff)
    submission.refresh_from_db()
    assert submission.review == Submission.Review.INVALID and "reads the answer" in submission.review_note
    assert staff.email in submission.review_note


# --- Transitions, re-runs ------------------------------------------------------------------------------


def test_invalid_transitions_are_refused(exercise, reader, staff):
    submission = create(reader, exercise)
    with pytest.raises(TransitionRefused):
        services.submission_gpu_start(submission_id=submission.pk, worker_name="w")  # not compiled yet
    with pytest.raises(TransitionRefused):
        services.submission_rerun(submission=submission, by=staff)  # still in progress
    with pytest.raises(TransitionRefused):
        services.submission_review_set(submission=submission, valid=True, by=staff)  # not flagged
    submission.refresh_from_db()
    assert submission.status == Status.QUEUED


def test_a_rerun_judges_the_stored_source_again(exercise, reader, staff, django_capture_on_commit_callbacks):
    submission = create(reader, exercise, BROKEN)
    services.submission_compile(submission_id=submission.pk)
    with django_capture_on_commit_callbacks() as callbacks:
        services.submission_rerun(submission=Submission.objects.get(pk=submission.pk), by=staff)
    submission.refresh_from_db()
    assert submission.status == Status.QUEUED and submission.source == BROKEN
    assert submission.compile_log == "" and submission.verdict == "" and submission.compiled is None
    assert len(callbacks) == 1


# --- The sweeper ------------------------------------------------------------------------------------


def test_the_sweeper_acts_only_past_deadlines_and_on_lost_workers(
    exercise, reader, settings, django_capture_on_commit_callbacks
):
    now = timezone.now()
    on_time = create(reader, exercise)
    late_compile = create(reader, exercise)
    Submission.objects.filter(pk=late_compile.pk).update(
        status=Status.COMPILING, deadline_at=now - timedelta(seconds=1)
    )
    late_gpu = compiled(reader, exercise)
    services.submission_gpu_start(submission_id=late_gpu.pk, worker_name="gpu0@gone")
    GpuWorker.objects.create(
        hostname="gpu0@gone", gpu_kind="h200", started_at=now, last_seen_at=now - timedelta(hours=1)
    )
    Submission.objects.filter(pk=late_gpu.pk).update(started_at=now - timedelta(minutes=5))
    given_up = create(reader, exercise)
    Submission.objects.filter(pk=given_up.pk).update(
        deadline_at=now - timedelta(seconds=1), sweeps=settings.SUBMISSION_MAX_ATTEMPTS
    )

    with django_capture_on_commit_callbacks() as callbacks:
        report = services.submission_sweep()

    assert sorted(report.requeued) == sorted([late_compile.pk, late_gpu.pk]) and report.failed == [given_up.pk]
    assert len(callbacks) == 2
    statuses = dict(Submission.objects.values_list("pk", "status"))
    assert statuses[on_time.pk] == Status.QUEUED and statuses[late_compile.pk] == Status.QUEUED
    assert statuses[late_gpu.pk] == Status.COMPILED and statuses[given_up.pk] == Status.ERROR
    assert GpuWorker.objects.get().current_submission is None
    assert services.submission_sweep().requeued == []  # new deadlines: nothing more to do now


# --- Selectors ------------------------------------------------------------------------------------------


def test_queue_positions_and_workers_online(exercise, reader):
    first, second = create(reader, exercise), create(reader, exercise)
    assert (selectors.queue_position(first), selectors.queue_position(second)) == (1, 2)
    now = timezone.now()
    GpuWorker.objects.create(hostname="a", gpu_kind="h200", started_at=now, last_seen_at=now)
    GpuWorker.objects.create(hostname="b", gpu_kind="h200", started_at=now, last_seen_at=now - timedelta(minutes=5))
    GpuWorker.objects.create(hostname="c", gpu_kind="h200", started_at=now, last_seen_at=now, stopped_at=now)
    GpuWorker.objects.create(hostname="d", gpu_kind="b200", started_at=now, last_seen_at=now)
    assert selectors.gpu_workers_online("h200") == 1 and selectors.gpu_workers_online("a100") == 0


def test_queue_depths_are_read_from_the_broker(settings):
    from config.celery import app

    # A broker of its own (the cache's Redis database), since the test workers empty the real queues at once.
    with app.connection_for_write(settings.REDIS_URL) as connection:
        channel = connection.default_channel
        for name in settings.CELERY_QUEUE_NAMES:
            channel.queue_declare(queue=name)
            channel.queue_purge(name)
        for _ in range(2):
            app.send_task("submissions.sweep", queue="compile", connection=connection)
        depths = selectors.queue_depths(broker_url=settings.REDIS_URL)
        channel.queue_purge("compile")
    assert depths == {"default": 0, "compile": 2, "gpu.h200": 0, "gpu.h200.profile": 0}
    assert selectors.queue_depths(broker_url="redis://127.0.0.1:1/0") == {}  # no broker: the page still renders


def test_the_tasks_are_routed_and_limited_as_the_design_says(settings):
    from apps.submissions import tasks
    from config.celery import app

    judge = tasks.submission_judge_task
    assert judge.acks_late and judge.reject_on_worker_lost
    assert judge.time_limit > judge.soft_time_limit >= 300  # an explicit net above the judge's own per-exercise limit
    assert tasks.submission_compile_task.time_limit > tasks.submission_compile_task.soft_time_limit > 30
    assert app.conf.beat_schedule["submissions-sweep"] == {"task": "submissions.sweep", "schedule": 60.0}
    assert app.conf.broker_transport_options["visibility_timeout"] > judge.time_limit


def test_a_nul_written_as_a_toml_escape_is_refused_at_submit_time_and_nothing_is_stored(exercise, reader):
    # "\u0000" is six plain characters in the file; read by TOML it is a NUL, which the stored plan (jsonb) refused
    # in the compile task, retried until "judge error" (issue 28).
    plan = '[[launch]]\nkernel = "sgemm_naive"\ngrid = ["cdiv(M, 16)\\u0000", "cdiv(N, 16)"]\nblock = [16, 16]'
    refused = refusal(reader, exercise, NAIVE, plan=plan)
    assert refused.field == "plan" and "control character" in refused.message
    assert not Submission.objects.filter(user=reader).exists()


def test_a_hostile_file_is_refused_in_milliseconds(exercise, reader):
    import time

    started = time.perf_counter()
    refused = refusal(reader, exercise, "/* @plan" * (200 * 1024 // 8))
    assert refused.field == "plan" and time.perf_counter() - started < 0.5  # was 20 s and more

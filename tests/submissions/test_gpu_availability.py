"""Issue 44: before submitting, the form says whether a GPU of the kind the exercise needs is online and how long its
queue is; a submission waiting for a GPU that is offline is not counted against the hourly quota until it runs (the
day still counts it: it took a compile). The quota is counted in one place, selectors.quota_get, and
services.submission_create refuses by it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.submissions import selectors
from apps.submissions.models import GpuWorker, Submission
from apps.submissions.services import SubmissionRefused, submission_create
from tests.submissions.conftest import NAIVE
from tests.submissions.test_views import client_for, locked_exercise, subscriber  # noqa: F401  (fixtures)

Status = Submission.Status
LOCKED_PROGRESS = "/capsules/locked-two/progress/"


def create(user, exercise):
    return submission_create(user=user, exercise=exercise, source=NAIVE)


def online(kind="h200", name="gpu0@node", *, seen_ago_s=0):
    now = timezone.now()
    return GpuWorker.objects.create(
        hostname=name, gpu_kind=kind, started_at=now, last_seen_at=now - timedelta(seconds=seen_ago_s)
    )


# --- The quota ----------------------------------------------------------------------------------------


def test_waiting_for_an_offline_gpu_is_not_counted_in_the_hour_until_it_runs(exercise, reader, settings):
    settings.SUBMISSIONS_PER_HOUR, settings.SUBMISSIONS_PER_DAY = 2, 4
    online(seen_ago_s=3600)  # heard from an hour ago: offline
    waiting = [create(reader, exercise) for _ in range(3)]  # more than the hour allows, all accepted
    quota = selectors.quota_get(reader)
    assert (quota.used_hour, quota.used_day, quota.held, quota.remaining) == (0, 3, 3, 1)
    # The day still counts them: it bounds what a reader can leave waiting.
    create(reader, exercise)
    with pytest.raises(SubmissionRefused, match="4 per day"):
        create(reader, exercise)

    # The GPU comes back: what waits for it counts again, from when it was submitted.
    GpuWorker.objects.update(last_seen_at=timezone.now())
    quota = selectors.quota_get(reader)
    assert (quota.used_hour, quota.held, quota.remaining) == (4, 0, 0)

    # Submitted two hours ago, one ran ten minutes ago: it counts in this hour, from its start.
    two_hours_ago, ten_minutes_ago = timezone.now() - timedelta(hours=2), timezone.now() - timedelta(minutes=10)
    Submission.objects.filter(user=reader).update(created_at=two_hours_ago)
    Submission.objects.filter(pk=waiting[0].pk).update(status=Status.PASSED, started_at=ten_minutes_ago)
    quota = selectors.quota_get(reader)
    assert (quota.used_hour, quota.used_day, quota.held) == (1, 4, 0)


def test_a_run_counts_from_its_start_and_a_compile_error_from_its_submission(exercise, reader, settings):
    settings.SUBMISSIONS_PER_HOUR, settings.SUBMISSIONS_PER_DAY = 2, 10
    now = timezone.now()
    ran, failed = create(reader, exercise), create(reader, exercise)
    Submission.objects.filter(pk=ran.pk).update(
        status=Status.PASSED, created_at=now - timedelta(minutes=90), started_at=now - timedelta(minutes=30)
    )
    Submission.objects.filter(pk=failed.pk).update(status=Status.FAILED, created_at=now - timedelta(minutes=20))
    quota = selectors.quota_get(reader)
    assert (quota.used_hour, quota.used_day, quota.held, quota.remaining) == (2, 2, 0, 0)
    # The run frees its slot an hour after it started; the compile error an hour after it was submitted.
    assert quota.resets_at == now - timedelta(minutes=30) + timedelta(hours=1)
    with pytest.raises(SubmissionRefused, match="2 submissions per hour"):
        create(reader, exercise)


def test_only_the_waiting_submissions_of_an_offline_kind_are_held(exercise, reader, settings):
    settings.GPU_KINDS = ["h200", "h100"]
    online("h100", "gpu0@hopper")  # h200 has no worker
    on_h200, on_h100 = create(reader, exercise), create(reader, exercise)
    Submission.objects.filter(pk=on_h100.pk).update(gpu_kind="h100")
    quota = selectors.quota_get(reader)
    assert (quota.used_hour, quota.held) == (1, 1)
    # Running on an H200 that has since gone: it ran, so it counts.
    Submission.objects.filter(pk=on_h200.pk).update(status=Status.RUNNING, started_at=timezone.now())
    assert (selectors.quota_get(reader).used_hour, selectors.quota_get(reader).held) == (2, 0)


# --- Which GPU an exercise needs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, arch, runs",
    [
        ("h200", "sm_90", True),
        ("h200", "sm_90a", True),
        ("h100", "sm_80", False),  # a cubin runs within its major version only
        ("a100", "sm_90a", False),
        ("a100", "sm_80", True),
        ("l40s", "sm_80", True),
        ("b200", "sm_90a", False),  # `a` features run on their exact capability
        ("mystery", "sm_90a", True),  # a kind we do not know: the operator's word stands
    ],
)
def test_a_gpu_kind_runs_the_targets_its_capability_runs(kind, arch, runs):
    assert selectors.kind_runs_arch(kind, arch) is runs


def test_an_exercise_for_hopper_goes_to_a_hopper_kind(exercise, reader, settings):
    settings.GPU_KINDS, settings.DEFAULT_GPU_KIND = ["a100", "h200"], "a100"
    exercise.arch = "sm_90a"
    exercise.save()
    assert selectors.exercise_gpu_kind(exercise) == "h200" and selectors.arch_needs("sm_90a") == "Hopper"
    assert create(reader, exercise).gpu_kind == "h200"
    exercise.arch = "sm_80"
    exercise.save()
    assert selectors.exercise_gpu_kind(exercise) == "a100"


def test_availability_counts_the_kinds_workers_and_queue(exercise, reader, settings):
    settings.GPU_KINDS = ["h200", "h100"]
    online("h200", "gpu0@a")
    online("h200", "gpu1@a")
    online("h200", "gpu2@a", seen_ago_s=3600)  # its heartbeat stopped
    online("h100", "gpu0@b")
    queued, compiled, running, done, elsewhere = (create(reader, exercise) for _ in range(5))
    Submission.objects.filter(pk=compiled.pk).update(status=Status.COMPILED)
    Submission.objects.filter(pk=running.pk).update(status=Status.RUNNING, started_at=timezone.now())
    Submission.objects.filter(pk=done.pk).update(status=Status.PASSED)
    Submission.objects.filter(pk=elsewhere.pk).update(gpu_kind="h100")
    gpu = selectors.gpu_availability(exercise)
    assert (gpu.gpu_kind, gpu.online, gpu.waiting, gpu.running, gpu.is_online) == ("h200", 2, 2, 1, True)


# --- What the submit form says ---------------------------------------------------------------------------


def test_the_form_says_no_gpu_is_online_and_that_waiting_is_not_counted(locked_exercise, subscriber, settings):  # noqa: F811
    settings.SUBMISSIONS_PER_HOUR = 5
    create(subscriber, locked_exercise)
    body = client_for(subscriber).get(LOCKED_PROGRESS).content.decode()
    assert 'id="gpu-status"' in body and "submission-form__gpu--offline" in body
    assert "No H200 GPU is online right now" in body and "1 submission waiting" in body
    assert "does not count against your hourly quota until it runs" in body
    assert "<strong>5</strong> submissions left" in body  # the waiting one is held, not counted
    assert "1 waiting for a GPU that is offline, not counted in the hour until it runs" in body
    assert "it will run when one connects, and counts against your hourly quota only then" in body  # its status line


def test_the_form_says_how_many_gpus_are_online_and_the_queue(locked_exercise, subscriber, settings):  # noqa: F811
    settings.SUBMISSIONS_PER_HOUR = 5
    online()
    create(subscriber, locked_exercise)
    create(subscriber, locked_exercise)
    locked_exercise.arch = "sm_90a"
    locked_exercise.save()
    body = client_for(subscriber).get(LOCKED_PROGRESS).content.decode()
    assert "submission-form__gpu--online" in body and "<strong>1 H200 GPU online</strong>" in body
    assert "2 submissions waiting" in body and "<code>sm_90a</code> needs Hopper" in body
    assert "<strong>3</strong> submissions left" in body and "not counted in the hour" not in body
    # A refused submission's form (htmx) says the same.
    response = client_for(subscriber).post("/capsules/locked-two/submit/", {"source": ""}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400 and "<strong>1 H200 GPU online</strong>" in response.content.decode()

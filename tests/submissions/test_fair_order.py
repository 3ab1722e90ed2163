"""The GPU queue's order, on PostgreSQL: a GPU message claims the oldest compiled submission of the reader
served least recently, so one reader's burst does not hold back another reader's single submission by more
than one job (issue 18). With FIFO claims (each message runs its own submission), the lone reader waited
for the whole burst."""

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from apps.submissions.models import GpuWorker, Submission
from apps.submissions.services import submission_gpu_claim, submission_gpu_record, submission_judge
from kernels import GpuJudge, compile_submission
from kernels.results import JudgeResult, Verdict
from tests.factories import UserFactory
from tests.submissions.conftest import NAIVE

Status = Submission.Status
STANDIN = "tests.submissions.standin_judge"
WORKER = "gpu0@node"


@pytest.fixture(scope="module")
def compiled_naive():
    compiled = compile_submission(NAIVE, "sgemm")
    assert compiled.ok, compiled.log
    return compiled.to_dict()


@pytest.fixture
def queue_compiled(exercise, compiled_naive):
    """queue_compiled(user, n): n submissions of that reader, compiled and waiting for a GPU (in the order
    a GPU queue would hold their messages)."""

    def queue(user, n=1):
        return [
            Submission.objects.create(
                user=user,
                exercise=exercise,
                source=NAIVE,
                source_sha256="0" * 64,
                gpu_kind="h200",
                arch="sm_90",
                status=Status.COMPILED,
                compiled=compiled_naive,
                compiled_at=timezone.now(),
            )
            for _ in range(n)
        ]

    return queue


def readers(*names):
    return [UserFactory(email=f"{name}@example.org") for name in names]


def claim_and_finish(message: Submission) -> int | None:
    """What one GPU task does with the message of `message`, minus the GPU: claim, then record a result."""
    claimed = submission_gpu_claim(submission_id=message.pk, worker_name=WORKER)
    if claimed is None:
        return None
    submission_id, attempt = claimed
    done = JudgeResult(Verdict.ACCEPTED, "ok", "sgemm")
    assert submission_gpu_record(submission_id=submission_id, attempt=attempt, result=done, worker_name=WORKER)
    return submission_id


def test_a_lone_readers_submission_waits_for_at_most_one_job_of_a_burst(db, queue_compiled):
    heavy, lone = readers("heavy", "lone")
    messages = queue_compiled(heavy, 20) + queue_compiled(lone, 1)

    order = [claim_and_finish(message) for message in messages]

    assert order.index(messages[-1].pk) <= 1  # FIFO: 20
    assert sorted(order) == sorted(m.pk for m in messages)  # every submission run once, by some message
    assert set(Submission.objects.values_list("status", flat=True)) == {Status.PASSED}


def test_readers_are_served_in_turn_and_each_readers_oldest_first(db, queue_compiled):
    a, b, c = readers("a", "b", "c")
    queued = {user.pk: queue_compiled(user, 3) for user in (a, b, c)}
    messages = [s for user in (a, b, c) for s in queued[user.pk]]

    order = [claim_and_finish(message) for message in messages]

    owners = list(Submission.objects.filter(pk__in=order).values_list("pk", "user_id"))
    owner = dict(owners)
    assert [owner[pk] for pk in order] == [a.pk, b.pk, c.pk] * 3
    for user in (a, b, c):
        assert [pk for pk in order if owner[pk] == user.pk] == [s.pk for s in queued[user.pk]]


def test_a_message_finds_nothing_to_run_once_others_took_every_submission(db, queue_compiled):
    (reader,) = readers("solo")
    first, second = queue_compiled(reader, 2)
    assert claim_and_finish(second) == first.pk  # the older one, whichever message came first
    assert claim_and_finish(first) == second.pk
    assert claim_and_finish(first) is None  # a duplicate message (a sweep's re-send): nothing left


def test_a_redelivered_message_of_a_lost_job_runs_that_job_again(db, queue_compiled):
    a, b = readers("a", "b")
    (lost,) = queue_compiled(a)
    queue_compiled(b)
    assert submission_gpu_claim(submission_id=lost.pk, worker_name=WORKER) == (lost.pk, 1)
    # The worker died in the middle of the job: its message comes back, and runs the same job again,
    # although reader b has never been served.
    assert submission_gpu_claim(submission_id=lost.pk, worker_name=WORKER) == (lost.pk, 2)


def test_an_orphan_of_this_worker_is_claimed_before_anything_else(db, queue_compiled):
    a, b = readers("a", "b")
    (orphan,) = queue_compiled(a)
    (other,) = queue_compiled(b)
    assert submission_gpu_claim(submission_id=orphan.pk, worker_name=WORKER) == (orphan.pk, 1)
    # Its record failed and the task is retried with another submission's message: the orphan comes first.
    assert submission_gpu_claim(submission_id=other.pk, worker_name=WORKER) == (orphan.pk, 2)


def test_a_lost_jobs_message_claims_the_next_submission_when_its_restarted_worker_reruns_the_job(
    db, queue_compiled, django_capture_on_commit_callbacks
):
    """Two GPUs: gpu0 is killed mid-job and restarted under its name; with the next message it gets (another
    submission's) it re-runs its orphan first, and sends that other submission a message of its own. The
    killed job's message, given back by the broker to gpu1 later, must then run what is left, not drop it."""
    a, b = readers("a", "b")
    (lost,) = queue_compiled(a)
    (other,) = queue_compiled(b)
    now = timezone.now()
    GpuWorker.objects.create(hostname=WORKER, gpu_kind="h200", gpu_index="0", started_at=now, last_seen_at=now)
    with django_capture_on_commit_callbacks() as sent:
        assert submission_gpu_claim(submission_id=lost.pk, worker_name=WORKER, gpu_index="0") == (lost.pk, 1)
    assert sent == []  # a plain claim: the message's job or the fairest one, no message added
    with django_capture_on_commit_callbacks() as sent:
        assert submission_gpu_claim(submission_id=other.pk, worker_name=WORKER, gpu_index="0") == (lost.pk, 2)
    assert len(sent) == 1  # the message for `other`, whose own one re-ran the orphan

    assert submission_gpu_claim(submission_id=lost.pk, worker_name="gpu1@node", gpu_index="1") == (other.pk, 1)
    lost.refresh_from_db()
    other.refresh_from_db()
    assert (lost.worker, lost.gpu_index, lost.attempts) == (WORKER, "0", 2)
    assert (other.worker, other.gpu_index) == ("gpu1@node", "1")


@pytest.mark.django_db(transaction=True)
def test_two_workers_claiming_at_once_take_different_submissions_without_waiting(queue_compiled):
    assert connection.vendor == "postgresql"
    a, b = readers("a", "b")
    queued = queue_compiled(a) + queue_compiled(b)
    found = {}

    def other_worker():
        found["claim"] = submission_gpu_claim(submission_id=queued[0].pk, worker_name="gpu1@node")
        connection.close()

    with transaction.atomic():  # this worker's claim holds its row lock until the transaction ends
        mine = submission_gpu_claim(submission_id=queued[0].pk, worker_name=WORKER)
        thread = threading.Thread(target=other_worker)
        thread.start()
        thread.join(timeout=20)
        assert not thread.is_alive()  # skipped the locked row instead of waiting for it

    assert mine == (queued[0].pk, 1) and found["claim"] == (queued[1].pk, 1)


def test_the_gpu_task_runs_the_fairest_submission_through_the_judge(db, queue_compiled, monkeypatch):
    heavy, lone = readers("heavy", "lone")
    messages = queue_compiled(heavy, 4) + queue_compiled(lone, 1)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5")  # the worker owns GPU 5; its judge's children see only it

    with GpuJudge(warm=False, job=f"{STANDIN}:judge_job") as judge:
        assert submission_judge(submission_id=messages[0].pk, worker_name=WORKER, judge=judge, gpu_index="5")
        assert submission_judge(submission_id=messages[1].pk, worker_name=WORKER, judge=judge, gpu_index="5")

    lone_submission = Submission.objects.get(pk=messages[-1].pk)
    assert lone_submission.status == Status.PASSED and lone_submission.result["telemetry"]["gpu_name"] == "CPU stand-in"
    # The GPU that ran it: the worker's index, and the UUID the judge's child reported (the stand-in makes
    # one from the CUDA_VISIBLE_DEVICES it sees).
    assert lone_submission.gpu_index == "5"
    assert lone_submission.gpu_uuid == lone_submission.result["telemetry"]["gpu_uuid"] == "GPU-standin-5"
    assert Submission.objects.filter(status=Status.COMPILED).count() == 3

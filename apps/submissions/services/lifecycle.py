"""A submission's life cycle: which status may follow which, and the helpers every stage uses to move a
submission on (under a row lock), finish it, and queue its next stage once the transaction commits."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from apps.submissions.models import Submission
from config.broker import BROKER_ERRORS

logger = logging.getLogger(__name__)
Status = Submission.Status

IN_PROGRESS = (Status.QUEUED, Status.COMPILING, Status.COMPILED, Status.RUNNING)
# Which status may follow which. Same-status moves are redeliveries (a compile or a GPU attempt run again);
# back-moves are the sweeper's re-queues; QUEUED from a finished status is an admin's re-run.
TRANSITIONS = {
    Status.QUEUED: {Status.COMPILING, Status.ERROR},
    Status.COMPILING: {Status.COMPILING, Status.COMPILED, Status.FAILED, Status.TIMED_OUT, Status.ERROR, Status.QUEUED},
    Status.COMPILED: {Status.RUNNING, Status.ERROR},
    Status.RUNNING: {Status.RUNNING, Status.PASSED, Status.FAILED, Status.TIMED_OUT, Status.ERROR, Status.COMPILED},
    **{finished: {Status.QUEUED} for finished in Submission.FINISHED},
}


class TransitionRefused(Exception):
    """A status change that the life cycle does not allow (e.g. re-running a submission still in progress)."""


def web_status(verdict: str) -> str:
    """kernels.results.Verdict -> Submission.Status (kernels/README.md, "Web statuses")."""
    return {"accepted": Status.PASSED, "timed_out": Status.TIMED_OUT, "internal_error": Status.ERROR}.get(
        verdict, Status.FAILED
    )


def _move(submission: Submission, status: str) -> None:
    if status not in TRANSITIONS[submission.status]:
        raise TransitionRefused(f"a submission cannot go from {submission.status} to {status}")
    submission.status = status


def _finish(submission: Submission, status: str, verdict: str, message: str) -> None:
    _move(submission, status)
    submission.verdict, submission.message = verdict, message
    submission.finished_at, submission.deadline_at = timezone.now(), None


# The large columns a state change never reads: left out of the locked row, and so out of its save() (Django saves
# only the fields it loaded or that were set), so that claiming a job or recording its result neither reads nor
# rewrites the cubin (about 130 KB of JSON for the sgemm example). bench/gpu_db_cost.py measures it.
_UNREAD_BY_TRANSITIONS = ("source", "compiled", "compile_log", "result")


def _locked(submission_id: int) -> Submission | None:
    return (
        Submission.objects.select_for_update(of=("self",))
        .select_related("exercise")
        .defer(*_UNREAD_BY_TRANSITIONS)
        .filter(pk=submission_id)
        .first()
    )


def _seconds(n: int):
    return timezone.now() + timedelta(seconds=n)


# A broker that is down fails the publish with this (after Celery's own short publish retries).


def _send_on_commit(submission: Submission, send) -> None:
    """Publish once the transaction commits. A broker outage must not turn the reader's request into a 500
    (the submission is stored and took its quota slot): the failure is logged and the submission's deadline
    set to now, so the sweeper (every minute) sends it again. That sweep is not one of its attempts."""
    status, sweeps = submission.status, submission.sweeps

    def send_or_defer():
        try:
            send()
        except BROKER_ERRORS as error:
            logger.warning(
                "submission %s: the broker refused its %s job (%s); the sweeper sends it again",
                submission.pk,
                status,
                error,
            )
            Submission.objects.filter(pk=submission.pk, status=status).update(deadline_at=timezone.now(), sweeps=sweeps)

    transaction.on_commit(send_or_defer)


def _enqueue_compile(submission: Submission) -> None:
    from apps.submissions.tasks import submission_compile_task

    # The queue (`compile`) comes from CELERY_TASK_ROUTES.
    _send_on_commit(submission, lambda: submission_compile_task.delay(submission.pk))


def _enqueue_judge(submission: Submission) -> None:
    from apps.submissions.tasks import submission_judge_task

    # Named here, not in CELERY_TASK_ROUTES: the queue depends on this submission's GPU kind, which a
    # router would have to read back from the database for every message.
    queue = f"gpu.{submission.gpu_kind}"
    _send_on_commit(submission, lambda: submission_judge_task.apply_async(args=[submission.pk], queue=queue))

"""The sweeper (beat, every minute): submissions stuck past their deadline, or running on a worker whose
heartbeat stopped, are queued again, and fail once they have been stuck too often. A job the broker refused
(an outage) is due at once, so it is sent again within a minute."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.submissions.models import GpuWorker, Submission
from apps.submissions.selectors import gpu_workers_online_qs
from apps.submissions.services.lifecycle import IN_PROGRESS, _enqueue_compile, _enqueue_judge, _finish, _move

logger = logging.getLogger(__name__)
Status = Submission.Status


@dataclass
class SweepReport:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def _stuck(now):
    online = gpu_workers_online_qs(now=now).values_list("hostname", flat=True)
    window = timedelta(seconds=settings.GPU_WORKER_ONLINE_WINDOW_S)
    past_deadline = Submission.objects.filter(status__in=IN_PROGRESS, deadline_at__lt=now)
    # A running job whose worker stopped sending heartbeats comes back at once, not only at its deadline.
    worker_lost = Submission.objects.filter(status=Status.RUNNING, started_at__lt=now - window).exclude(
        worker__in=online
    )
    return past_deadline | worker_lost


def submission_sweep(*, now=None) -> SweepReport:
    """Re-queue submissions stuck past their deadline (or on a lost worker), up to SUBMISSION_MAX_ATTEMPTS
    times; after that they fail with ERROR so that no reader waits forever."""
    now = now or timezone.now()
    report = SweepReport()
    for submission_id in _stuck(now).values_list("pk", flat=True):
        with transaction.atomic():
            submission = (
                _stuck(now)
                .select_for_update(skip_locked=True, of=("self",))
                .select_related("exercise")
                .filter(pk=submission_id)
                .first()
            )
            if submission is None:
                continue  # finished or taken meanwhile
            stage = submission.get_status_display().lower()
            if submission.status == Status.RUNNING:
                GpuWorker.objects.filter(hostname=submission.worker, current_submission=submission).update(
                    current_submission=None
                )
            if submission.sweeps >= settings.SUBMISSION_MAX_ATTEMPTS:
                _finish(
                    submission,
                    Status.ERROR,
                    "internal_error",
                    f"Stuck ({stage}) {submission.sweeps + 1} times; the judge gave up. Staff can re-run it.",
                )
                report.failed.append(submission.pk)
            elif submission.status in (Status.QUEUED, Status.COMPILING):
                submission.status = Status.QUEUED  # QUEUED -> QUEUED is a re-send, not a transition
                submission.deadline_at = now + timedelta(seconds=settings.SUBMISSION_COMPILE_DEADLINE_S)
                _enqueue_compile(submission)
                report.requeued.append(submission.pk)
            else:
                if submission.status == Status.RUNNING:
                    _move(submission, Status.COMPILED)
                submission.deadline_at = now + timedelta(seconds=settings.SUBMISSION_GPU_QUEUE_DEADLINE_S)
                _enqueue_judge(submission)
                report.requeued.append(submission.pk)
            # Counted after the enqueue: one the broker refuses gives this sweep back (lifecycle._send_on_commit).
            submission.sweeps += 1
            submission.save()
    if report.requeued or report.failed:
        logger.warning("sweeper: re-queued %s, failed %s", report.requeued, report.failed)
    return report

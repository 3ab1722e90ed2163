"""Staff actions from admin: re-running a finished submission, and deciding on a flagged result."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.submissions.models import Submission
from apps.submissions.services.lifecycle import TransitionRefused, _enqueue_compile, _locked, _move, _seconds

logger = logging.getLogger(__name__)
Status = Submission.Status


@transaction.atomic
def submission_rerun(*, submission: Submission, by) -> Submission:
    """Judge a finished submission again from its stored source (e.g. after a judge fix)."""
    submission = _locked(submission.pk)
    if not submission.is_finished:
        raise TransitionRefused("This submission is still in progress; re-run it once it has finished.")
    _move(submission, Status.QUEUED)
    for name in ("verdict", "message", "compile_log", "gpu_name", "worker", "gpu_index", "gpu_uuid", "review_note"):
        setattr(submission, name, "")
    for name in (
        "compiled",
        "result",
        "pct_of_baseline",
        "tflops",
        "time_ms",
        "compiled_at",
        "started_at",
        "finished_at",
    ):
        setattr(submission, name, None)
    submission.review, submission.attempts, submission.sweeps = Submission.Review.NONE, 0, 0
    submission.deadline_at = _seconds(settings.SUBMISSION_COMPILE_DEADLINE_S)
    submission.save()
    _enqueue_compile(submission)
    logger.info("submission %s re-run by %s", submission.public_id, by)
    return submission


@transaction.atomic
def submission_review_set(*, submission: Submission, valid: bool, note: str = "", by) -> Submission:
    """A person's decision on a flagged result: valid results enter the leaderboard, invalid ones never."""
    submission = _locked(submission.pk)
    if submission.review == Submission.Review.NONE:
        raise TransitionRefused("Only flagged results are reviewed.")
    submission.review = Submission.Review.VALID if valid else Submission.Review.INVALID
    who = getattr(by, "email", "") or str(by)
    submission.review_note = f"{note.strip()} ({who}, {timezone.now():%Y-%m-%d})".strip()
    submission.save(update_fields=["review", "review_note"])
    return submission

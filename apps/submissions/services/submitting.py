"""Submitting a kernel: the checks a reader's file must pass, the hourly and daily quota, and the stored
submission whose compile is queued."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.reading.policy import can_read
from apps.submissions.models import Exercise, Submission
from apps.submissions.selectors import exercise_gpu_kind, quota_get
from apps.submissions.services.lifecycle import _enqueue_compile, _seconds


class SubmissionRefused(Exception):
    """A submission is not accepted; `message` is for the reader, `field` names the input at fault."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message, self.field = message, field


def plan_into_source(source: str, plan: str) -> str:
    """The launch plan typed beside the editor replaces any `/* @plan ... */` block of the file. The file's blocks are
    found by the judge's own scanner (linear in the file's length, kernels.plan.plan_blocks)."""
    from kernels.plan import PLAN_OPENING, PlanError, plan_blocks

    body = plan.strip()
    opening = PLAN_OPENING.match(body)
    if opening and body.endswith("*/") and len(body) >= opening.end() + 2:  # the whole comment was pasted
        body = body[opening.end() : -2].strip()
    if "*/" in body:
        raise SubmissionRefused("The launch plan may not contain '*/' (it is stored inside a comment).", field="plan")
    try:
        blocks = plan_blocks(source)
    except PlanError as error:
        raise SubmissionRefused(f"The file's launch plan: {error}", field="source") from None
    kept, position = [], 0
    for block in blocks:
        kept.append(source[position : block.start])
        position = block.end
    kept.append(source[position:])
    return f"{''.join(kept).rstrip()}\n\n/* @plan\n{body}\n*/\n"


def _refuse_oversize(source: str) -> None:
    limit = Submission.source_max_bytes()
    size = len(source.encode("utf-8"))
    if size > limit:
        raise SubmissionRefused(
            f"The source is {-(-size // 1024):,} KB; the limit is {limit // 1024:,} KB.", field="source"
        )


def submission_create(
    *, user, exercise: Exercise, source: str, plan: str | None = None, filename: str = ""
) -> Submission:
    """Store a reader's kernel (source first), then queue its compile. Raises SubmissionRefused."""
    from kernels.plan import MAX_PLAN_CHARS, PlanError, extract_plan

    if user is None or not user.is_authenticated:
        raise SubmissionRefused("Sign in to submit a kernel.")
    if not can_read(user, exercise.capsule):
        raise SubmissionRefused("This exercise belongs to a locked capsule: subscribe to submit kernels to it.")
    if not exercise.is_open:
        raise SubmissionRefused("This exercise is closed: it shows results but takes no new submissions.")
    source = (source or "").replace("\r\n", "\n")
    if not source.strip():
        raise SubmissionRefused(
            "The source is empty: paste your kernel into the editor or upload a .cu file.", field="source"
        )
    if "\x00" in source:
        raise SubmissionRefused("The file is not CUDA source text (it contains NUL bytes).", field="source")
    # Sizes first, before anything looks for the plan (and again once a typed plan joined the file).
    _refuse_oversize(source)
    if plan is not None and len(plan) > MAX_PLAN_CHARS:
        raise SubmissionRefused(f"The launch plan is over the limit of {MAX_PLAN_CHARS:,} characters.", field="plan")
    if plan is not None and plan.strip():
        source = plan_into_source(source, plan)
        _refuse_oversize(source)
    try:
        extract_plan(source)
    except PlanError as error:
        raise SubmissionRefused(f"The launch plan does not parse: {error}", field="plan") from None

    with transaction.atomic():
        # One reader's submissions are counted one at a time, so two at once cannot both take the last slot.
        user._meta.model.objects.select_for_update().filter(pk=user.pk).first()  # _meta: request.user is a lazy proxy
        quota = quota_get(user)
        if quota.exhausted:
            when = timezone.localtime(quota.resets_at).strftime("%H:%M") if quota.resets_at else "later"
            raise SubmissionRefused(
                f"You have used your {quota.per_hour} submissions per hour / {quota.per_day} per day; "
                f"the next one is possible at {when}."
            )
        submission = Submission.objects.create(
            user=user,
            exercise=exercise,
            source=source,
            filename=(filename or "")[: Submission.FILENAME_MAX_CHARS],
            source_sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
            gpu_kind=exercise_gpu_kind(exercise),  # a GPU that runs the exercise's target
            arch=exercise.arch,
            status=Submission.Status.QUEUED,
            deadline_at=_seconds(settings.SUBMISSION_COMPILE_DEADLINE_S),
        )
        _enqueue_compile(submission)
    return submission

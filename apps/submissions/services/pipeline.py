"""The judge pipeline's two stages: NVRTC on a CPU worker (`compile` queue), then the run on a GPU worker
(`gpu.<kind>`), claimed by the worker and recorded once.

Celery delivers a job at least once (acks_late, reject_on_worker_lost), so each stage is idempotent: a
stage that finds its work done does nothing, and a GPU run is recorded only by the attempt that started
last (`attempts` is the token), so a job that ran twice after a lost worker is recorded once.

A GPU message means "there is a compiled submission to run", not "run this one": the worker claims the
oldest submission of the reader served least recently (`submission_gpu_claim`), so one reader's twenty
queued kernels do not hold back another reader's one by more than the job already running. Each compiled
submission has one message, each message claims one submission, so every submission is still run once.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.submissions.models import GpuWorker, Submission, Unit
from apps.submissions.selectors import gpu_claim_order, gpu_workers_online_qs
from apps.submissions.services.lifecycle import (
    TransitionRefused,
    _enqueue_judge,
    _finish,
    _locked,
    _move,
    _seconds,
    web_status,
)
from apps.submissions.services.profile_runs import profile_after_judgement

logger = logging.getLogger(__name__)
Status = Submission.Status


# --- The compile stage (CPU) ------------------------------------------------------------------


def submission_compile(*, submission_id: int) -> Submission | None:
    """NVRTC (or Triton, for a Triton submission) on a CPU worker; on success the GPU job is queued. None when there
    was nothing to do."""
    from kernels import compile_submission

    with transaction.atomic():
        submission = _locked(submission_id)
        if submission is None or submission.status not in (Status.QUEUED, Status.COMPILING):
            return None  # compiled already (a redelivered message) or re-queued since
        _move(submission, Status.COMPILING)
        submission.deadline_at = _seconds(settings.SUBMISSION_COMPILE_DEADLINE_S)
        submission.save(update_fields=["status", "deadline_at"])
    try:  # outside a transaction: NVRTC may take seconds, and nothing holds a lock meanwhile
        compiled = compile_submission(
            submission.source, submission.exercise.problem, arch=submission.arch, language=submission.language
        )
    except Exception:  # a fault of the judge (unknown problem, NVRTC missing), not of the reader's file
        logger.exception("compile of submission %s failed", submission_id)
        compiled = None
    with transaction.atomic():
        submission = _locked(submission_id)
        if submission is None or submission.status != Status.COMPILING:
            return submission
        submission.compiled_at = timezone.now()
        if compiled is None:
            _finish(
                submission,
                Status.ERROR,
                "internal_error",
                "The judge could not compile this; it is not your fault. Staff can re-run it.",
            )
        elif compiled.ok:
            _move(submission, Status.COMPILED)
            submission.verdict, submission.message = compiled.verdict.value, compiled.message or "Compiled."
            submission.compile_log, submission.compiled = compiled.log, compiled.to_dict()
            submission.deadline_at = _seconds(settings.SUBMISSION_GPU_QUEUE_DEADLINE_S)
            _enqueue_judge(submission)
        else:
            submission.compile_log, submission.compiled = compiled.log, compiled.to_dict()
            _finish(submission, web_status(compiled.verdict.value), compiled.verdict.value, compiled.message)
        submission.save()
    return submission


# --- The GPU stage --------------------------------------------------------------------------------


def _running_elsewhere(submission: Submission, worker_name: str) -> bool:
    """Another worker that is alive reports this submission as its current job: this message is a duplicate."""
    if submission.status != Status.RUNNING or submission.worker == worker_name:
        return False  # the same worker got it back: its previous process died (one job per GPU)
    return gpu_workers_online_qs().filter(hostname=submission.worker, current_submission=submission).exists()


@transaction.atomic
def submission_gpu_start(*, submission_id: int, worker_name: str, gpu_index: str = "") -> int | None:
    """Claim the submission for a GPU run on the worker's GPU (`gpu_index`, the host's); returns the attempt
    number (the token for recording), or None when the job is finished, runs elsewhere, or has lost its
    worker too often."""
    submission = _locked(submission_id)
    if submission is None or submission.is_finished or _running_elsewhere(submission, worker_name):
        return None
    if submission.status not in (Status.COMPILED, Status.RUNNING):
        raise TransitionRefused(f"submission {submission.public_id} is {submission.status}, not compiled")
    if submission.attempts >= settings.SUBMISSION_MAX_ATTEMPTS:
        _finish(
            submission,
            Status.ERROR,
            "internal_error",
            f"The GPU worker was lost {submission.attempts} times while running this; staff can re-run it.",
        )
        submission.save()
        return None
    _move(submission, Status.RUNNING)
    submission.attempts += 1
    submission.worker, submission.started_at = worker_name, timezone.now()
    submission.gpu_index, submission.gpu_uuid = gpu_index, ""  # the UUID comes with this run's result
    submission.deadline_at = _seconds(submission.exercise.gpu_time_limit_s + settings.SUBMISSION_GPU_RUN_MARGIN_S)
    submission.save(
        update_fields=["status", "attempts", "worker", "gpu_index", "gpu_uuid", "started_at", "deadline_at"]
    )
    GpuWorker.objects.filter(hostname=worker_name).update(current_submission=submission, last_seen_at=timezone.now())
    return submission.attempts


# How many submissions one claim may find taken by another worker before it gives up. Only where the
# database has no SKIP LOCKED (SQLite, which serialises writers anyway) can two workers pick the same one.
_CLAIM_TRIES = 5


def _orphan(gpu_kind: str, worker_name: str, exclude: set[int]) -> int | None:
    """A job left running under this worker's name: its process died in the middle of it (killed, and
    started again under the same name), or the job's record failed and its task is retried."""
    return (
        Submission.objects.filter(status=Status.RUNNING, worker=worker_name, gpu_kind=gpu_kind)
        .exclude(pk__in=exclude)
        .values_list("pk", flat=True)
        .first()
    )


def _fairest_compiled(gpu_kind: str, exclude: set[int]) -> int | None:
    """The next compiled submission for a GPU of this kind, in the order readers are shown (gpu_claim_order).
    Locked until the transaction ends; rows another worker has locked are skipped (PostgreSQL), not waited for."""
    return (
        gpu_claim_order(gpu_kind)
        .exclude(pk__in=exclude)
        .select_for_update(skip_locked=True)
        .values_list("pk", flat=True)
        .first()
    )


def submission_gpu_claim(*, submission_id: int, worker_name: str, gpu_index: str = "") -> tuple[int, int] | None:
    """The GPU task's claim, for the message of `submission_id`: (the submission to run, its attempt), or
    None when there is nothing to run. A message whose submission is running is a redelivery after its
    worker was lost: that one runs again, unless it runs elsewhere. Otherwise (and then) an orphan of this
    worker (`_orphan`), else the fairest compiled submission of its GPU kind (`_fairest_compiled`), whichever
    message announced it.

    Why a redelivery whose job runs elsewhere still claims: on a node with several GPUs, a worker killed
    mid-job and restarted re-runs its orphan first, with the next message it gets, which announced another
    submission; the killed job's message, given back by the broker later, is then the only one left for
    that other submission."""
    own = Submission.objects.filter(pk=submission_id).values("status", "gpu_kind").first()
    if own is None:
        return None
    if own["status"] == Status.RUNNING:
        attempt = submission_gpu_start(submission_id=submission_id, worker_name=worker_name, gpu_index=gpu_index)
        if attempt:
            return submission_id, attempt
    taken: set[int] = set()
    for _ in range(_CLAIM_TRIES):
        with transaction.atomic():
            orphan = _orphan(own["gpu_kind"], worker_name, taken)
            candidate = orphan or _fairest_compiled(own["gpu_kind"], taken)
            if candidate is None:
                return None
            attempt = submission_gpu_start(submission_id=candidate, worker_name=worker_name, gpu_index=gpu_index)
            if attempt and orphan and own["status"] == Status.COMPILED:
                _resend(submission_id)
        if attempt:
            return candidate, attempt
        taken.add(candidate)  # finished, running elsewhere, or out of attempts meanwhile
    return None


def _resend(submission_id: int) -> None:
    """A message that re-ran an orphan announced a compiled submission that it leaves waiting: send that one
    a message of its own. Else it would wait for the lost job's message, which the broker gives back only
    after its visibility timeout (30 minutes); when that one comes, it finds nothing left, or other work."""
    submission = Submission.objects.filter(pk=submission_id, status=Status.COMPILED).first()
    if submission is not None:
        _enqueue_judge(submission)


def submission_orphans_resend(*, worker_name: str) -> list[int]:
    """At a GPU worker's start: each job left running under its name (its previous process was killed in
    the middle of it, and it was started again under the same name) gets a message now, so that it is
    judged again within seconds, here or on another GPU, rather than when the broker gives the lost message
    back (after its visibility timeout, 30 minutes). Only the latest attempt records, so the lost message,
    when it comes, finds the job done and runs other work or none."""
    orphans = list(Submission.objects.filter(status=Status.RUNNING, worker=worker_name))
    for submission in orphans:
        _enqueue_judge(submission)
    ids = [s.pk for s in orphans]
    if ids:
        logger.warning("GPU worker %s: jobs left running by its previous process sent again: %s", worker_name, ids)
    return ids


def _headline(result: dict) -> dict | None:
    """The benchmark pages sort and chart by: the problem's largest shape, by FLOPs, or by bytes moved for
    problems reported in GB/s (memory-bound: a transpose does no arithmetic at all)."""
    benchmarks = result.get("benchmarks") or []
    if not benchmarks:
        return None
    size = "bytes_moved" if benchmarks[0].get("unit") == Unit.GBPS else "flops"
    return max(benchmarks, key=lambda b: b.get(size) or 0)


def _headline_figures(result: dict) -> dict:
    """The columns copied from the headline benchmark. Results stored before GB/s problems existed have no
    `unit` (they are TFLOP/s) and may lack `gbps`."""
    headline = _headline(result) or {}
    return {
        "pct_of_baseline": headline.get("pct_of_baseline"),
        "pct_of_roofline": headline.get("pct_of_roofline"),
        "tflops": headline.get("tflops"),
        "gbps": headline.get("gbps"),
        "unit": headline.get("unit") or Unit.TFLOPS,
        "time_ms": (headline.get("candidate") or {}).get("median_ms"),
    }


# A result faster than the vendor library or above the measured roofline waits for a person (ARCHITECTURE.md,
# "The submission pipeline").
_REVIEW_FLAGS = ("faster than", "above the measured roofline")


@transaction.atomic
def submission_gpu_record(*, submission_id: int, attempt: int, result, worker_name: str = "") -> bool:
    """Store the judge's JudgeResult. Only the latest attempt records, once; returns whether it did."""
    submission = _locked(submission_id)
    if submission is None or submission.status != Status.RUNNING or submission.attempts != attempt:
        logger.info(
            "submission %s: result of attempt %s not recorded (now %s, attempt %s)",
            submission_id,
            attempt,
            submission and submission.status,
            submission and submission.attempts,
        )
        return False
    data = result.to_dict()
    submission.result = data
    _finish(submission, web_status(data["verdict"]), data["verdict"], data["message"])
    if _headline(data):
        for name, value in _headline_figures(data).items():
            setattr(submission, name, value)
        if any(flag.startswith(_REVIEW_FLAGS) for bench in data["benchmarks"] for flag in bench.get("flags", [])):
            submission.review = Submission.Review.PENDING
    telemetry = data.get("telemetry") or {}
    submission.gpu_name = (telemetry.get("gpu_name") or "")[:100]
    submission.gpu_uuid = (telemetry.get("gpu_uuid") or "")[:64]
    submission.save()
    profile_after_judgement(submission)  # issue 43: a pass is profiled, once this record commits
    GpuWorker.objects.filter(hostname=worker_name).update(
        jobs_done=F("jobs_done") + 1, current_submission=None, last_seen_at=timezone.now()
    )
    return True


def submission_judge(*, submission_id: int, worker_name: str, judge, gpu_index: str = "") -> bool:
    """The GPU task's service: claim (the fairest submission, not necessarily the message's own), judge in
    the worker's warm sandbox (`kernels.GpuJudge`) on the worker's GPU (`gpu_index`), record."""
    from kernels import CompileResult, JudgeOptions

    claimed = submission_gpu_claim(submission_id=submission_id, worker_name=worker_name, gpu_index=gpu_index)
    if claimed is None:
        return False
    submission_id, attempt = claimed
    submission = Submission.objects.select_related("exercise").get(pk=submission_id)
    compiled = CompileResult.from_dict(submission.compiled)
    result = judge.judge(compiled, JudgeOptions(timeout_s=float(submission.exercise.gpu_time_limit_s)))
    return submission_gpu_record(submission_id=submission_id, attempt=attempt, result=result, worker_name=worker_name)

"""Writes for exercises and submissions: creating one, the compile stage, the GPU stage, the sweeper,
re-runs and reviews. Every status change happens here (DESIGN.md, convention 5).

A submission's life: QUEUED -> COMPILING -> COMPILED -> RUNNING -> PASSED | FAILED | ERROR | TIMED_OUT.
Celery delivers a job at least once (acks_late, reject_on_worker_lost), so each stage is idempotent: a
stage that finds its work done does nothing, and a GPU run is recorded only by the attempt that started
last (`attempts` is the token), so a job that ran twice after a lost worker is recorded once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.reading.policy import can_read
from apps.submissions.models import Exercise, GpuWorker, Submission
from apps.submissions.selectors import gpu_workers_online_qs, quota_get

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
_PLAN_BLOCK = re.compile(r"/\*\s*@plan\b.*?\*/", re.DOTALL)


class SubmissionRefused(Exception):
    """A submission is not accepted; `message` is for the reader, `field` names the input at fault."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message, self.field = message, field


class TransitionRefused(Exception):
    """A status change that the life cycle does not allow (e.g. re-running a submission still in progress)."""


def _move(submission: Submission, status: str) -> None:
    if status not in TRANSITIONS[submission.status]:
        raise TransitionRefused(f"a submission cannot go from {submission.status} to {status}")
    submission.status = status


def web_status(verdict: str) -> str:
    """kernels.results.Verdict -> Submission.Status (kernels/README.md, "Web statuses")."""
    return {"accepted": Status.PASSED, "timed_out": Status.TIMED_OUT, "internal_error": Status.ERROR}.get(
        verdict, Status.FAILED
    )


def _locked(submission_id: int) -> Submission | None:
    return (
        Submission.objects.select_for_update(of=("self",)).select_related("exercise").filter(pk=submission_id).first()
    )


def _seconds(n: int):
    return timezone.now() + timedelta(seconds=n)


# --- Exercises (imported with the book) ------------------------------------------------------------


def exercises_import(*, book, capsules) -> list[str]:
    """Create or update the exercises that capsules' front matter declares (apps.catalog.content_files);
    an exercise whose declaration disappeared is closed, not deleted, so its submissions stay.
    Runs inside book_import's transaction. Returns what changed, e.g. ["created 32 sgemm"]."""
    from apps.catalog.markdown import render_markdown
    from apps.catalog.models import Capsule

    changes = []
    by_number = {c.number: c for c in Capsule.objects.filter(book=book)}
    declared = set()
    for data in capsules:
        if data.exercise is None:
            continue
        declared.add(data.number)
        ex = data.exercise
        values = {
            "problem": ex.problem,
            "title": ex.title,
            "statement": ex.statement,
            "starter_source": ex.starter_source,
            "starter_name": ex.starter_name,
            "reference_step": ex.reference_step,
            "arch": ex.arch,
            "gpu_time_limit_s": ex.gpu_time_limit_s,
            "is_open": ex.is_open,
        }
        exercise = Exercise.objects.filter(capsule=by_number[data.number]).first()
        if exercise is not None and all(getattr(exercise, k) == v for k, v in values.items()):
            continue
        action = "created" if exercise is None else "updated"
        exercise = exercise or Exercise(capsule=by_number[data.number])
        for name, value in values.items():
            setattr(exercise, name, value)
        exercise.statement_html = render_markdown(ex.statement, figure_url=lambda name: name).html
        exercise.save()
        changes.append(f"{action} {data.number:02d} {ex.problem}")
    for gone in Exercise.objects.filter(capsule__book=book, is_open=True).exclude(capsule__number__in=declared):
        gone.is_open = False
        gone.save(update_fields=["is_open", "updated_at"])
        changes.append(f"closed {gone.capsule.number:02d} {gone.problem}")
    return changes


@transaction.atomic
def exercise_save(*, exercise: Exercise) -> Exercise:
    """An edit from admin: the statement's HTML follows its Markdown."""
    from apps.catalog.markdown import render_markdown

    exercise.statement_html = render_markdown(exercise.statement, figure_url=lambda name: name).html
    exercise.save()
    return exercise


# --- Creating -------------------------------------------------------------------------------------


def plan_into_source(source: str, plan: str) -> str:
    """The launch plan typed beside the editor replaces any `/* @plan ... */` block of the file."""
    body = plan.strip()
    wrapped = _PLAN_BLOCK.fullmatch(body)
    if wrapped:  # the whole comment was pasted
        body = re.sub(r"\A/\*\s*@plan\b|\*/\Z", "", body).strip()
    if "*/" in body:
        raise SubmissionRefused("The launch plan may not contain '*/' (it is stored inside a comment).", field="plan")
    kept = _PLAN_BLOCK.sub("", source).rstrip()
    return f"{kept}\n\n/* @plan\n{body}\n*/\n"


def submission_create(
    *, user, exercise: Exercise, source: str, plan: str | None = None, filename: str = ""
) -> Submission:
    """Store a reader's kernel (source first), then queue its compile. Raises SubmissionRefused."""
    from kernels.plan import PlanError, extract_plan

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
    if plan is not None and plan.strip():
        source = plan_into_source(source, plan)
    limit = settings.SUBMISSION_MAX_SOURCE_BYTES
    size = len(source.encode("utf-8"))
    if size > limit:
        raise SubmissionRefused(
            f"The source is {-(-size // 1024):,} KB; the limit is {limit // 1024:,} KB.", field="source"
        )
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
            filename=(filename or "")[:200],
            source_sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
            gpu_kind=settings.DEFAULT_GPU_KIND,
            arch=exercise.arch,
            status=Status.QUEUED,
            deadline_at=_seconds(settings.SUBMISSION_COMPILE_DEADLINE_S),
        )
        _enqueue_compile(submission)
    return submission


def _enqueue_compile(submission: Submission) -> None:
    from apps.submissions.tasks import submission_compile_task

    transaction.on_commit(lambda: submission_compile_task.apply_async(args=[submission.pk], queue="compile"))


def _enqueue_judge(submission: Submission) -> None:
    from apps.submissions.tasks import submission_judge_task

    queue = f"gpu.{submission.gpu_kind}"
    transaction.on_commit(lambda: submission_judge_task.apply_async(args=[submission.pk], queue=queue))


# --- The compile stage (CPU) ------------------------------------------------------------------


def submission_compile(*, submission_id: int) -> Submission | None:
    """NVRTC on a CPU worker; on success the GPU job is queued. None when there was nothing to do."""
    from kernels import compile_submission

    with transaction.atomic():
        submission = _locked(submission_id)
        if submission is None or submission.status not in (Status.QUEUED, Status.COMPILING):
            return None  # compiled already (a redelivered message) or re-queued since
        _move(submission, Status.COMPILING)
        submission.deadline_at = _seconds(settings.SUBMISSION_COMPILE_DEADLINE_S)
        submission.save(update_fields=["status", "deadline_at"])
    try:  # outside a transaction: NVRTC may take seconds, and nothing holds a lock meanwhile
        compiled = compile_submission(submission.source, submission.exercise.problem, arch=submission.arch)
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


def _finish(submission: Submission, status: str, verdict: str, message: str) -> None:
    _move(submission, status)
    submission.verdict, submission.message = verdict, message
    submission.finished_at, submission.deadline_at = timezone.now(), None


# --- The GPU stage --------------------------------------------------------------------------------


def _running_elsewhere(submission: Submission, worker_name: str) -> bool:
    """Another worker that is alive reports this submission as its current job: this message is a duplicate."""
    if submission.status != Status.RUNNING or submission.worker == worker_name:
        return False  # the same worker got it back: its previous process died (one job per GPU)
    return gpu_workers_online_qs().filter(hostname=submission.worker, current_submission=submission).exists()


@transaction.atomic
def submission_gpu_start(*, submission_id: int, worker_name: str) -> int | None:
    """Claim the submission for a GPU run; returns the attempt number (the token for recording), or None
    when the job is finished, runs elsewhere, or has lost its worker too often."""
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
    submission.deadline_at = _seconds(submission.exercise.gpu_time_limit_s + settings.SUBMISSION_GPU_RUN_MARGIN_S)
    submission.save(update_fields=["status", "attempts", "worker", "started_at", "deadline_at"])
    GpuWorker.objects.filter(hostname=worker_name).update(current_submission=submission, last_seen_at=timezone.now())
    return submission.attempts


def _headline(result: dict) -> dict | None:
    """The benchmark at the problem's largest shape: the figure pages sort and chart by."""
    benchmarks = result.get("benchmarks") or []
    return max(benchmarks, key=lambda b: b.get("flops") or 0) if benchmarks else None


# A result faster than the vendor library or above the measured roofline waits for a person (DESIGN.md).
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
    headline = _headline(data)
    if headline:
        submission.pct_of_baseline, submission.tflops = headline["pct_of_baseline"], headline["tflops"]
        submission.time_ms = headline["candidate"]["median_ms"]
        if any(flag.startswith(_REVIEW_FLAGS) for bench in data["benchmarks"] for flag in bench.get("flags", [])):
            submission.review = Submission.Review.PENDING
    submission.gpu_name = ((data.get("telemetry") or {}).get("gpu_name") or "")[:100]
    submission.save()
    GpuWorker.objects.filter(hostname=worker_name).update(
        jobs_done=F("jobs_done") + 1, current_submission=None, last_seen_at=timezone.now()
    )
    return True


def submission_judge(*, submission_id: int, worker_name: str, judge) -> bool:
    """The GPU task's service: claim, judge in the worker's warm sandbox (`kernels.GpuJudge`), record."""
    from kernels import CompileResult, JudgeOptions

    attempt = submission_gpu_start(submission_id=submission_id, worker_name=worker_name)
    if attempt is None:
        return False
    submission = Submission.objects.select_related("exercise").get(pk=submission_id)
    compiled = CompileResult.from_dict(submission.compiled)
    result = judge.judge(compiled, JudgeOptions(timeout_s=float(submission.exercise.gpu_time_limit_s)))
    return submission_gpu_record(submission_id=submission_id, attempt=attempt, result=result, worker_name=worker_name)


# --- The sweeper ------------------------------------------------------------------------------------


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
            submission.sweeps += 1
            submission.save()
    if report.requeued or report.failed:
        logger.warning("sweeper: re-queued %s, failed %s", report.requeued, report.failed)
    return report


# --- Staff ------------------------------------------------------------------------------------------


@transaction.atomic
def submission_rerun(*, submission: Submission, by) -> Submission:
    """Judge a finished submission again from its stored source (e.g. after a judge fix)."""
    submission = _locked(submission.pk)
    if not submission.is_finished:
        raise TransitionRefused("This submission is still in progress; re-run it once it has finished.")
    _move(submission, Status.QUEUED)
    for name in ("verdict", "message", "compile_log", "gpu_name", "worker", "review_note"):
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


# --- The reference ladder ---------------------------------------------------------------------------



def _figures_of(result: dict) -> dict:
    headline = _headline(result)
    return {
        "verdict": result.get("verdict", ""),
        "pct_of_baseline": headline["pct_of_baseline"] if headline else None,
        "tflops": headline["tflops"] if headline else None,
        "time_ms": headline["candidate"]["median_ms"] if headline else None,
        "gpu_name": ((result.get("telemetry") or {}).get("gpu_name") or "")[:100],
    }


def reference_result_store(*, problem: str, gpu_kind: str, step: str, title: str, result: dict, measured_at=None):
    """One rung's JudgeResult (as JSON) for one GPU kind; measuring again replaces it."""
    from apps.submissions.models import ReferenceResult

    values = {
        "title": title[:200],
        "result": result,
        "measured_at": measured_at or timezone.now(),
        **_figures_of(result),
    }
    stored, _ = ReferenceResult.objects.update_or_create(problem=problem, gpu_kind=gpu_kind, step=step, defaults=values)
    return stored


def reference_ladder_measure(*, gpu_kind: str, judge, steps: list[str] | None = None, log=logger.info) -> list:
    """Judge every rung of kernels/reference (or those named) with `judge` on this GPU and store them.
    Runs where a GPU is: the `submissions.reference_ladder` task on a GPU worker, or `manage.py reference_ladder`."""
    from kernels import JudgeOptions, compile_submission
    from kernels.results import JudgeResult
    from kernels.tools.ladder import LADDER, arch_of, problem_of

    stored = []
    for path in LADDER:
        if steps and path.name not in steps and path.stem not in steps:
            continue
        source = path.read_text()
        title = source.splitlines()[0].lstrip("/ ").strip()
        problem = problem_of(path)
        compiled = compile_submission(source, problem, arch=arch_of(path))
        if compiled.ok:
            result = judge.judge(compiled, JudgeOptions(timeout_s=300.0))
        else:
            result = JudgeResult(
                verdict=compiled.verdict, message=compiled.message, problem=problem, error=compiled.log
            )
        stored.append(
            reference_result_store(
                problem=problem, gpu_kind=gpu_kind, step=path.name, title=title, result=result.to_dict()
            )
        )
        log(
            f"{path.name}: {result.verdict.value} {stored[-1].pct_of_baseline or 0:.1f}% of baseline, {stored[-1].tflops or 0:.2f} TFLOP/s"
        )
    return stored


def reference_results_export(*, gpu_kind: str) -> dict:
    from apps.submissions.models import ReferenceResult

    rows = ReferenceResult.objects.filter(gpu_kind=gpu_kind).order_by("step")
    return {
        "gpu_kind": gpu_kind,
        "results": [
            {
                "problem": r.problem,
                "step": r.step,
                "title": r.title,
                "measured_at": r.measured_at.isoformat(),
                "result": r.result,
            }
            for r in rows
        ],
    }


@transaction.atomic
def reference_results_load(*, path) -> int:
    """Load a ladder measured elsewhere (reference_results_export's JSON); returns how many rungs."""
    from django.utils.dateparse import parse_datetime

    data = json.loads(Path(path).read_text())
    for row in data["results"]:
        reference_result_store(
            problem=row["problem"],
            gpu_kind=data["gpu_kind"],
            step=row["step"],
            title=row["title"],
            result=row["result"],
            measured_at=parse_datetime(row["measured_at"]),
        )
    return len(data["results"])

"""Submissions' parts of pages that other apps compose (apps.pages): the exercise panel of a
capsule's progress page, its live list of submissions, and the GEMM ladder of "my progress".

Readers who may not read a capsule get only its exercise's title and the paywall: never the
statement, the starter or a form.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.utils.safestring import SafeString

from apps.catalog.models import Capsule
from apps.reading.policy import can_read
from apps.submissions import charts, selectors
from apps.submissions.forms import SubmissionForm
from apps.submissions.models import Exercise, ReferenceResult, Submission


@dataclass(frozen=True)
class LiveSubmissions:
    """The polled part of the exercise panel (templates/submissions/_live.html): the reader's
    submissions with their live status, the history chart and the reference ladder."""

    submissions: list[Submission]
    active: bool  # some submission is not finished: the page keeps polling
    state: str  # a digest of what is shown: the poll answers 204 while it is unchanged
    gpu_kind: str
    best: Submission | None
    rungs: list[ReferenceResult]
    history_chart: SafeString | None
    ladder_chart: SafeString | None

    @property
    def latest(self) -> Submission | None:
        return self.submissions[0] if self.submissions else None


def live_submissions(user, exercise: Exercise) -> LiveSubmissions:
    gpu_kind = selectors.default_gpu_kind()
    submissions = selectors.submissions_recent(user, exercise)
    workers: dict[str, int] = {}
    for submission in submissions:
        if not submission.is_finished:
            submission.queue_position = selectors.queue_position(submission)
            if submission.gpu_kind not in workers:
                workers[submission.gpu_kind] = selectors.gpu_workers_online(submission.gpu_kind)
            submission.workers_online = workers[submission.gpu_kind]
    state = "|".join(
        f"{s.public_id}:{s.status}:{getattr(s, 'queue_position', '')}:{getattr(s, 'workers_online', '')}"
        for s in submissions
    )
    points = [
        charts.Point(
            label=f"{p['created_at']:%d %b %H:%M}",
            value=p["pct_of_baseline"] if p["status"] == Submission.Status.PASSED else None,
        )
        for p in selectors.history_points(user, exercise)
    ]
    best = selectors.best_submission(user, exercise, gpu_kind)
    rungs = selectors.reference_ladder(exercise.problem, gpu_kind)
    bars = [charts.Bar(label=r.title or r.step, value=r.pct_of_baseline) for r in rungs]
    if best is not None:
        bars.append(charts.Bar(label="You (best)", value=best.pct_of_baseline, highlight=True))
        bars.sort(key=lambda b: (b.value is None, b.value or 0))
    return LiveSubmissions(
        submissions=submissions,
        active=any(not s.is_finished for s in submissions),
        state=hashlib.sha256(state.encode()).hexdigest()[:16],
        gpu_kind=gpu_kind,
        best=best,
        rungs=rungs,
        history_chart=charts.line_chart(
            points,
            chart_id=f"history-{exercise.pk}",
            title=f"Your submissions to {exercise.title}: % of cuBLAS",
            desc="Each finished submission in order; crosses on the axis did not pass.",
        )
        if points
        else None,
        ladder_chart=charts.bar_chart(
            bars,
            chart_id=f"ladder-{exercise.pk}",
            title=f"Your best against the reference ladder on {gpu_kind.upper()}",
            desc="Percent of cuBLAS at the largest benchmark shape.",
        )
        if bars
        else None,
    )


@dataclass(frozen=True)
class ExercisePanel:
    """templates/submissions/_exercise.html. When `locked`, only the exercise's title is shown."""

    capsule: Capsule
    exercise: Exercise
    locked: bool
    form: SubmissionForm | None = None
    quota: selectors.Quota | None = None
    live: LiveSubmissions | None = None


def exercise_panel(user, capsule: Capsule, *, form: SubmissionForm | None = None) -> ExercisePanel | None:
    """The exercise of `capsule` for `user`, or None when the capsule has none. `form` is a bound
    form with errors after a refused submission; otherwise the editor resumes where the reader
    left off: their latest source, else the starter."""
    exercise = selectors.exercise_of(capsule)
    if exercise is None:
        return None
    if not can_read(user, capsule):
        return ExercisePanel(capsule=capsule, exercise=exercise, locked=True)
    if form is None:
        form = SubmissionForm(initial={"source": selectors.latest_source(user, exercise) or exercise.starter_source})
    return ExercisePanel(
        capsule=capsule,
        exercise=exercise,
        locked=False,
        form=form,
        quota=selectors.quota_get(user),
        live=live_submissions(user, exercise),
    )


@dataclass(frozen=True)
class LadderPanel:
    """The reader's best on each GEMM exercise, in book order (templates/submissions/_gemm_ladder.html)."""

    rows: list[dict]
    chart: SafeString | None
    gpu_kind: str


def ladder_panel(user) -> LadderPanel:
    gpu_kind = selectors.default_gpu_kind()
    rows = selectors.gemm_ladder(user, gpu_kind)
    chart = (
        charts.bar_chart(
            [
                charts.Bar(
                    label=f"{row['capsule'].number:02d} {row['capsule'].title}",
                    value=row["best_pct"],
                    marker=row["book_pct"],
                    marker_label="book's kernel",
                )
                for row in rows
            ],
            chart_id="gemm-ladder",
            title=f"Your best % of cuBLAS per GEMM capsule on {gpu_kind.upper()}",
            desc="In book order; a tick marks the book's own kernel for the step, measured on the same GPU kind.",
        )
        if any(row["tried"] for row in rows)
        else None
    )
    return LadderPanel(rows=rows, chart=chart, gpu_kind=gpu_kind)

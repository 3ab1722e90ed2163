"""Submissions' parts of pages that other apps compose (apps.pages): the exercise panel of a
capsule's progress page, its live list of submissions, and the ladders of "my progress" (one per
problem family: the GEMM exercises together, every other problem its own).

Readers who may not read a capsule get only its exercise's title and the paywall: never the
statement, the starter or a form.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from apps.catalog.models import Capsule
from apps.reading.policy import can_read
from apps.submissions import charts, rungs, selectors
from apps.submissions.forms import SubmissionForm
from apps.submissions.models import Exercise, ReferenceResult, Submission
from config.caching import local_per_version


@dataclass(frozen=True)
class LiveSubmissions:
    """The polled part of the exercise panel (templates/submissions/_live.html): the reader's
    submissions with their live status, the history chart and the reference ladder."""

    submissions: list[Submission]
    measure: selectors.Measure
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


def _live_state(submissions: list[Submission]) -> str:
    """The digest of what the live list shows: each submission's status and, while it waits, its queue position
    and the GPU workers online (set on the unfinished submissions, for the template)."""
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
    return hashlib.sha256(state.encode()).hexdigest()[:16]


def live_state(user, exercise: Exercise) -> str:
    """What the 1.5 s poll compares before anything else (the view answers 204 while it is unchanged): the same
    digest as LiveSubmissions.state, from the submissions' states alone, a query, plus the queue position and GPU
    workers of one that waits; the panel (a dozen queries, two charts) is built only when it changed."""
    return _live_state(selectors.submissions_recent_states(user, exercise))


def live_submissions(user, exercise: Exercise) -> LiveSubmissions:
    gpu_kind = selectors.exercise_gpu_kind(exercise)
    submissions = selectors.submissions_recent(user, exercise)
    state = _live_state(submissions)
    measure = selectors.problem_measure(exercise.problem)
    points = [
        charts.Point(
            label=f"{p['created_at']:%d %b %H:%M}",
            value=p["grade"] if p["status"] == Submission.Status.PASSED else None,
        )
        for p in selectors.history_points(user, exercise)
    ]
    best = selectors.best_submission(user, exercise, gpu_kind)
    rungs = selectors.reference_ladder(exercise.problem, gpu_kind)
    bars = [charts.Bar(label=r.title or r.step, value=r.grade) for r in rungs]
    if best is not None:
        bars.append(charts.Bar(label="You (best)", value=best.grade, highlight=True))
        bars.sort(key=lambda b: (b.value is None, b.value or 0))
    return LiveSubmissions(
        submissions=submissions,
        measure=measure,
        active=any(not s.is_finished for s in submissions),
        state=state,
        gpu_kind=gpu_kind,
        best=best,
        rungs=rungs,
        history_chart=charts.line_chart(
            points,
            chart_id=f"history-{exercise.pk}",
            title=f"Your submissions to {exercise.title}: {measure.grade_label}",
            desc="Each finished submission in order; crosses on the axis did not pass.",
        )
        if points
        else None,
        ladder_chart=charts.bar_chart(
            bars,
            chart_id=f"ladder-{exercise.pk}",
            title=f"Your best against the reference ladder on {gpu_kind.upper()}",
            desc=f"{_grade_words(measure)} at the largest benchmark shape.",
        )
        if bars
        else None,
    )


def _grade_words(measure: selectors.Measure) -> str:
    if measure.by_roofline:
        return "Percent of the roofline (the bytes moved at the measured copy bandwidth)"
    return f"Percent of {measure.baseline}"


@dataclass(frozen=True)
class ExercisePanel:
    """templates/submissions/_exercise.html. When `locked`, only the exercise's title is shown."""

    capsule: Capsule
    exercise: Exercise
    measure: selectors.Measure
    locked: bool
    form: SubmissionForm | None = None
    quota: selectors.Quota | None = None
    live: LiveSubmissions | None = None
    starter_rung: rungs.Rung | None = None  # the rung the editor starts from, when the starter is one
    reference_rung: rungs.Rung | None = None  # the book's own kernel for the step
    gpu: selectors.GpuAvailability | None = None  # the GPU kind the exercise needs: online? its queue


def exercise_panel(user, capsule: Capsule, *, form: SubmissionForm | None = None) -> ExercisePanel | None:
    """The exercise of `capsule` for `user`, or None when the capsule has none. `form` is a bound
    form with errors after a refused submission; otherwise the editor resumes where the reader
    left off: in the language of their latest submission, their latest source in it, else the starter."""
    exercise = selectors.exercise_of(capsule)
    if exercise is None:
        return None
    measure = selectors.problem_measure(exercise.problem)
    if not can_read(user, capsule):
        return ExercisePanel(capsule=capsule, exercise=exercise, measure=measure, locked=True)
    if form is None:
        start = selectors.editor_start(user, exercise)
        form = SubmissionForm(
            initial={"source": start.texts[start.language], "language": start.language},
            languages=list(start.texts),
            starts=start.texts,
        )
    return ExercisePanel(
        capsule=capsule,
        exercise=exercise,
        measure=measure,
        locked=False,
        form=form,
        quota=selectors.quota_get(user),
        live=live_submissions(user, exercise),
        starter_rung=_starter_rung(exercise),
        reference_rung=rungs.rung_named(exercise.problem, exercise.reference_step),
        gpu=selectors.gpu_availability(exercise),
    )


def _starter_rung(exercise: Exercise) -> rungs.Rung | None:
    """The rung the starter was taken from: named by its file, with the same text (a book's own starter may share
    a rung's file name)."""
    rung = rungs.rung_named(exercise.problem, exercise.starter_name)
    return rung if rung is not None and rung.source == exercise.starter_source else None


@dataclass(frozen=True)
class Ladder:
    """One problem family's exercises in book order (templates/submissions/_ladders.html)."""

    key: str  # "gemm", or the problem's name: ids and CSS classes
    name: str  # "GEMM", or the problem's name
    measure: selectors.Measure  # the family's unit, baseline and ranking figure
    rows: list[selectors.LadderRow]
    chart: SafeString | None  # the reader's best per exercise with the book's tick; None before any submission

    @property
    def tried(self) -> int:
        """The reader's submissions to the family's exercises: none, and the page folds its table."""
        return sum(row.tried for row in self.rows)


@dataclass(frozen=True)
class LaddersPanel:
    ladders: list[Ladder]
    gpu_kind: str


def ladders_panel(user) -> LaddersPanel:
    """The reader's best on every exercise, one ladder per problem family, the families in the order the book
    reaches them."""
    gpu_kind = selectors.default_gpu_kind()
    families: dict[str, list[selectors.LadderRow]] = {}
    for row in selectors.exercise_ladders(user, gpu_kind):
        families.setdefault(selectors.problem_family(row.exercise.problem), []).append(row)
    return LaddersPanel(ladders=[_ladder(key, rows, gpu_kind) for key, rows in families.items()], gpu_kind=gpu_kind)


def _ladder(key: str, rows: list[selectors.LadderRow], gpu_kind: str) -> Ladder:
    measure = rows[0].measure
    if any(row.measure.baseline != measure.baseline for row in rows):
        measure = replace(measure, baseline="baseline", baseline_full="")
    name = "GEMM" if key == "gemm" else key
    chart = (
        charts.bar_chart(
            [
                charts.Bar(
                    label=f"{row.capsule.number:02d} {row.capsule.title}",
                    value=row.best.grade if row.best else None,
                    marker=row.book.grade if row.book else None,
                    marker_label="book's kernel",
                )
                for row in rows
            ],
            chart_id=f"{key}-ladder",
            title=f"Your best {measure.grade_label} per {name} capsule on {gpu_kind.upper()}",
            desc="In book order; a tick marks the book's own kernel for the step, measured on the same GPU kind.",
        )
        if any(row.tried for row in rows)
        else None
    )
    return Ladder(key=key, name=name, measure=measure, rows=rows, chart=chart)


# --- The end of a capsule's page (apps.reading.endings) ---------------------------------------------------------


@dataclass(frozen=True)
class CapsuleExercise:
    """What the reader's page shows of a capsule's exercise after its text: the same for everyone with the same
    access, so kept per public version (the exercises' table is part of it: apps.submissions.apps)."""

    exercise: Exercise
    statement_html: SafeString  # "" for an exercise made in admin without one: the template shows its text
    starter_html: SafeString  # the starter highlighted as the book's code blocks are
    gpu_kind: str


def _capsule_exercise(capsule: Capsule) -> tuple[CapsuleExercise | None]:
    from apps.catalog.markdown import highlight_lines

    exercise = selectors.exercise_of(capsule)
    if exercise is None:
        return (None,)
    return (
        CapsuleExercise(
            exercise=exercise,
            statement_html=mark_safe(exercise.statement_html),  # rendered and sanitised by the book's pipeline
            starter_html=mark_safe("\n".join(highlight_lines(exercise.starter_source, "cuda"))),
            gpu_kind=selectors.exercise_gpu_kind(exercise),
        ),
    )


def capsule_exercise_ending(request, capsule: Capsule, *, readable: bool) -> str:
    """The capsule's exercise at the end of its page: the statement, the starter and the way to submit (a signed-in
    reader: the editor on the progress page, with whether a GPU is online; anyone else: signing in) for those who
    may read it; its title and what subscribers get for the others."""
    (shown,) = local_per_version("capsule-exercise", capsule.pk, compute=lambda: _capsule_exercise(capsule))
    if shown is None:
        return ""
    signed_in = request.user.is_authenticated
    context = {
        "capsule": capsule,
        "shown": shown,
        "readable": readable,
        "measure": selectors.problem_measure(shown.exercise.problem),
        "gpu": selectors.gpu_availability(shown.exercise) if readable and signed_in else None,
    }
    return render_to_string("submissions/_capsule_exercise.html", context, request=request)

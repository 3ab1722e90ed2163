"""Reader-facing submission pages: the exercise panel of a capsule's progress page, the live list,
a submission's detail, the diff of two, the leaderboard, and the staff view of queues and workers.

Views parse input, call a service or a selector, and render; statuses change only in services.
Every page that shows an exercise's statement or starter asks `can_read` first; a submission is
shown to its owner and to staff, and is a 404 for everyone else.
"""

import hashlib
import uuid

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_POST

from apps.catalog import selectors as catalog
from apps.reading import selectors as reading
from apps.reading.policy import can_read
from apps.submissions import charts, selectors, services
from apps.submissions.diff import source_diff
from apps.submissions.forms import SubmissionForm
from apps.submissions.models import Submission

private_page = cache_control(private=True, no_store=True)

# htmx stops polling when a response has this status (and still swaps it in).
HTMX_STOP_POLLING = 286


# --- The exercise panel of /capsules/<slug>/progress/ ----------------------------------------------


def exercise_context(request, capsule, form: SubmissionForm | None = None) -> dict:
    """What templates/submissions/_exercise.html needs; used by reading's capsule_progress too.

    Readers who may not read the capsule get only the exercise's title and the paywall: never the
    statement, the starter or a form.
    """
    exercise = selectors.exercise_of(capsule)
    if exercise is None:
        return {"exercise": None}
    if not can_read(request.user, capsule):
        return {"exercise": exercise, "exercise_locked": True, "book": capsule.book}
    if form is None:
        # The editor resumes where the reader left off: their latest source, else the starter.
        form = SubmissionForm(
            initial={"source": selectors.latest_source(request.user, exercise) or exercise.starter_source}
        )
    return {
        "exercise": exercise,
        "exercise_locked": False,
        "form": form,
        "quota": selectors.quota_get(request.user),
        **_live_context(request.user, exercise),
    }


def _live_context(user, exercise) -> dict:
    """The polled part: the reader's submissions with live status, the history and the ladder."""
    gpu_kind = selectors.default_gpu_kind()
    submissions = selectors.submissions_recent(user, exercise)
    workers: dict[str, int] = {}
    for submission in submissions:
        if not submission.is_finished:
            submission.queue_position = selectors.queue_position(submission)
            if submission.gpu_kind not in workers:
                workers[submission.gpu_kind] = selectors.gpu_workers_online(submission.gpu_kind)
            submission.workers_online = workers[submission.gpu_kind]
    active = any(not s.is_finished for s in submissions)
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
    return {
        "submissions": submissions,
        "latest": submissions[0] if submissions else None,
        "active": active,
        "state": hashlib.sha256(state.encode()).hexdigest()[:16],
        "gpu_kind": gpu_kind,
        "best": best,
        "rungs": rungs,
        "history_chart": charts.line_chart(
            points,
            chart_id=f"history-{exercise.pk}",
            title=f"Your submissions to {exercise.title}: % of cuBLAS",
            desc="Each finished submission in order; crosses on the axis did not pass.",
        )
        if points
        else None,
        "ladder_chart": charts.bar_chart(
            bars,
            chart_id=f"ladder-{exercise.pk}",
            title=f"Your best against the reference ladder on {gpu_kind.upper()}",
            desc="Percent of cuBLAS at the largest benchmark shape.",
        )
        if bars
        else None,
    }


@require_POST
@login_required
@private_page
def submit(request, slug):
    capsule = catalog.capsule_get(slug)
    exercise = selectors.exercise_of(capsule)
    if exercise is None or not can_read(request.user, capsule):
        raise Http404("No exercise here")
    form = SubmissionForm(request.POST, request.FILES)
    if form.is_valid():
        source, plan, filename = form.effective()
        try:
            submission = services.submission_create(
                user=request.user, exercise=exercise, source=source, plan=plan, filename=filename
            )
        except services.SubmissionRefused as refusal:
            form = _form_keeping_text(request, form, source)
            form.add_error(refusal.field if refusal.field in ("source", "plan") else None, refusal.message)
        else:
            return redirect(
                reverse("reading:capsule-progress", args=[capsule.slug]) + f"#submission-{submission.public_id}"
            )
    return render(
        request,
        "reading/capsule_progress.html",
        {
            "capsule": capsule,
            "readable": True,
            "progress": reading.progress_get(request.user, capsule),
            **exercise_context(request, capsule, form=form),
        },
        status=400,
    )


def _form_keeping_text(request, form: SubmissionForm, source: str) -> SubmissionForm:
    """A bound copy whose editor holds what was submitted (an upload's text included), errors run."""
    data = request.POST.copy()
    data["source"] = source
    kept = SubmissionForm(data)
    kept.is_valid()
    return kept


@require_GET
@login_required
@private_page
def live(request, slug):
    """The polled fragment: 204 while nothing changed, 286 (stop polling) once all are finished."""
    capsule = catalog.capsule_get(slug)
    exercise = selectors.exercise_of(capsule)
    if exercise is None or not can_read(request.user, capsule):
        if request.htmx:  # access ended while the page was polling: say so once and stop the polling
            return HttpResponse(
                '<p class="muted">This exercise is no longer open to you. Reload the page.</p>',
                status=HTMX_STOP_POLLING,
            )
        raise Http404("No exercise here")
    if not request.htmx:
        return redirect("reading:capsule-progress", slug=capsule.slug)
    context = _live_context(request.user, exercise)
    return _polled(
        request,
        "submissions/_live.html",
        {"capsule": capsule, "exercise": exercise, **context},
        waiting=context["active"],
    )


def _polled(request, template: str, context: dict, *, waiting: bool) -> HttpResponse:
    """An htmx poll's answer: 204 while the page shows the current state; 286 (stop polling) once nothing is left to wait for."""
    if request.GET.get("state") == context["state"]:
        return HttpResponse(status=204)
    return render(request, template, context, status=200 if waiting else HTMX_STOP_POLLING)


# --- One submission -----------------------------------------------------------------------------


def _submission_or_404(request, public_id) -> Submission:
    submission = selectors.submission_for_viewer(request.user, public_id)
    if submission is None:
        raise Http404("No such submission")
    return submission


def _detail_context(submission) -> dict:
    if not submission.is_finished:
        submission.queue_position = selectors.queue_position(submission)
        submission.workers_online = selectors.gpu_workers_online(submission.gpu_kind)
    state = (
        f"{submission.status}:{getattr(submission, 'queue_position', '')}:{getattr(submission, 'workers_online', '')}"
    )
    result, compiled = submission.result or {}, submission.compiled or {}
    return {
        "submission": submission,
        "exercise": submission.exercise,
        "capsule": submission.exercise.capsule,
        "state": state,
        # The GPU's view of each kernel once it ran; until then what ptxas said at compile time.
        "kernels": result.get("kernels") or compiled.get("kernels") or [],
        "kernels_from_gpu": bool(result.get("kernels")),
    }


@require_GET
@login_required
@private_page
def detail(request, public_id):
    submission = _submission_or_404(request, public_id)
    context = _detail_context(submission)
    if request.htmx:
        return _polled(request, "submissions/_result.html", context, waiting=not submission.is_finished)
    context["others"] = selectors.submissions_to_compare(submission)
    return render(request, "submissions/detail.html", context)


@require_GET
@login_required
@private_page
def diff(request, public_id):
    submission = _submission_or_404(request, public_id)
    against = request.GET.get("against", "")
    other = selectors.submission_for_viewer(request.user, against) if _is_uuid(against) else None
    # Only two submissions of one reader, on one exercise, are compared.
    if other is None or other.user_id != submission.user_id or other.exercise_id != submission.exercise_id:
        raise Http404("No such submission to compare with")
    older, newer = sorted([other, submission], key=lambda s: s.created_at)
    return render(
        request,
        "submissions/diff.html",
        {
            "submission": submission,
            "older": older,
            "newer": newer,
            "exercise": submission.exercise,
            "diff": source_diff(older.source, newer.source),
        },
    )


def _is_uuid(value) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


# --- Leaderboard and operators ------------------------------------------------------------------


@require_GET
@login_required
@private_page
def leaderboard(request, slug):
    capsule = catalog.capsule_get(slug)
    exercise = selectors.exercise_of(capsule)
    if exercise is None:
        raise Http404("No exercise here")
    kinds = selectors.leaderboard_kinds(exercise)
    gpu_kind = request.GET.get("gpu") or selectors.default_gpu_kind()
    if gpu_kind not in kinds:
        raise Http404("No such GPU kind")
    return render(
        request,
        "submissions/leaderboard.html",
        {
            "capsule": capsule,
            "exercise": exercise,
            "gpu_kind": gpu_kind,
            "kinds": kinds,
            "rows": selectors.leaderboard(exercise, gpu_kind),
        },
    )


@require_GET
@staff_member_required
@private_page
def queues(request):
    depths = selectors.queue_depths()
    kinds = list(settings.GPU_KINDS)
    return render(
        request,
        "submissions/queues.html",
        {
            "depths": sorted(depths.items()),
            "kinds": [{"kind": kind, "online": selectors.gpu_workers_online(kind)} for kind in kinds],
            "workers": selectors.gpu_workers_listed(),
            "by_status": selectors.submissions_by_status(),
        },
    )


# --- "My progress" ------------------------------------------------------------------------------


def ladder_context(user) -> dict:
    """The reader's GEMM ladder for reading's my_progress page (templates/submissions/_gemm_ladder.html)."""
    gpu_kind = selectors.default_gpu_kind()
    rows = selectors.gemm_ladder(user, gpu_kind)
    tried = [row for row in rows if row["tried"]]
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
        if tried
        else None
    )
    return {"gemm_ladder": rows, "gemm_ladder_chart": chart, "gemm_gpu_kind": gpu_kind}

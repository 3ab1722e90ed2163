"""Reader-facing submission pages: the submit form and the live list of the exercise panel (the
panel itself is apps.submissions.panels, shown on apps.pages' capsule progress page), a submission's
detail, the diff of two, the leaderboard, and the staff view of queues and workers.

Views parse input, call a service or a selector, and render; statuses change only in services.
Every page that shows an exercise's statement or starter asks `can_read` first; a submission is
shown to its owner and to staff, and is a 404 for everyone else.
"""

import uuid

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling, replace_url

from apps.catalog import selectors as catalog
from apps.reading.policy import can_read
from apps.submissions import rungs, selectors, services
from apps.submissions.diff import source_diff
from apps.submissions.forms import SubmissionForm
from apps.submissions.models import Submission
from apps.submissions.panels import exercise_panel, live_state, live_submissions

private_page = cache_control(private=True, no_store=True)


# --- The exercise panel of /capsules/<slug>/progress/ ----------------------------------------------


@require_POST
@login_required
@private_page
def submit(request, slug):
    """With htmx the form answers in place: refused, the form again with its errors and the reader's
    text (400); accepted, a fresh form and the live list, now polling. Without JavaScript, a refusal
    is a page of its own with the form, and an accepted submission redirects to the progress page."""
    capsule = catalog.capsule_get(slug)
    exercise = selectors.exercise_of(capsule)
    if exercise is None or not can_read(request.user, capsule):
        raise Http404("No exercise here")
    starts = selectors.editor_start(request.user, exercise).texts  # a text per language offered
    form = SubmissionForm(request.POST, request.FILES, languages=list(starts), starts=starts)
    if form.is_valid():
        source, plan, filename, language = form.effective()
        try:
            submission = services.submission_create(
                user=request.user, exercise=exercise, source=source, plan=plan, filename=filename, language=language
            )
        except services.SubmissionRefused as refusal:
            form = _form_keeping_text(request, form, source)
            form.add_error(refusal.field if refusal.field in ("source", "plan") else None, refusal.message)
        else:
            progress_url = reverse("pages:capsule-progress", args=[capsule.slug])
            shown_at = f"{progress_url}#submission-{submission.public_id}"
            if not request.htmx:
                return redirect(shown_at)
            panel = exercise_panel(request.user, capsule)
            return replace_url(render(request, "submissions/_submitted.html", {"panel": panel}), shown_at)
    if request.htmx:
        context = {
            "capsule": capsule,
            "form": form,
            "quota": selectors.quota_get(request.user),
            "gpu": selectors.gpu_availability(exercise),
            "measure": selectors.problem_measure(exercise.problem),
        }
        return render(request, "submissions/_form.html", context, status=400)
    panel = exercise_panel(request.user, capsule, form=form)
    return render(request, "submissions/submit.html", {"panel": panel}, status=400)


def _form_keeping_text(request, form: SubmissionForm, source: str) -> SubmissionForm:
    """A bound copy whose editor holds what was submitted (an upload's text included), errors run."""
    data = request.POST.copy()
    data["source"] = source
    kept = SubmissionForm(data, languages=form.languages, starts=form.starts)
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
            return HttpResponseStopPolling(
                '<p class="muted">This exercise is no longer open to you. Reload the page.</p>'
            )
        raise Http404("No exercise here")
    if not request.htmx:
        return redirect("pages:capsule-progress", slug=capsule.slug)
    if request.GET.get("state") == live_state(request.user, exercise):
        return HttpResponse(status=204)  # unchanged: the panel is not built
    live = live_submissions(request.user, exercise)
    return _polled(
        request,
        "submissions/_live.html",
        {"capsule": capsule, "exercise": exercise, "live": live},
        state=live.state,
        waiting=live.active,
    )


def _polled(request, template: str, context: dict, *, state: str, waiting: bool) -> HttpResponse:
    """An htmx poll's answer: 204 while the page shows `state`; 286 (stop polling) once nothing is left
    to wait for."""
    if request.GET.get("state") == state:
        return HttpResponse(status=204)
    response = render(request, template, context)
    if waiting:
        return response
    return HttpResponseStopPolling(response.content)


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
        "measure": selectors.problem_measure(submission.exercise.problem),
        "state": state,
        # The GPU's view of each kernel once it ran; until then what ptxas said at compile time.
        "kernels": result.get("kernels") or compiled.get("kernels") or [],
        "kernels_from_gpu": bool(result.get("kernels")),
        # Why is it slow (issue 43): the profile section, once a profile was recorded; None for older results.
        "profile": selectors.profile_view(submission) if submission.is_finished else None,
        # The kernel's point on the roofline of the GPU that judged it (issue 43): from the result alone; None for
        # results without the worker's ceilings.
        "roofline": selectors.roofline_view(submission) if submission.is_finished else None,
    }


@require_GET
@login_required
@private_page
def detail(request, public_id):
    submission = _submission_or_404(request, public_id)
    context = _detail_context(submission)
    if request.htmx:
        return _polled(
            request, "submissions/_result.html", context, state=context["state"], waiting=not submission.is_finished
        )
    context["others"] = selectors.submissions_to_compare(submission)
    return render(request, "submissions/detail.html", context)


@require_GET
@login_required
@private_page
def profile_report(request, public_id):
    """The submission's Nsight Compute report (.ncu-rep), for its owner and staff only (404 for anyone else)."""
    submission = _submission_or_404(request, public_id)
    path = selectors.profile_report_path(submission)
    if path is None:
        raise Http404("No profile report")
    return FileResponse(
        open(path, "rb"),
        as_attachment=True,
        filename=f"{submission.exercise.problem}-{submission.public_id}.ncu-rep",
        content_type="application/octet-stream",
    )


@require_GET
@login_required
@private_page
def assembly(request, public_id):
    """The report's "PTX / SASS" section, loaded on request: for the submission's owner and staff only (404 for
    anyone else, as the report itself). The first look queues the disassembly on a compile worker; the section asks
    again every second while it is pending (htmx), and a page of its own answers without JavaScript."""
    submission = _submission_or_404(request, public_id)
    disassembly = services.disassembly_request(submission=submission)
    context = {
        "submission": submission,
        "exercise": submission.exercise,
        "capsule": submission.exercise.capsule,
        "view": selectors.assembly_view(submission, disassembly),
    }
    template = "submissions/_assembly.html" if request.htmx else "submissions/assembly.html"
    return render(request, template, context)


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
            "measure": selectors.problem_measure(submission.exercise.problem),
            "diff": source_diff(older.source, newer.source),
        },
    )


def _is_uuid(value) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


# --- The reference ladder ------------------------------------------------------------------------


@require_GET
@private_page
def rung(request, problem, step):
    """A rung of the reference ladder, for whoever may read the capsule that teaches it; anyone else gets that
    capsule's public title and the offer to subscribe, never the source or the figures."""
    found = rungs.rung_get(problem, step)
    capsule = selectors.rung_capsule(found) if found else None
    if capsule is None:
        raise Http404("No such reference kernel")
    context = {"capsule": capsule, "book": capsule.book, "problem": found.problem, "step": found.stem}
    if not can_read(request.user, capsule):
        return render(request, "submissions/rung.html", {**context, "locked": True})
    return render(request, "submissions/rung.html", {**context, "page": rungs.rung_page(found)})


# --- Leaderboard and operators ------------------------------------------------------------------


@require_GET
@login_required
@private_page
def leaderboard(request, slug):
    """Follows the capsule's access rule: a reader who may not read the capsule gets what its page
    gives them (its public title and the offer to subscribe), not the ranking of those who may."""
    capsule = catalog.capsule_get(slug)
    exercise = selectors.exercise_of(capsule)
    if exercise is None:
        raise Http404("No exercise here")
    if not can_read(request.user, capsule):
        return render(
            request, "submissions/leaderboard.html", {"capsule": capsule, "book": capsule.book, "locked": True}
        )
    kinds = selectors.leaderboard_kinds(exercise)
    gpu_kind = request.GET.get("gpu") or selectors.exercise_gpu_kind(exercise)
    if gpu_kind not in kinds:
        raise Http404("No such GPU kind")
    return render(
        request,
        "submissions/leaderboard.html",
        {
            "capsule": capsule,
            "exercise": exercise,
            "measure": selectors.problem_measure(exercise.problem),
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

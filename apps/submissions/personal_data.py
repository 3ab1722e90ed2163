"""A reader's kernel submissions in their data export (apps.accounts.export): the source and everything the judge
said about it, its profile and the reader's requests for a new one. They go with the account (CASCADE); leaderboards
are computed from submissions, so none remains."""

from collections.abc import Iterator

from django.db.models import Prefetch

from apps.submissions.models import ProfileRequest, Submission

FIELDS = (
    "language",
    "filename",
    "source",
    "gpu_kind",
    "arch",
    "status",
    "verdict",
    "message",
    "compile_log",
    "result",
    "pct_of_baseline",
    "pct_of_roofline",
    "tflops",
    "gbps",
    "unit",
    "time_ms",
    "gpu_name",
    "created_at",
    "compiled_at",
    "started_at",
    "finished_at",
)


# Rows read from the database at a time: a submission may hold a source and a compile log of hundreds of KB each.
EXPORT_CHUNK_ROWS = 20


def submissions_export(user) -> Iterator[dict]:
    """One submission at a time (the export is streamed: apps.accounts.export), never all of them at once."""
    # The reader's own "Profile again" requests (issue 43), fetched per chunk of submissions rather than one query each.
    requests = Prefetch(
        "profile_requests",
        queryset=ProfileRequest.objects.filter(user=user).order_by("created_at", "pk"),
        to_attr="requests_made",
    )
    submissions = (
        Submission.objects.filter(user=user)
        .select_related("exercise__capsule", "profile")
        .prefetch_related(requests)
        .order_by("created_at", "pk")
    )
    for submission in submissions.iterator(chunk_size=EXPORT_CHUNK_ROWS):
        yield {
            "id": str(submission.public_id),
            "capsule": submission.exercise.capsule.slug,
            "exercise": submission.exercise.title,
            "problem": submission.exercise.problem,
            **{name: getattr(submission, name) for name in FIELDS},
            "profile": _profile_export(submission),
            "profile_requests": [_request_export(request) for request in submission.requests_made],
        }


def _profile_export(submission) -> dict | None:
    """The Nsight Compute profile's document and findings (issue 43); the .ncu-rep stays a download of its own."""
    profile = getattr(submission, "profile", None) if hasattr(submission, "profile") else None
    if profile is None:
        return None
    return {"status": profile.status, "data": profile.data, "findings": profile.findings}


def _request_export(request: ProfileRequest) -> dict:
    """When the reader asked, for which submission (its public id again, so that a row read alone still says it),
    and whether the profile asked for was made."""
    return {
        "submission": str(request.submission.public_id),
        "requested_at": request.created_at,
        "done": request.done_at is not None,
        "done_at": request.done_at,
    }

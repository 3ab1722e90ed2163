"""A reader's kernel submissions in their data export (apps.accounts.export): the source and everything the judge
said about it. They go with the account (CASCADE); leaderboards are computed from submissions, so none remains."""

from apps.submissions.models import Submission

FIELDS = (
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


def submissions_export(user) -> list[dict]:
    submissions = Submission.objects.filter(user=user).select_related("exercise__capsule").order_by("created_at", "pk")
    return [
        {
            "id": str(submission.public_id),
            "capsule": submission.exercise.capsule.slug,
            "exercise": submission.exercise.title,
            "problem": submission.exercise.problem,
            **{name: getattr(submission, name) for name in FIELDS},
        }
        for submission in submissions
    ]

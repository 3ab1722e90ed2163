"""Admin for exercises, submissions (source, logs, results; re-run; review of flagged results), GPU
workers and the reference ladder. Status changes go through the services, never through the form."""

import json

from django.contrib import admin, messages
from django.utils.html import format_html

from apps.submissions import services
from apps.submissions.models import Exercise, GpuWorker, ReferenceResult, Submission


@admin.register(Exercise)
class ExerciseAdmin(admin.ModelAdmin):
    list_display = (
        "capsule",
        "problem",
        "title",
        "starter_name",
        "arch",
        "gpu_time_limit_s",
        "is_open",
        "submission_count",
    )
    list_filter = ("problem", "is_open", "arch")
    search_fields = ("title", "capsule__title", "capsule__slug")
    list_select_related = ("capsule",)
    raw_id_fields = ("capsule",)
    readonly_fields = ("created_at", "updated_at")

    @admin.display(description="submissions")
    def submission_count(self, obj):
        return obj.submissions.count()

    def save_model(self, request, obj, form, change):
        services.exercise_save(exercise=obj)


def _pretty_json(value) -> str:
    if not value:
        return "-"
    shown = dict(value)
    if shown.get("cubin"):
        shown["cubin"] = f"<{len(shown['cubin'])} base64 characters>"
    # PTX (issue 46) is read on the report's PTX / SASS section; here it would bury the rest.
    if shown.get("ptx"):
        shown["ptx"] = f"<{len(shown['ptx'])} characters of PTX>"
    if shown.get("triton_kernels"):
        shown["triton_kernels"] = [
            {
                **build,
                "cubin": f"<{len(build.get('cubin') or '')} base64 characters>",
                "ptx": f"<{len(build.get('ptx') or '')} characters of PTX>",
            }
            for build in shown["triton_kernels"]
        ]
    return format_html(
        "<pre style='white-space:pre-wrap;max-height:40em;overflow:auto'>{}</pre>", json.dumps(shown, indent=1)
    )


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = (
        "public_id",
        "user",
        "exercise_problem",
        "status",
        "verdict",
        "pct_of_baseline",
        "tflops",
        "gpu_kind",
        "gpu_index",
        "review",
        "attempts",
        "created_at",
    )
    list_filter = (
        "status",
        "review",
        "language",
        "gpu_kind",
        "exercise__problem",
        "exercise",
        ("created_at", admin.DateFieldListFilter),
    )
    search_fields = ("public_id", "user__email", "source_sha256", "worker", "gpu_uuid")
    list_select_related = ("user", "exercise")
    date_hierarchy = "created_at"
    actions = ["rerun", "mark_valid", "mark_invalid"]
    fieldsets = (
        (None, {"fields": ("public_id", "user", "exercise", "language", "filename", "gpu_kind", "arch")}),
        (
            "Status",
            {
                "fields": (
                    "status",
                    "verdict",
                    "message",
                    "review",
                    "review_note",
                    "attempts",
                    "sweeps",
                    "worker",
                    "gpu_index",
                    "gpu_uuid",
                    "created_at",
                    "compiled_at",
                    "started_at",
                    "finished_at",
                    "deadline_at",
                )
            },
        ),
        ("Figures", {"fields": ("pct_of_baseline", "tflops", "time_ms", "gpu_name")}),
        ("Source", {"fields": ("source_view", "source_sha256")}),
        ("Compile", {"fields": ("compile_log_view", "compiled_view")}),
        ("Result", {"fields": ("result_view",)}),
    )

    def get_readonly_fields(self, request, obj=None):
        # Everything is a record of what happened; staff act through the actions (re-run, review).
        return [f.name for f in Submission._meta.fields] + [
            "source_view",
            "compile_log_view",
            "compiled_view",
            "result_view",
        ]

    def has_add_permission(self, request):
        return False  # submissions come from readers, through the service

    @admin.display(description="problem", ordering="exercise__problem")
    def exercise_problem(self, obj):
        return obj.exercise.problem

    @admin.display(description="source")
    def source_view(self, obj):
        numbered = "\n".join(f"{n:4d}  {line}" for n, line in enumerate(obj.source.splitlines(), 1))
        return format_html("<pre style='max-height:40em;overflow:auto'>{}</pre>", numbered)

    @admin.display(description="compile log")
    def compile_log_view(self, obj):
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>", obj.compile_log or "-")

    @admin.display(description="compiled (CompileResult)")
    def compiled_view(self, obj):
        return _pretty_json(obj.compiled)

    @admin.display(description="result (JudgeResult)")
    def result_view(self, obj):
        return _pretty_json(obj.result)

    def _each(self, request, queryset, action, done: str):
        count = 0
        for submission in queryset:
            try:
                action(submission)
                count += 1
            except services.TransitionRefused as refused:
                self.message_user(request, f"{submission.public_id}: {refused}", messages.WARNING)
        if count:
            self.message_user(request, f"{count} submission(s) {done}.", messages.SUCCESS)

    @admin.action(description="Re-run (judge the stored source again)")
    def rerun(self, request, queryset):
        self._each(
            request, queryset, lambda s: services.submission_rerun(submission=s, by=request.user), "queued again"
        )

    @admin.action(description="Mark flagged result valid (enters the leaderboard)")
    def mark_valid(self, request, queryset):
        self._each(
            request,
            queryset,
            lambda s: services.submission_review_set(submission=s, valid=True, by=request.user),
            "marked valid",
        )

    @admin.action(description="Mark flagged result invalid (kept out of the leaderboard)")
    def mark_invalid(self, request, queryset):
        self._each(
            request,
            queryset,
            lambda s: services.submission_review_set(submission=s, valid=False, by=request.user),
            "marked invalid",
        )


@admin.register(GpuWorker)
class GpuWorkerAdmin(admin.ModelAdmin):
    list_display = (
        "hostname",
        "gpu_kind",
        "gpu_name",
        "gpu_index",
        "host_memory_reachable",
        "online",
        "last_seen_at",
        "current_submission",
        "profiling_submission",
        "jobs_done",
        "started_at",
    )
    list_filter = ("gpu_kind",)
    search_fields = ("hostname", "gpu_name")
    readonly_fields = [f.name for f in GpuWorker._meta.fields]

    def has_add_permission(self, request):
        return False  # workers register themselves

    @admin.display(boolean=True)
    def online(self, obj):
        from apps.submissions.selectors import gpu_workers_online_qs

        return gpu_workers_online_qs().filter(pk=obj.pk).exists()


@admin.register(ReferenceResult)
class ReferenceResultAdmin(admin.ModelAdmin):
    list_display = (
        "step",
        "problem",
        "gpu_kind",
        "verdict",
        "pct_of_baseline",
        "tflops",
        "time_ms",
        "gpu_name",
        "measured_at",
    )
    list_filter = ("problem", "gpu_kind", "verdict")
    search_fields = ("step", "title")
    readonly_fields = [f.name for f in ReferenceResult._meta.fields if f.name != "result"] + ["result_view"]
    exclude = ("result",)

    @admin.display(description="result (JudgeResult)")
    def result_view(self, obj):
        return _pretty_json(obj.result)

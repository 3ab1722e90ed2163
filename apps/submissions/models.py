"""Exercises on capsules, readers' kernel submissions and what the judge said about them.

A submission moves QUEUED -> COMPILING -> COMPILED -> RUNNING -> PASSED | FAILED | ERROR | TIMED_OUT
(a compile failure goes COMPILING -> FAILED). Services own the transitions (ARCHITECTURE.md, convention 5); the
judge's own JSON (kernels.results) is kept whole, and the few figures that pages sort and chart by are
copied into columns beside it.
"""

import uuid

from django.conf import settings
from django.db import models

from apps.catalog.models import Capsule


class Unit(models.TextChoices):
    """The figure readers see first (kernels.results.BenchResult.unit): compute-bound problems in TFLOP/s,
    memory-bound ones in GB/s, which are graded first by % of roofline."""

    TFLOPS = "TFLOP/s", "TFLOP/s"
    GBPS = "GB/s", "GB/s"


class HeadlineFigures:
    """What Submission and ReferenceResult share: the figures copied from the headline benchmark."""

    @property
    def by_roofline(self) -> bool:
        return self.unit == Unit.GBPS

    @property
    def throughput(self) -> float | None:
        """In the result's own unit: GB/s or TFLOP/s."""
        return self.gbps if self.by_roofline else self.tflops

    @property
    def grade(self) -> float | None:
        """The percentage a result is ranked by: of the roofline for GB/s results, else of the baseline."""
        return self.pct_of_roofline if self.by_roofline else self.pct_of_baseline


class Exercise(models.Model):
    """A judge problem attached to a capsule: what the reader is asked to write, and where they start."""

    capsule = models.OneToOneField(Capsule, on_delete=models.CASCADE, related_name="exercise")
    problem = models.CharField(max_length=40, help_text="A problem of the judge library (kernels/problems/<name>)")
    title = models.CharField(max_length=200)
    statement = models.TextField(help_text="Markdown, rendered with the book's pipeline")
    statement_html = models.TextField(blank=True, editable=False)
    starter_source = models.TextField(help_text="The file the editor opens with: the previous rung of the ladder")
    starter_name = models.CharField(
        max_length=120, blank=True, help_text="Where the starter came from, e.g. 01_naive.cu"
    )
    reference_step = models.CharField(
        max_length=120,
        blank=True,
        help_text="The book's own kernel for this step (a file of kernels/reference), set beside the reader's best",
    )
    arch = models.CharField(
        max_length=16, default="sm_90", help_text="NVRTC target; sm_90a for Hopper-only instructions"
    )
    gpu_time_limit_s = models.PositiveIntegerField(default=120, help_text="Wall clock for the whole GPU job")
    is_open = models.BooleanField(default=True, help_text="Closed exercises show results but take no submissions")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["capsule__part__number", "capsule__number"]

    def __str__(self):
        return f"{self.capsule.number}. {self.title} ({self.problem})"


class Submission(HeadlineFigures, models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        COMPILING = "compiling", "Compiling"
        COMPILED = "compiled", "Compiled, waiting for a GPU"
        RUNNING = "running", "Running on a GPU"
        PASSED = "passed", "Passed"
        FAILED = "failed", "Failed"
        ERROR = "error", "Judge error"
        TIMED_OUT = "timed_out", "Timed out"

    FINISHED = (Status.PASSED, Status.FAILED, Status.ERROR, Status.TIMED_OUT)

    FILENAME_MAX_CHARS = 200  # an uploaded file's name is kept up to this length

    class Language(models.TextChoices):
        """What the reader wrote (issue 46): one .cu file for NVRTC, or one .py file of @triton.jit kernels. The judge
        compiles each its own way (kernels.compile_submission's `language`) and judges both alike."""

        CUDA = "cuda", "CUDA C++"
        TRITON = "triton", "Triton"

    class Review(models.TextChoices):
        NONE = "", "Not flagged"
        PENDING = "pending", "Flagged, awaiting review"
        VALID = "valid", "Reviewed: valid"
        INVALID = "invalid", "Reviewed: invalid"

    public_id = models.UUIDField(
        default=uuid.uuid4, unique=True, editable=False
    )  # in URLs: not guessable, not countable
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="submissions")
    source = models.TextField()  # at most source_max_bytes() of UTF-8
    source_sha256 = models.CharField(max_length=64)
    filename = models.CharField(
        max_length=FILENAME_MAX_CHARS, blank=True, help_text="The uploaded file's name, if uploaded"
    )
    language = models.CharField(max_length=8, choices=Language.choices, default=Language.CUDA)
    gpu_kind = models.CharField(max_length=32, help_text="Which GPU queue judges it, e.g. h200")
    arch = models.CharField(max_length=16)

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    verdict = models.CharField(max_length=32, blank=True, help_text="The judge's verdict (kernels.results.Verdict)")
    message = models.TextField(blank=True)
    compile_log = models.TextField(blank=True)
    compiled = models.JSONField(
        null=True, blank=True, help_text="CompileResult JSON, cubin included, for the GPU stage"
    )
    result = models.JSONField(null=True, blank=True, help_text="JudgeResult JSON")

    # Copied from the result at the problem's headline benchmark (its largest shape: by FLOPs, or by bytes moved
    # for GB/s problems), for sorting and charts.
    pct_of_baseline = models.FloatField(null=True, blank=True)
    pct_of_roofline = models.FloatField(null=True, blank=True)
    tflops = models.FloatField(null=True, blank=True)
    gbps = models.FloatField(null=True, blank=True)
    unit = models.CharField(max_length=8, choices=Unit.choices, default=Unit.TFLOPS)
    time_ms = models.FloatField(null=True, blank=True)
    gpu_name = models.CharField(max_length=100, blank=True)
    review = models.CharField(max_length=16, choices=Review.choices, default=Review.NONE, blank=True)
    review_note = models.TextField(blank=True)

    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="GPU runs started (a lost worker's job runs again)"
    )
    sweeps = models.PositiveSmallIntegerField(
        default=0, help_text="Times the sweeper re-queued it after a deadline passed"
    )
    worker = models.CharField(max_length=200, blank=True, help_text="The Celery worker that ran it last")
    # Which GPU ran it last: the host's index the worker owns (its GPU_ID, else CUDA_VISIBLE_DEVICES), set when
    # the run starts; the device's UUID as the judge's child saw it, set with the result. One GPU, one job at once.
    gpu_index = models.CharField(max_length=16, blank=True, help_text="Host GPU index of the worker that ran it")
    gpu_uuid = models.CharField(max_length=64, blank=True, help_text="UUID of the GPU that ran it (nvidia-smi -L)")
    deadline_at = models.DateTimeField(null=True, blank=True, help_text="The sweeper acts on it after this")
    created_at = models.DateTimeField(auto_now_add=True)
    compiled_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["user", "exercise", "-created_at"]),
            models.Index(fields=["user", "-created_at"]),  # the quota counts
            # The GPU claim's fairness: each waiting reader's last run (selectors.gpu_claim_order), one index step
            # instead of a sort of the reader's whole history (bench/gpu_db_cost.py: 18.6 ms a claim at 1,000 runs).
            models.Index(fields=["user", "-started_at"]),
            models.Index(fields=["status", "deadline_at"]),  # the sweeper
            models.Index(fields=["exercise", "gpu_kind", "status"]),  # leaderboards
        ]

    def __str__(self):
        return f"{self.public_id} · {self.user} · {self.exercise.problem} · {self.status}"

    @staticmethod
    def source_max_bytes() -> int:
        """The largest source accepted, in UTF-8 bytes: the judge's own limit, set per deployment
        (SUBMISSION_MAX_SOURCE_BYTES). The form states it; services.submission_create enforces it."""
        return settings.SUBMISSION_MAX_SOURCE_BYTES

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def is_triton(self) -> bool:
        return self.language == self.Language.TRITON


class ReferenceResult(HeadlineFigures, models.Model):
    """One rung of the reference ladder (kernels/reference/) judged on one GPU kind, for comparison."""

    problem = models.CharField(max_length=40)
    gpu_kind = models.CharField(max_length=32)
    step = models.CharField(max_length=120, help_text="The reference file, e.g. 08_sgemm_warptiling.cu")
    title = models.CharField(max_length=200)
    verdict = models.CharField(max_length=32)
    pct_of_baseline = models.FloatField(null=True, blank=True)
    pct_of_roofline = models.FloatField(null=True, blank=True)
    tflops = models.FloatField(null=True, blank=True)
    gbps = models.FloatField(null=True, blank=True)
    unit = models.CharField(max_length=8, choices=Unit.choices, default=Unit.TFLOPS)
    time_ms = models.FloatField(null=True, blank=True)
    gpu_name = models.CharField(max_length=100, blank=True)
    result = models.JSONField(null=True, blank=True)
    measured_at = models.DateTimeField()

    class Meta:
        ordering = ["problem", "gpu_kind", "step"]
        constraints = [
            models.UniqueConstraint(fields=["problem", "gpu_kind", "step"], name="one_reference_result_per_step")
        ]

    def __str__(self):
        return f"{self.step} on {self.gpu_kind}: {self.pct_of_baseline}%"


class GpuWorker(models.Model):
    """A GPU worker as it last reported itself: operators and the progress page read who is online."""

    hostname = models.CharField(max_length=200, unique=True, help_text="The Celery worker's node name")
    gpu_kind = models.CharField(max_length=32)
    gpu_name = models.CharField(max_length=100, blank=True)
    gpu_index = models.CharField(max_length=16, blank=True, help_text="CUDA_VISIBLE_DEVICES of the worker")
    sandbox = models.CharField(
        max_length=200, blank=True, help_text="How the node confines readers' code (kernels/confine.py), as reported"
    )
    host_memory_reachable = models.BooleanField(
        null=True,
        blank=True,
        help_text="Whether its GPU lets kernels use pageable host memory (HMM: README, Untrusted code), as its judge's "
        "setup found; empty until a setup has reported",
    )
    started_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    current_submission = models.ForeignKey(
        Submission, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Issue 43: a profile is no judgement, so it is not current_submission (which the sweeper and duplicate checks
    # read as "judging"); without it the staff page showed a worker busy with ncu as idle.
    profiling_submission = models.ForeignKey(
        Submission,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The accepted submission this worker profiles now (services.submission_profile)",
    )
    jobs_done = models.PositiveIntegerField(default=0)
    stopped_at = models.DateTimeField(null=True, blank=True, help_text="Set when the worker shut down cleanly")

    class Meta:
        ordering = ["gpu_kind", "hostname"]

    def __str__(self):
        return f"{self.hostname} ({self.gpu_kind})"

    @property
    def unconfined(self) -> bool:
        """It reported running readers' code without the sandbox (an operator's opt-out)."""
        return self.sandbox.startswith("RUNNING UNCONFINED")


class Profile(models.Model):
    """An Nsight Compute profile of one accepted submission (issue 43), made after the timed job and never part of
    its verdict or timing. `data` is a kernels.profile.Profile document (its own schema_version); `findings` are the
    rules of kernels/profile_rules.toml that fired, stored when the profile is recorded. The .ncu-rep lives under
    settings.PROFILE_ROOT, outside every public folder, served only to the submission's owner and staff."""

    submission = models.OneToOneField(Submission, on_delete=models.CASCADE, related_name="profile")
    schema_version = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, help_text="kernels.profile.Status: profiled, off, no_ncu, failed, ...")
    data = models.JSONField(help_text="kernels.profile.Profile JSON")
    findings = models.JSONField(default=list, blank=True, help_text="kernels.profile_findings.Finding dicts")
    report_file = models.CharField(max_length=200, blank=True, help_text="Relative to settings.PROFILE_ROOT")
    created_at = models.DateTimeField(auto_now_add=True)
    # When this document was last recorded: a profile older than the submission's judgement (a staff re-run) or than
    # a reader's request is due again; a message delivered twice finds it done (services.submission_profile).
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"profile of {self.submission_id}: {self.status}"

    @property
    def report_path(self):
        return settings.PROFILE_ROOT / self.report_file if self.report_file else None


class ProfileFinding(models.Model):
    """One finding of one profile, as a row: the capsule progress page counts them (no names)."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="finding_rows")
    rule = models.CharField(max_length=64)
    capsule_slug = models.CharField(max_length=120)
    severity = models.FloatField()

    class Meta:
        indexes = [models.Index(fields=["capsule_slug", "rule"])]

    def __str__(self):
        return f"{self.rule} ({self.severity:.2f})"


class Disassembly(models.Model):
    """The SASS of a submission's cubins (issue 46), made on request for the report's "PTX / SASS" section and kept.

    Kept as a row rather than in the cache: cuobjdump reads reader-built cubins, so it runs on a compile worker (the
    node kind that takes reader input and checks its sandbox at start, kernels/disasm.py), and a judge worker has no
    shared cache (config/settings/judge_worker.py): its answer comes back through the database either way. A row also
    outlives cache evictions and restarts, is read only by the section's own view (never with the submission: the
    report's queries do not touch it), and goes with the submission (CASCADE: an account's deletion takes it). It
    records the digest of the cubins it was made from, so that a staff re-run, which compiles again, is disassembled
    again rather than shown the old code's SASS. The PTX needs no row: the compile keeps it in `compiled`."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a compile worker"
        DONE = "done", "Disassembled"  # `result` holds a listing per cubin (or cuobjdump's word on a bad one)
        FAILED = "failed", "Not disassembled"  # no listing: the tool missing, the time limit; asked again later

    submission = models.OneToOneField(Submission, on_delete=models.CASCADE, related_name="disassembly")
    cubins_sha256 = models.CharField(max_length=64, help_text="Of the cubins it was made from, in order")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    result = models.JSONField(null=True, blank=True, help_text="kernels.results.SassResult JSON")
    requested_at = models.DateTimeField(help_text="When it was (last) queued")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "disassemblies"

    def __str__(self):
        return f"disassembly of {self.submission_id}: {self.status}"


class ProfileRequest(models.Model):
    """A reader's "Profile again" on an accepted submission (issue 43). Counted in the database over the last 24 hours
    against PROFILE_REQUESTS_PER_DAY (a cache could forget them); `done_at` is set when a profile begun after the
    request is recorded, and a request not done yet is the one on its way."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile_requests")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="profile_requests")
    created_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "created_at"], name="subs_profile_request_recent")]

    def __str__(self):
        return f"profile request of {self.submission_id} by {self.user_id}"

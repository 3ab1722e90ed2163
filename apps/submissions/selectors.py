"""Reads about submissions: quotas, queue positions, GPU workers online, broker queue depths (the
pipeline's), then what the reader-facing pages show."""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Case, Count, F, FloatField, OuterRef, Q, Subquery, When, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from apps.catalog.models import Capsule
from apps.submissions import charts
from apps.submissions.models import Exercise, GpuWorker, Profile, ProfileFinding, ReferenceResult, Submission, Unit
from kernels import problems as judge_problems
from kernels import profile as profile_mod
from kernels import profile_findings

logger = logging.getLogger(__name__)

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Quota:
    per_hour: int
    per_day: int
    used_hour: int
    used_day: int
    remaining: int  # submissions allowed now: the smaller of what the hour and the day leave
    resets_at: datetime | None  # when the next one frees up, if none is left; None while some remain
    held: int = 0  # waiting for a GPU of a kind that is offline: not counted in the hour until they run

    @property
    def exhausted(self) -> bool:
        return self.remaining <= 0


# A submission not yet run that will need a GPU: waiting for the compiler, compiling, or compiled and waiting.
WAITING_FOR_GPU = (Submission.Status.QUEUED, Submission.Status.COMPILING, Submission.Status.COMPILED)


def quota_get(user, *, now: datetime | None = None) -> Quota:
    """Sliding windows, the one place the quota is counted (services.submission_create refuses by it).

    The day counts every submission created in the last 24 hours, refused and failed ones included, since each
    took a compile (and so bounds what a reader can leave waiting). The hour counts GPU runs: a submission that
    ran counts from when its run started; one that never needed a GPU (a compile error) from when it was
    submitted; one still waiting for a GPU counts from when it was submitted while a GPU worker of its kind is
    online, and not at all while none is (`held`): nobody is served by it, and it counts once it runs."""
    now = now or timezone.now()
    per_hour, per_day = settings.SUBMISSIONS_PER_HOUR, settings.SUBMISSIONS_PER_DAY
    rows = list(
        Submission.objects.filter(user=user)
        .filter(Q(created_at__gt=now - DAY) | Q(started_at__gt=now - HOUR))
        .values_list("created_at", "started_at", "status", "gpu_kind")
    )
    day_times = sorted(created for created, *_ in rows if created > now - DAY)
    waiting_kinds = {kind for _, started, status, kind in rows if started is None and status in WAITING_FOR_GPU}
    offline = {kind for kind in waiting_kinds if not gpu_workers_online(kind, now=now)}
    hour_times, held = [], 0
    for created, started, status, kind in rows:
        if started is None and status in WAITING_FOR_GPU and kind in offline:
            held += 1
            continue
        counted_at = started or created
        if counted_at > now - HOUR:
            hour_times.append(counted_at)
    hour_times.sort()
    remaining = max(0, min(per_hour - len(hour_times), per_day - len(day_times)))
    resets_at = None
    if remaining == 0:
        # The oldest submission of each full window leaves it first; both windows must have room again.
        candidates = []
        if len(hour_times) >= per_hour:
            candidates.append(hour_times[len(hour_times) - per_hour] + HOUR)
        if len(day_times) >= per_day:
            candidates.append(day_times[len(day_times) - per_day] + DAY)
        resets_at = max(candidates) if candidates else None
    return Quota(per_hour, per_day, len(hour_times), len(day_times), remaining, resets_at, held)


def gpu_claim_order(gpu_kind: str):
    """The compiled submissions waiting for a GPU of this kind, in the order GPU workers claim them
    (services.pipeline.submission_gpu_claim takes the first): the oldest of the reader whose last GPU run started
    longest ago (never: first), so one reader's burst holds back another's single submission by one job at most.
    The queue position shown to readers counts in this same order (queue_position)."""
    last_served = (
        Submission.objects.filter(user=OuterRef("user"), started_at__isnull=False)
        .order_by("-started_at")
        .values("started_at")[:1]
    )
    return (
        Submission.objects.filter(status=Submission.Status.COMPILED, gpu_kind=gpu_kind)
        .annotate(reader_served_at=Subquery(last_served))
        .order_by(F("reader_served_at").asc(nulls_first=True), "created_at", "pk")
    )


def queue_position(submission: Submission) -> int | None:
    """1 = next. Waiting for a compile (QUEUED) counts the compile queue (first in, first out); waiting for a GPU
    (COMPILED), the place in the order GPU workers claim (gpu_claim_order: fair between readers, so not the order
    of compiling). None once it runs or finished."""
    status = Submission.Status
    if submission.status == status.QUEUED:
        return Submission.objects.filter(status=status.QUEUED, created_at__lt=submission.created_at).count() + 1
    if submission.status != status.COMPILED:
        return None
    # The queue for one GPU kind is short (a few jobs per reader at most, by the quota): its ids, in order.
    order = list(gpu_claim_order(submission.gpu_kind).values_list("pk", flat=True))
    return order.index(submission.pk) + 1 if submission.pk in order else None


def gpu_workers_online_qs(gpu_kind: str | None = None, *, now: datetime | None = None):
    now = now or timezone.now()
    workers = GpuWorker.objects.filter(
        stopped_at__isnull=True, last_seen_at__gte=now - timedelta(seconds=settings.GPU_WORKER_ONLINE_WINDOW_S)
    )
    return workers.filter(gpu_kind=gpu_kind) if gpu_kind else workers


def gpu_workers_online(gpu_kind: str, *, now: datetime | None = None) -> int:
    """Workers of that kind whose heartbeat is recent (GPU_WORKER_ONLINE_WINDOW_S)."""
    return gpu_workers_online_qs(gpu_kind, now=now).count()


# The compute capability of the GPU kinds a deployment may name in GPU_KINDS, so that an exercise's target finds a
# GPU that runs it. A kind not listed here is taken at the operator's word: it runs what it is sent.
KIND_CAPABILITY = {
    "a100": 80,
    "a10": 86,
    "a40": 86,
    "l4": 89,
    "l40": 89,
    "l40s": 89,
    "h100": 90,
    "h200": 90,
    "gh200": 90,
    "b100": 100,
    "b200": 100,
    "gb200": 100,
}
ARCH_FAMILY = {8: "Ampere or Ada", 9: "Hopper", 10: "Blackwell", 12: "Blackwell"}


def kind_runs_arch(gpu_kind: str, arch: str) -> bool:
    """Whether a GPU of this kind runs a cubin built for `arch` (sm_90, sm_90a, ...): a cubin runs on its own major
    version at its minor version or above, and an `a` target (Hopper's wgmma and TMA for sm_90a) on its exact
    capability only."""
    capability = KIND_CAPABILITY.get(gpu_kind.lower())
    match = re.fullmatch(r"sm_(\d+)(a?)", arch or "")
    if capability is None or match is None:
        return True
    target, specific = int(match.group(1)), bool(match.group(2))
    if specific:
        return capability == target
    return capability // 10 == target // 10 and capability >= target


def arch_needs(arch: str) -> str:
    """The GPU family an NVRTC target needs, in words: "Hopper" for sm_90a; "" for a target it does not know."""
    match = re.fullmatch(r"sm_(\d+)a?", arch or "")
    return ARCH_FAMILY.get(int(match.group(1)) // 10, "") if match else ""


def exercise_gpu_kind(exercise) -> str:
    """The GPU kind that judges an exercise's submissions: the default kind when it runs the exercise's target,
    else the first configured kind that does (the default still, where none does: its workers say so)."""
    default = default_gpu_kind()
    kinds = [default, *(kind for kind in settings.GPU_KINDS if kind != default)]
    return next((kind for kind in kinds if kind_runs_arch(kind, exercise.arch)), default)


@dataclass(frozen=True)
class GpuAvailability:
    """What the submit form says before a reader submits: whether a GPU of the kind the exercise needs is online,
    and how long its queue is."""

    gpu_kind: str
    arch: str
    needs: str  # the GPU family the target needs, in words ("Hopper"), or ""
    online: int  # workers of the kind heard from within GPU_WORKER_ONLINE_WINDOW_S
    running: int  # submissions of every reader on a GPU of the kind now
    waiting: int  # submissions of every reader that will need one: waiting to compile, compiling, compiled

    @property
    def is_online(self) -> bool:
        return self.online > 0


def gpu_availability(exercise, *, now: datetime | None = None) -> GpuAvailability:
    gpu_kind = exercise_gpu_kind(exercise)
    counts = (
        Submission.objects.filter(gpu_kind=gpu_kind, status__in=[*WAITING_FOR_GPU, Submission.Status.RUNNING])
        .order_by()
        .aggregate(
            running=Count("id", filter=Q(status=Submission.Status.RUNNING)),
            waiting=Count("id", filter=Q(status__in=WAITING_FOR_GPU)),
        )
    )
    return GpuAvailability(
        gpu_kind=gpu_kind,
        arch=exercise.arch,
        needs=arch_needs(exercise.arch),
        online=gpu_workers_online(gpu_kind, now=now),
        running=counts["running"],
        waiting=counts["waiting"],
    )


def queue_depths(*, broker_url: str | None = None) -> dict[str, int]:
    """Messages waiting in each Celery queue, asked of the broker; {} when the broker does not answer."""
    from config.celery import app

    depths: dict[str, int] = {}
    try:
        with app.connection_for_read(broker_url) as connection:
            connection.ensure_connection(max_retries=0, timeout=2)  # one try: a page is waiting
            channel = connection.default_channel
            for name in settings.CELERY_QUEUE_NAMES:
                try:
                    depths[name] = channel.queue_declare(queue=name, passive=True).message_count
                except Exception:  # a queue nobody declared yet holds nothing
                    depths[name] = 0
                    channel = connection.channel()
    except Exception as error:  # the page that shows it must still render
        logger.warning("queue depths unavailable: %s", error)
        return {}
    return depths


# --- Reader-facing reads (progress page, detail, leaderboard, "my progress") -------------------------

# The columns the pages never show: the cubin and the full source travel only to the judge and the detail page.
_HEAVY_FIELDS = ("compiled", "source")
GEMM_PROBLEMS = ("sgemm", "hgemm", "bf16_gemm")
# The figures a page shows of a result (HeadlineFigures).
_FIGURES = ("pct_of_baseline", "pct_of_roofline", "tflops", "gbps", "unit", "time_ms")


@dataclass(frozen=True)
class Measure:
    """How a problem's results read (from its kernels/problems/<name>/problem.toml): the unit of its throughput,
    the library it is compared with, and the percentage it is ranked by."""

    problem: str
    unit: str  # "TFLOP/s" or "GB/s"
    baseline: str  # the library's short name, as in "% of cuBLAS": cuBLAS, PyTorch, CUB
    baseline_full: str = ""  # e.g. "PyTorch torch.softmax (dim = 1)"
    size_names: tuple[str, ...] = ()  # in the problem's order: ("rows", "cols"), ("M", "N", "K")
    compute_unit: str = "fp32"  # which measured ceiling bounds its roofline: fp32, tensor_fp16, tensor_bf16, memory

    @property
    def by_roofline(self) -> bool:
        """Memory-bound problems (GB/s) are graded first by % of roofline: bytes over the measured copy bandwidth."""
        return self.unit == Unit.GBPS

    @property
    def grade_label(self) -> str:
        return "% of roofline" if self.by_roofline else f"% of {self.baseline}"


@functools.cache
def problem_measure(problem: str) -> Measure:
    """The judge library's word on a problem; a problem it does not know reads as TFLOP/s against "baseline"."""
    from kernels.problems import ProblemError, load

    try:
        definition = load(problem)
    except ProblemError:
        return Measure(problem=problem, unit=Unit.TFLOPS, baseline="baseline")
    return Measure(
        problem=problem,
        unit=definition.unit,
        baseline=definition.library or "baseline",
        baseline_full=definition.baseline_name,
        size_names=definition.size_names,
        compute_unit=definition.compute_unit,
    )


def _grade():
    """SQL for HeadlineFigures.grade: a GB/s result is ranked by % of roofline, any other by % of baseline."""
    return Case(
        When(unit=Unit.GBPS, then=F("pct_of_roofline")), default=F("pct_of_baseline"), output_field=FloatField()
    )


def default_gpu_kind() -> str:
    return getattr(settings, "DEFAULT_GPU_KIND", None) or settings.GPU_KINDS[0]


def exercise_of(capsule) -> Exercise | None:
    return Exercise.objects.filter(capsule=capsule).first()


def submissions_recent(user, exercise, *, limit: int = 10) -> list[Submission]:
    """The reader's latest submissions on an exercise, newest first, without the cubin and source."""
    return list(Submission.objects.filter(user=user, exercise=exercise).defer(*_HEAVY_FIELDS)[:limit])


def submissions_recent_states(user, exercise, *, limit: int = 10) -> list[Submission]:
    """submissions_recent with only what their live state needs (panels.live_state): the poll's cheap question."""
    fields = ("id", "public_id", "status", "gpu_kind", "created_at", "compiled_at", "user_id")
    return list(Submission.objects.filter(user=user, exercise=exercise).only(*fields)[:limit])


# --- Languages (issue 46) -----------------------------------------------------------------------------

Language = Submission.Language
TRITON_STARTER = "example_triton.py"  # beside the problem's example.cu, in kernels/problems/<problem>/
# What each language's files are called and how the editor and the pages colour them.
LANGUAGE_SUFFIX = {Language.CUDA: ".cu", Language.TRITON: ".py"}
LANGUAGE_LEXER = {Language.CUDA: "cuda", Language.TRITON: "python"}
LANGUAGE_EDITOR_MODE = {Language.CUDA: "c_cpp", Language.TRITON: "python"}


def triton_starter(problem: str) -> str | None:
    """The problem's Triton starter, read from the judge's folder at each call: the starters arrive problem by problem,
    and an exercise offers Triton from the moment its problem has one (no restart, no cache to clear)."""
    if problem not in judge_problems.available():  # a name from the database never becomes a path of its own
        return None
    try:
        return (judge_problems.PROBLEMS_DIR / problem / TRITON_STARTER).read_text()
    except FileNotFoundError:
        return None


def languages_offered(exercise) -> list[str]:
    """CUDA always; Triton where the exercise's problem has a Triton starter (the judge compiles Triton for any
    problem, but only a problem with a starter has been written and checked for it)."""
    offered = [Language.CUDA.value]
    if triton_starter(exercise.problem) is not None:
        offered.append(Language.TRITON.value)
    return offered


def starter_of(exercise, language: str) -> str:
    """What the editor opens with in a language: the exercise's own starter for CUDA (the previous rung of the
    ladder), the problem's example_triton.py for Triton."""
    if language == Language.TRITON:
        return triton_starter(exercise.problem) or ""
    return exercise.starter_source


@dataclass(frozen=True)
class EditorStart:
    """Where the submit form's editor starts: in `language`, with `texts[language]`; switching language shows the
    other text (the JavaScript keeps each language's text while the reader switches)."""

    language: str
    texts: dict[str, str]  # per language offered (CUDA first): the reader's latest source in it, else its starter


def editor_start(user, exercise) -> EditorStart:
    """The reader resumes where they left off: the language of their latest submission (while it is offered), and in
    each language their latest source, else that language's starter."""
    offered = languages_offered(exercise)
    mine = Submission.objects.filter(user=user, exercise=exercise)
    texts = {
        language: mine.filter(language=language).values_list("source", flat=True).first()
        or starter_of(exercise, language)
        for language in offered
    }
    latest = mine.values_list("language", flat=True).first()
    return EditorStart(language=latest if latest in offered else Language.CUDA.value, texts=texts)


def submission_for_viewer(user, public_id) -> Submission | None:
    """A submission its owner or staff may open; None for anyone else (the view answers 404)."""
    if not user.is_authenticated:
        return None
    submissions = Submission.objects.select_related("exercise__capsule", "user")
    if not user.is_staff:
        submissions = submissions.filter(user=user)
    return submissions.filter(public_id=public_id).first()


def submissions_to_compare(submission, *, limit: int = 50) -> list[Submission]:
    """The same reader's other submissions on the same exercise: what the diff form offers."""
    return list(
        Submission.objects.filter(user_id=submission.user_id, exercise_id=submission.exercise_id)
        .exclude(pk=submission.pk)
        .only(
            "public_id", "created_at", "status", "pct_of_baseline", "pct_of_roofline", "unit", "filename", "language"
        )[:limit]
    )


def history_points(user, exercise, *, limit: int = 60) -> list[dict]:
    """The reader's finished submissions on an exercise, oldest first, for the history chart."""
    rows = (
        Submission.objects.filter(user=user, exercise=exercise, status__in=Submission.FINISHED)
        .order_by("-created_at")
        .annotate(grade=_grade())
        .values("created_at", "status", "grade", "review")[:limit]
    )
    return list(reversed(rows))


def _counts(queryset):
    # Passed, with the figure it is ranked by, and not flagged unless a reviewer said valid: the rule of
    # leaderboards and "best" figures.
    return (
        queryset.filter(status=Submission.Status.PASSED, pct_of_baseline__isnull=False)
        .exclude(unit=Unit.GBPS, pct_of_roofline__isnull=True)
        .exclude(review__in=[Submission.Review.PENDING, Submission.Review.INVALID])
    )


def best_submission(user, exercise, gpu_kind: str) -> Submission | None:
    return (
        _counts(Submission.objects.filter(user=user, exercise=exercise, gpu_kind=gpu_kind))
        .defer(*_HEAVY_FIELDS)
        .order_by(_grade().desc(), "created_at")
        .first()
    )


def reference_ladder(problem: str, gpu_kind: str) -> list[ReferenceResult]:
    """The reference rungs measured on this GPU kind, in ladder order (the file names are numbered)."""
    return list(ReferenceResult.objects.filter(problem=problem, gpu_kind=gpu_kind).defer("result").order_by("step"))


def rung_capsule(rung) -> Capsule | None:
    """The capsule that teaches a reference rung (apps.submissions.rungs.Rung): whoever may read it may open the
    rung's page. The first published capsule, in book order, whose text links to the rung's page and whose exercise
    is on the rung's problem (a capsule that only looks ahead, such as a survey of the ladder, does not teach it),
    else the first that links to it; else the first whose exercise names the rung (its reference, or its starter);
    else the first with an exercise on the rung's problem (a rung the book only climbs past). None when no capsule
    has anything to do with it."""
    capsules = Capsule.objects.published().select_related("book").order_by("part__number", "number")
    linking = capsules.filter(body_html__contains=f'href="{rung.get_absolute_url()}"')
    linked = linking.filter(exercise__problem=rung.problem).first() or linking.first()
    if linked is not None:
        return linked
    named = capsules.filter(
        Q(exercise__reference_step=rung.ref) | Q(exercise__problem=rung.problem, exercise__starter_name=rung.filename)
    ).first()
    return named or capsules.filter(exercise__problem=rung.problem).first()


def rung_results(rung) -> list[ReferenceResult]:
    """What the judge measured of a rung, one row per GPU kind it ran on (the JSON kept for the shapes' table)."""
    return list(ReferenceResult.objects.filter(problem=rung.problem, step=rung.filename).order_by("gpu_kind"))


def leaderboard(exercise, gpu_kind: str, *, limit: int = 100) -> list[Submission]:
    """Each reader's best counting result on an exercise and GPU kind, best first, in one query: ranked by
    % of roofline for GB/s problems, by % of baseline for the others (HeadlineFigures.grade).

    A window function picks each reader's best row (DISTINCT ON would tie this to PostgreSQL, and
    `make run` uses SQLite).
    """
    ranked = (
        _counts(Submission.objects.filter(exercise=exercise, gpu_kind=gpu_kind))
        .annotate(
            grade_value=_grade(),
            reader_rank=Window(
                RowNumber(), partition_by=[F("user_id")], order_by=[_grade().desc(), F("created_at").asc()]
            ),
        )
        .filter(reader_rank=1)
        .select_related("user")
        .only(
            "public_id",
            "created_at",
            "pct_of_baseline",
            "pct_of_roofline",
            "tflops",
            "gbps",
            "unit",
            "time_ms",
            "gpu_name",
            "review",
            "language",
            "user__name",  # the public name (accounts.selectors.public_name): the address is not needed
        )
        .order_by(F("grade_value").desc(), "created_at")
    )
    return list(ranked[:limit])


def leaderboard_kinds(exercise) -> list[str]:
    """GPU kinds with at least one counting result on this exercise, plus the configured ones."""
    seen = set(_counts(Submission.objects.filter(exercise=exercise)).values_list("gpu_kind", flat=True).distinct())
    return sorted(seen | set(settings.GPU_KINDS))


def problem_family(problem: str) -> str:
    """The ladders of "my progress": the GEMM exercises (FP32, FP16, BF16) climb one ladder, every other problem
    its own."""
    return "gemm" if problem in GEMM_PROBLEMS else problem


@dataclass(frozen=True)
class LadderRow:
    exercise: Exercise
    measure: Measure
    best: Submission | None  # the reader's best counting result on the GPU kind
    book: ReferenceResult | None  # the book's own kernel for the step, measured on the same GPU kind
    tried: int  # the reader's submissions to the exercise, whatever became of them

    @property
    def capsule(self) -> Capsule:
        return self.exercise.capsule

    @property
    def rung(self):
        """The book's kernel for the step as a rung of the ladder (its page: apps.submissions.rungs), or None."""
        from apps.submissions.rungs import rung_named

        return rung_named(self.exercise.problem, self.exercise.reference_step)


def exercise_ladders(user, gpu_kind: str) -> list[LadderRow]:
    """Every published exercise in book order with the reader's best on it, beside the book's kernel for the
    step. Three queries, however many exercises: the exercises with the reader's counts, each exercise's best
    counting submission (a window over the reader's rows), the GPU kind's reference rungs."""
    exercises = list(
        Exercise.objects.filter(capsule__status=Capsule.Status.PUBLISHED)
        .select_related("capsule")
        .annotate(tried=Count("submissions", filter=Q(submissions__user=user)))
        .order_by("capsule__part__number", "capsule__number")
    )
    if not exercises:
        return []
    best = {
        s.exercise_id: s
        for s in _counts(Submission.objects.filter(user=user, gpu_kind=gpu_kind, exercise__in=exercises))
        .annotate(
            exercise_rank=Window(
                RowNumber(), partition_by=[F("exercise_id")], order_by=[_grade().desc(), F("created_at").asc()]
            )
        )
        .filter(exercise_rank=1)
        .only("exercise", "public_id", "created_at", *_FIGURES)
    }
    # kernels/reference/<problem>/NN_step.cu rungs are stored by file name; an exercise may name the folder too.
    rungs = {
        (r.problem, r.step): r
        for r in ReferenceResult.objects.filter(gpu_kind=gpu_kind, problem__in={e.problem for e in exercises}).only(
            "problem", "step", "title", *_FIGURES
        )
    }
    return [
        LadderRow(
            exercise=e,
            measure=problem_measure(e.problem),
            best=best.get(e.pk),
            book=rungs.get((e.problem, e.reference_step.rsplit("/", 1)[-1])) if e.reference_step else None,
            tried=e.tried,
        )
        for e in exercises
    ]


def gpu_workers_listed() -> list[GpuWorker]:
    """Every GPU worker as it last reported, for the staff page."""
    return list(
        GpuWorker.objects.select_related("current_submission", "profiling_submission").order_by("gpu_kind", "hostname")
    )


def submissions_by_status(*, hours: int = 24) -> list[dict]:
    """How many submissions are in each status, of those created in the last `hours`."""
    since = timezone.now() - timedelta(hours=hours)
    counts = dict(
        Submission.objects.filter(created_at__gte=since)
        .order_by()
        .values("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return [
        {"status": status, "label": label, "count": counts.get(status, 0)}
        for status, label in Submission.Status.choices
    ]


# --- The roofline (issue 43) ----------------------------------------------------------------------

# The compute roof of each compute_unit: the Ceilings field its worker measured, and its name in the chart.
# Memory-bound problems have no compute ceiling of their own; the FP32 rate (always measured) is drawn as theirs.
_COMPUTE_ROOFS = {
    "fp32": ("fp32_tflops", "FP32"),
    "tensor_fp16": ("tensor_fp16_tflops", "FP16 tensor"),
    "tensor_bf16": ("tensor_bf16_tflops", "BF16 tensor"),
    "memory": ("fp32_tflops", "FP32"),
}


def _shape_label(sizes: dict, names: tuple[str, ...]) -> str:
    order = [n for n in names if n in sizes] + [n for n in sizes if n not in names]
    return " ".join(f"{name}={sizes[name]}" for name in order)


def roofline_of(submission: Submission) -> charts.Roofline | None:
    """A passed submission's benchmark shapes on the roofline of the GPU that judged it, from its result alone
    (flops, bytes_moved, tflops, baseline_tflops and the worker's ceilings). None for a result without ceilings
    (older schemas), or whose shapes do no arithmetic (a transpose: no FLOP/byte to place it at)."""
    if submission.status != Submission.Status.PASSED:
        return None
    result = submission.result or {}
    ceilings = result.get("ceilings") or {}
    copy_gbps = ceilings.get("copy_gbps")
    if not isinstance(copy_gbps, (int, float)) or copy_gbps <= 0:
        return None
    measure = problem_measure(submission.exercise.problem)
    field, label = _COMPUTE_ROOFS.get(measure.compute_unit, _COMPUTE_ROOFS["fp32"])
    roof = ceilings.get(field)
    roof = float(roof) if isinstance(roof, (int, float)) and roof > 0 else None
    benchmarks = [
        b
        for b in result.get("benchmarks") or []
        if (b.get("flops") or 0) > 0 and (b.get("bytes_moved") or 0) > 0 and (b.get("tflops") or 0) > 0
    ]
    if not benchmarks:
        return None
    size = "bytes_moved" if benchmarks[0].get("unit") == Unit.GBPS else "flops"
    headline = max(range(len(benchmarks)), key=lambda i: benchmarks[i].get(size) or 0)
    shapes = tuple(
        charts.RooflineShape(
            label=_shape_label(b.get("sizes") or {}, measure.size_names),
            intensity=b["flops"] / b["bytes_moved"],
            tflops=b["tflops"],
            baseline_tflops=b.get("baseline_tflops") or None,
            headline=i == headline,
        )
        for i, b in enumerate(benchmarks)
    )
    return charts.Roofline(
        copy_gbps=float(copy_gbps), roof_tflops=roof, roof_label=label, shapes=shapes, baseline=measure.baseline
    )


@dataclass(frozen=True)
class RooflineView:
    chart: object  # SafeString: the SVG pair
    caption: str


def roofline_view(submission: Submission) -> RooflineView | None:
    roofline = roofline_of(submission)
    if roofline is None:
        return None
    telemetry = (submission.result or {}).get("telemetry") or {}
    gpu = telemetry.get("gpu_name") or submission.gpu_name or submission.gpu_kind.upper()
    chart = charts.roofline_chart(
        roofline,
        chart_id=f"roofline-{submission.public_id}",
        title=f"This kernel on the roofline of the {gpu} that judged it",
        desc="TFLOP/s against FLOP per byte, both on log scales; the dot is your kernel, the square the library.",
    )
    return RooflineView(chart=chart, caption=charts.roofline_caption(roofline))


# --- Profiles (issue 43) ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfileView:
    """What the report's profile section shows, read from a stored kernels.profile.Profile."""

    document: object  # kernels.profile.Profile
    findings: list[dict]
    speed_of_light: list[dict]  # {"label", "pct"}
    pipes: list[dict]  # {"label", "pct"}: how busy each compute pipe was
    occupancy: dict | None  # achieved, theoretical, limiter
    bytes_vs_minimum: object | None  # kernels.profile_findings.BytesVsMinimum
    stalls: list[dict]
    source_lines: list[dict]  # every source line, hot ones with share and stall
    has_report: bool
    reused_from: datetime | None  # when the identical kernel's profile this one copies was made; None: made for it


_SOL = (
    ("Compute (SM)", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("Memory", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
    ("DRAM", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
    ("L2", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("L1/shared", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
)
# The compute workload's pipes, by the aliases and derived values of kernels/profile_rules.toml: which units did the
# work (shares of cycles: FMA and ALU of active cycles, the tensor pipes the larger of their two measures).
_PIPES = (
    ("Tensor (every MMA type)", "tensor_busy"),
    ("FMA (FP32 multiply-add)", "fma_pipe"),
    ("ALU (integer, logic, compares)", "alu_pipe"),
)
_LIMITS = (
    ("registers", "launch__occupancy_limit_registers"),
    ("shared memory", "launch__occupancy_limit_shared_mem"),
    ("warps per SM", "launch__occupancy_limit_warps"),
    ("blocks per SM", "launch__occupancy_limit_blocks"),
)


def _occupancy(metrics: dict) -> dict | None:
    achieved = metrics.get("sm__warps_active.avg.pct_of_peak_sustained_active")
    theoretical = metrics.get("sm__maximum_warps_per_active_cycle_pct")
    if achieved is None or theoretical is None:
        return None
    limits = [(metrics[name], label) for label, name in _LIMITS if metrics.get(name) is not None]
    limiter = min(limits)[1] if limits else ""
    return {"achieved": achieved, "theoretical": theoretical, "limiter": limiter}


def _pipes(metrics: dict) -> list[dict]:
    values = profile_findings.values_of(metrics)
    return [{"label": label, "pct": values[alias]} for label, alias in _PIPES if alias in values]


def _source_view(source: str, lines) -> list[dict]:
    by_line = {line.line: line for line in lines}
    hottest = sorted(lines, key=lambda line: -line.share)[:5]
    hot = {line.line for line in hottest if line.share >= 1.0}
    return [
        {
            "n": n,
            "text": text,
            "hot": n in hot,
            "share": by_line[n].share if n in by_line else None,
            "stall": profile_findings.stall_words(by_line[n].stall) if n in by_line and by_line[n].stall else "",
        }
        for n, text in enumerate(source.splitlines(), start=1)
    ]


def profile_view(submission: Submission) -> ProfileView | None:
    """The profile section of a submission's report; None when there is none, or its schema is not this code's
    (an old or newer document: the rest of the report is shown as before)."""
    stored = getattr(submission, "profile", None) if hasattr(submission, "profile") else None
    if stored is None:
        return None
    try:
        document = profile_mod.Profile.from_dict(stored.data)
    except (ValueError, TypeError):
        logger.warning("profile of %s has an unknown schema", submission.public_id)
        return None
    metrics = document.metrics or {}
    try:
        problem = judge_problems.load(submission.exercise.problem)
    except (FileNotFoundError, judge_problems.ProblemError):
        problem = None
    return ProfileView(
        document=document,
        findings=stored.findings or [],
        speed_of_light=[{"label": label, "pct": metrics[name]} for label, name in _SOL if name in metrics],
        pipes=_pipes(metrics),
        occupancy=_occupancy(metrics),
        bytes_vs_minimum=profile_findings.bytes_vs_minimum(metrics, problem=problem, sizes=document.sizes)
        if problem and document.profiled
        else None,
        stalls=profile_findings.top_stalls(metrics),
        source_lines=_source_view(submission.source, document.source_lines) if document.source_lines else [],
        has_report=bool(stored.report_file),
        reused_from=datetime.fromisoformat(document.reused_from_profile_at)
        if document.reused_from_profile_at
        else None,
    )


def profile_to_reuse(submission: Submission, *, now: datetime | None = None) -> Profile | None:
    """The newest profile of another submission that an ncu run for `submission` would remake (issue 43: readers
    submit the starter unchanged again and again): the same kernel (source digest, language, arch), problem and GPU
    kind; profiled, in this code's schema, with a report to copy, recorded within PROFILE_REUSE_DAYS. None when reuse
    is off (0 days) or there is none. Only profiles made on a GPU are offered: a copy of a copy would carry its donor's
    age past the window, since a copy's own updated_at is when it was copied."""
    days = settings.PROFILE_REUSE_DAYS
    if days <= 0:
        return None
    now = now or timezone.now()
    return (
        Profile.objects.filter(
            submission__source_sha256=submission.source_sha256,
            submission__language=submission.language,
            submission__arch=submission.arch,
            submission__gpu_kind=submission.gpu_kind,
            submission__exercise__problem=submission.exercise.problem,
            status__in=[state.value for state in profile_mod.PROFILED_STATES],
            schema_version=profile_mod.PROFILE_SCHEMA_VERSION,
            updated_at__gt=now - timedelta(days=days),
        )
        .filter(Q(data__reused_from_profile_at="") | ~Q(data__has_key="reused_from_profile_at"))
        .exclude(submission=submission)
        .exclude(report_file="")
        .order_by("-updated_at")
        .first()
    )


def capsule_findings(capsule, *, limit: int = 5) -> list[dict]:
    """The findings that point to this capsule, counted over every reader's profiled kernels: counts only."""
    rows = (
        ProfileFinding.objects.filter(capsule_slug=capsule.slug)
        .values("rule")
        .annotate(kernels=Count("profile", distinct=True))
        .order_by("-kernels", "rule")[:limit]
    )
    titles = {rule.id: rule.title for rule in profile_findings.load().rules}
    return [
        {"rule": row["rule"], "title": titles.get(row["rule"], row["rule"]), "kernels": row["kernels"]} for row in rows
    ]


def profile_report_path(submission: Submission):
    """The .ncu-rep of a submission's profile if it exists on disk, kept inside PROFILE_ROOT; else None."""
    stored = getattr(submission, "profile", None) if hasattr(submission, "profile") else None
    if stored is None or not stored.report_file:
        return None
    root = settings.PROFILE_ROOT.resolve()
    path = (root / stored.report_file).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        return None
    return path


# --- PTX and SASS (issue 46) ---------------------------------------------------------------------------------------


def compiled_code(submission: Submission) -> list[tuple[str, bytes, str]]:
    """(name, cubin, PTX) of what a submission compiled to, in the order the report shows them: CUDA's one file
    ("submission.cu"), or each Triton build, named as its resource report names it ("softmax (build 2)" where a kernel
    has several). [] before the compile, after a failed one, or for a result without cubins."""
    from kernels import CompileResult
    from kernels.triton_launch import build_names

    if not submission.compiled:
        return []
    compiled = CompileResult.from_dict(submission.compiled)
    if not compiled.ok:
        return []
    if compiled.language == Submission.Language.TRITON:
        return [(n, k.cubin, k.ptx) for n, k in zip(build_names(compiled), compiled.triton_kernels, strict=True)]
    return [("submission.cu", compiled.cubin, compiled.ptx)] if compiled.cubin else []


def cubins_digest(code: list[tuple[str, bytes, str]]) -> str:
    """What a Disassembly was made from: the cubins in order (a re-run that compiled again has other cubins)."""
    digest = hashlib.sha256()
    for name, cubin, _ptx in code:
        digest.update(f"{name}\0{len(cubin)}\0".encode())
        digest.update(cubin)
    return digest.hexdigest()


@dataclass(frozen=True)
class AssemblyListing:
    name: str  # "submission.cu", or a Triton build's name
    ptx: str  # "" where the PTX was not kept (compiled before it was)
    sass: str  # "" until disassembled, or where cuobjdump refused the cubin (`sass_error`)
    sass_error: str
    sass_truncated: bool


@dataclass(frozen=True)
class AssemblyView:
    """The report's "PTX / SASS" section (templates/submissions/_assembly.html)."""

    compiled: bool  # False: nothing to show yet (not compiled, or the compile failed)
    listings: list[AssemblyListing]
    ptx_by: str  # "NVRTC 12.9", "Triton 3.9.0"
    ptx_kept: bool  # False for a submission compiled before the PTX was kept
    pending: bool  # the SASS is being made: the section asks again
    sass_by: str  # "cuobjdump 13.1"
    message: str  # why there is no SASS (the tool's or the judge's words), or ""


def assembly_view(submission: Submission, disassembly=None) -> AssemblyView:
    """What the section shows of a submission's code and of its Disassembly (None: not asked for yet)."""
    from kernels.results import SassResult

    code = compiled_code(submission)
    compiled = submission.compiled or {}
    if submission.is_triton:
        ptx_by = f"Triton {compiled.get('triton_version') or ''}".strip()
    else:
        ptx_by = f"NVRTC {compiled.get('nvrtc_version') or ''}".strip()
    current = disassembly is not None and disassembly.cubins_sha256 == cubins_digest(code)
    result = SassResult.from_dict(disassembly.result) if current and disassembly.result else None
    by_name = {listing.name: listing for listing in result.listings} if result else {}
    listings = []
    for name, _cubin, ptx in code:
        sass = by_name.get(name)
        listings.append(
            AssemblyListing(
                name=name,
                ptx=ptx,
                sass=sass.sass if sass else "",
                sass_error=sass.error if sass else "",
                sass_truncated=bool(sass and sass.truncated),
            )
        )
    return AssemblyView(
        compiled=bool(code),
        listings=listings,
        ptx_by=ptx_by,
        ptx_kept=any(listing.ptx for listing in listings),
        pending=bool(code) and (not current or disassembly.status == disassembly.Status.PENDING),
        sass_by=result.tool if result else "",
        message=result.message if result and not result.listings else "",
    )

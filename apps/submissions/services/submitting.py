"""Submitting a kernel: the checks a reader's file must pass, the hourly and daily quota, and the stored
submission whose compile is queued."""

from __future__ import annotations

import ast
import hashlib
import re

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.reading.policy import can_read
from apps.submissions.models import Exercise, Submission
from apps.submissions.selectors import LANGUAGE_SUFFIX, exercise_gpu_kind, languages_offered, quota_get
from apps.submissions.services.lifecycle import _enqueue_compile, _seconds

Language = Submission.Language


class SubmissionRefused(Exception):
    """A submission is not accepted; `message` is for the reader, `field` names the input at fault."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message, self.field = message, field


def plan_into_source(source: str, plan: str) -> str:
    """The launch plan typed beside the editor replaces any `/* @plan ... */` block of the file. The file's blocks are
    found by the judge's own scanner (linear in the file's length, kernels.plan.plan_blocks)."""
    from kernels.plan import PLAN_OPENING, PlanError, plan_blocks

    body = plan.strip()
    opening = PLAN_OPENING.match(body)
    if opening and body.endswith("*/") and len(body) >= opening.end() + 2:  # the whole comment was pasted
        body = body[opening.end() : -2].strip()
    if "*/" in body:
        raise SubmissionRefused("The launch plan may not contain '*/' (it is stored inside a comment).", field="plan")
    try:
        blocks = plan_blocks(source)
    except PlanError as error:
        raise SubmissionRefused(f"The file's launch plan: {error}", field="source") from None
    kept, position = [], 0
    for block in blocks:
        kept.append(source[position : block.start])
        position = block.end
    kept.append(source[position:])
    return f"{''.join(kept).rstrip()}\n\n/* @plan\n{body}\n*/\n"


# The whole assignment pasted into the plan field, rather than the TOML inside it.
_PASTED_TRITON_PLAN = re.compile(r"""^PLAN\s*(?::[^=]*)?=\s*[rR]?('''|\"\"\")(?P<body>.*)\1$""", re.DOTALL)


def triton_plan_into_source(source: str, plan: str) -> str:
    """A Triton file's counterpart of `plan_into_source`: the plan typed beside the editor replaces the file's
    module-level `PLAN = \"\"\"...\"\"\"` assignment, found by the judge's own parser (kernels.triton_source), and is
    written at the end of the file as a raw string (TOML's backslashes stay as typed)."""
    from kernels.triton_source import PLAN_NAME, SourceRejected, parse

    body = plan.strip()
    pasted = _PASTED_TRITON_PLAN.match(body)
    if pasted:
        body = pasted["body"].strip()
    if '"""' in body or body.endswith("\\"):
        raise SubmissionRefused(
            'The launch plan may not contain """ or end with a backslash (it is stored in the file\'s PLAN string).',
            field="plan",
        )
    try:
        tree = parse(source)
    except SourceRejected as error:
        raise SubmissionRefused(
            f"The file does not parse, so the plan cannot go into it: {error}", field="source"
        ) from None
    # By the parser's line numbers, which count "\n" (the source's line ends are LF by now): splitlines() would also
    # split at form feeds and the like, and drop the wrong lines.
    lines = source.split("\n")
    dropped = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(target, ast.Name) and target.id == PLAN_NAME for target in targets):
            dropped.update(range(node.lineno - 1, node.end_lineno))
    kept = "\n".join(line for index, line in enumerate(lines) if index not in dropped)
    return f'{kept.rstrip()}\n\n\n{PLAN_NAME} = r"""\n{body}\n"""\n'


def _refuse_oversize(source: str) -> None:
    limit = Submission.source_max_bytes()
    size = len(source.encode("utf-8"))
    if size > limit:
        raise SubmissionRefused(
            f"The source is {-(-size // 1024):,} KB; the limit is {limit // 1024:,} KB.", field="source"
        )


def _refuse_unparsed_plan(source: str, language: str, problem: str) -> None:
    """The plan is read before anything is stored, so that a plan that cannot work is refused in seconds without
    using a submission. For Triton, only the plan: a file that does not parse is the compile's verdict
    (source_rejected with its line), as a CUDA file's screen is."""
    from kernels.plan import PlanError, extract_plan

    if language != Language.TRITON:
        try:
            extract_plan(source)
        except PlanError as error:
            raise SubmissionRefused(f"The launch plan does not parse: {error}", field="plan") from None
        return
    from kernels import problems, triton_source

    try:
        triton_source.extract(source, problems.load(problem))
    except triton_source.PlanError as error:
        raise SubmissionRefused(f"The launch plan does not work: {error}", field="plan") from None
    except (triton_source.SourceRejected, problems.ProblemError):
        return


def submission_create(
    *,
    user,
    exercise: Exercise,
    source: str,
    plan: str | None = None,
    filename: str = "",
    language: str = Language.CUDA,
) -> Submission:
    """Store a reader's kernel (source first), then queue its compile. `language`: "cuda" (a .cu file) or "triton"
    (a .py file, where the exercise offers it: selectors.languages_offered). Raises SubmissionRefused."""
    from kernels.plan import MAX_PLAN_CHARS

    if user is None or not user.is_authenticated:
        raise SubmissionRefused("Sign in to submit a kernel.")
    if not can_read(user, exercise.capsule):
        raise SubmissionRefused("This exercise belongs to a locked capsule: subscribe to submit kernels to it.")
    if not exercise.is_open:
        raise SubmissionRefused("This exercise is closed: it shows results but takes no new submissions.")
    if language not in languages_offered(exercise):
        offered = Language.TRITON.label if language == Language.TRITON else repr(language)
        raise SubmissionRefused(f"{offered} is not offered for this exercise: submit CUDA C++.", field="language")
    label, suffix = Language(language).label, LANGUAGE_SUFFIX[language]
    source = (source or "").replace("\r\n", "\n")
    if not source.strip():
        raise SubmissionRefused(
            f"The source is empty: paste your kernel into the editor or upload a {suffix} file.", field="source"
        )
    if "\x00" in source:
        raise SubmissionRefused(f"The file is not {label} source text (it contains NUL bytes).", field="source")
    # Sizes first, before anything looks for the plan (and again once a typed plan joined the file).
    _refuse_oversize(source)
    if plan is not None and len(plan) > MAX_PLAN_CHARS:
        raise SubmissionRefused(f"The launch plan is over the limit of {MAX_PLAN_CHARS:,} characters.", field="plan")
    if plan is not None and plan.strip():
        into = triton_plan_into_source if language == Language.TRITON else plan_into_source
        source = into(source, plan)
        _refuse_oversize(source)
    _refuse_unparsed_plan(source, language, exercise.problem)

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
            filename=(filename or "")[: Submission.FILENAME_MAX_CHARS],
            language=language,
            source_sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
            gpu_kind=exercise_gpu_kind(exercise),  # a GPU that runs the exercise's target
            arch=exercise.arch,
            status=Submission.Status.QUEUED,
            deadline_at=_seconds(settings.SUBMISSION_COMPILE_DEADLINE_S),
        )
        _enqueue_compile(submission)
    return submission

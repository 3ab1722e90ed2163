"""Profiles made and asked for (issue 43): the GPU worker's profile of an accepted submission, queued after its
judgement and on a reader's request.

- `profile_after_judgement`: the pipeline's record step calls it; a judgement recorded as passed queues a profile on
  `gpu.<kind>.profile` once the record commits (when PROFILES_ENABLED).
- `submission_profile`: the task's service, on the GPU worker: `judge.profile` (kernels.judge.GpuJudge, the device
  held alone) on the stored CompileResult and JudgeResult, or a copy of an identical kernel's recent profile (no GPU
  time), the report written under PROFILE_ROOT, then `profile_record`. It never changes a verdict or a figure, and a
  second delivery of its message finds the profile made and does nothing.
- `profile_request_create`: a reader's "Profile again", counted in the database against PROFILE_REQUESTS_PER_DAY
  over the last 24 hours (staff: no limit).
"""

from __future__ import annotations

import logging
import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from apps.submissions.gpu_node import profile_queue
from apps.submissions.models import GpuWorker, Profile, ProfileRequest, Submission
from apps.submissions.selectors import profile_to_reuse
from apps.submissions.selectors_profiles import profile_request_pending, profile_request_quota
from apps.submissions.services.profiling import profile_record
from config.broker import BROKER_ERRORS
from kernels import profile as profile_mod

logger = logging.getLogger(__name__)


class ProfileRequestRefused(Exception):
    """A request to profile again that is not taken; the message says why, in words for the reader."""


# --- Queueing --------------------------------------------------------------------------------------------------------


def _enqueue_profile(submission: Submission, request: ProfileRequest | None = None) -> None:
    """Send the profile task once the transaction commits, to the profile queue of the submission's GPU kind (named
    here, as the judge's queue is: it depends on the submission). A broker that is down loses this profile only: it is
    logged, and the judgement, already committed, stands. A reader's request whose message was lost is taken back:
    it neither counts against their quota nor shows as on its way, so they may simply ask again."""
    from apps.submissions.tasks import submission_profile_task

    submission_id, queue = submission.pk, profile_queue(submission.gpu_kind)
    request_id = request.pk if request is not None else None

    def send() -> None:
        try:
            submission_profile_task.apply_async(args=[submission_id], queue=queue)
        except BROKER_ERRORS as error:
            logger.warning("submission %s: the broker refused its profile (%s); none is made", submission_id, error)
            if request_id is not None:
                ProfileRequest.objects.filter(pk=request_id, done_at__isnull=True).delete()

    transaction.on_commit(send)


def profile_after_judgement(submission: Submission) -> None:
    """The pipeline's hook (services.pipeline.submission_gpu_record): called once per recorded judgement, inside its
    transaction; only a pass is profiled."""
    if settings.PROFILES_ENABLED and submission.status == Submission.Status.PASSED:
        _enqueue_profile(submission)


# --- The profile itself (GPU worker) ---------------------------------------------------------------------------------


def report_name(submission: Submission) -> str:
    """Where a submission's .ncu-rep lives, relative to PROFILE_ROOT: named after its public id alone (never after
    anything a reader typed), in a folder per first two hex digits so that no folder grows past a few thousand."""
    return f"{submission.public_id.hex[:2]}/{submission.public_id}.ncu-rep"


def _report_write(submission: Submission, report: bytes | None) -> str:
    """Store the report bytes (or remove an older profile's report, which must not outlive its document); returns
    the name the document records, "" when there is none. Written aside and renamed, so that a download never reads
    half a file."""
    name = report_name(submission)
    path = settings.PROFILE_ROOT / name
    if not report:
        path.unlink(missing_ok=True)
        return ""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_bytes(report)
    os.replace(partial, path)
    return name


def _request_open(submission: Submission) -> bool:
    """A reader's request for this submission not answered yet, however old (the quota's "pending" has a window)."""
    return ProfileRequest.objects.filter(submission=submission, done_at__isnull=True).exists()


def _profile_due(submission: Submission) -> bool:
    """No profile yet, one older than the submission's latest judgement (a staff re-run judged it again), or a
    reader's request not done yet. Otherwise this message was delivered before, and its profile is stored."""
    recorded_at = Profile.objects.filter(submission=submission).values_list("updated_at", flat=True).first()
    if recorded_at is None or (submission.finished_at and recorded_at < submission.finished_at):
        return True
    return _request_open(submission)


def _profile_copied(submission: Submission):
    """A kernels.profile_run.ProfileRun copied from an identical kernel's recent profile (selectors.profile_to_reuse):
    the same compiled kernel, problem and GPU kind make the same profile, and each ncu run holds a GPU for about
    PROFILE_BUDGET_S that judgements wait behind. None, and ncu runs, while a reader's request for this submission is
    pending ("Profile again" is answered by a fresh profile, never a copy), when there is no such profile, or when its
    report is gone from disk (deleted with its submission since): a copy without the report would be a poorer one."""
    from kernels.profile_run import ProfileRun

    if _request_open(submission):
        return None
    donor = profile_to_reuse(submission)
    if donor is None:
        return None
    try:
        report = donor.report_path.read_bytes()
    except OSError:
        return None
    document = profile_mod.Profile.from_dict(donor.data)
    document.gpu_seconds = 0.0  # what this profile cost: the donor's GPU time was counted once, by the donor
    document.reused_from_profile_at = donor.updated_at.isoformat()
    return ProfileRun(document, report)


def _profile_made(submission: Submission, compiled, judged, *, judge, worker_name: str):
    """`judge.profile` on this worker's GPU, the worker's row marked for the staff judge page while it runs."""
    # The worker's row says "profiling" while ncu runs (the staff judge page); a profile is no judgement, so it is not
    # current_submission, which the sweeper and the duplicate check read. Outside a transaction: seen at once.
    this_worker = GpuWorker.objects.filter(hostname=worker_name)
    this_worker.update(profiling_submission=submission, last_seen_at=timezone.now())
    try:
        return judge.profile(compiled, judged, ncu_setting=settings.PROFILE_NCU, budget_s=settings.PROFILE_BUDGET_S)
    finally:
        # However it ended (a failure, the soft time limit), and only while it names this submission: a later run's
        # mark on the same row (a restarted process of this node name) is never wiped.
        this_worker.filter(profiling_submission=submission).update(profiling_submission=None)


def submission_profile(*, submission_id: int, judge, worker_name: str = "") -> Profile | None:
    """Profile an accepted submission on this GPU worker and record the result: a copy of an identical kernel's recent
    profile where there is one (`_profile_copied`), else a run of `judge`, the worker's kernels.GpuJudge (anything with
    its `profile(compiled, judged, *, ncu_setting, budget_s)`); `worker_name`, the worker's node name, whose GpuWorker
    row shows the profile while it runs. None when there was nothing to do: profiles off, the submission gone or not
    passed, no stored compile or judgement to profile, or the profile already made for this judgement and every
    request."""
    from kernels import CompileResult
    from kernels.results import JudgeResult

    if not settings.PROFILES_ENABLED:
        return None  # turned off after the message was sent: spend no GPU time on it
    submission = Submission.objects.select_related("exercise").filter(pk=submission_id).first()
    if submission is None or submission.status != Submission.Status.PASSED:
        return None
    if not submission.compiled or not submission.result or not _profile_due(submission):
        return None
    try:
        compiled = CompileResult.from_dict(submission.compiled)
        judged = JudgeResult.from_dict(submission.result)
    except (KeyError, TypeError, ValueError):
        logger.warning("submission %s: its stored results are not this judge's schema; not profiled", submission_id)
        return None
    begun = timezone.now()
    run = _profile_copied(submission) or _profile_made(
        submission, compiled, judged, judge=judge, worker_name=worker_name
    )
    document = run.document
    document.report_file = _report_write(submission, run.report)
    profile = profile_record(submission_id=submission.pk, document=document)
    if profile is None:  # re-queued by staff while it was profiled: this report belongs to no stored profile
        _report_write(submission, None)
        return None
    # Requests made before this profile began are answered by it; one made during the run waits for the next.
    ProfileRequest.objects.filter(submission=submission, done_at__isnull=True, created_at__lte=begun).update(
        done_at=timezone.now()
    )
    return profile


def profile_report_delete(*, report_file: str) -> None:
    """Remove a deleted profile's .ncu-rep (it holds the reader's source: --import-source) once the deletion commits;
    a deletion rolled back keeps it. Only a name inside PROFILE_ROOT is removed."""
    root = settings.PROFILE_ROOT.resolve()
    path = (root / report_file).resolve()
    if report_file and path.is_relative_to(root):
        transaction.on_commit(lambda: path.unlink(missing_ok=True))


def profile_deleted(sender, instance: Profile, **kwargs) -> None:
    # Connected to Profile's post_delete (apps.submissions.apps): a submission deleted with its account, in admin or by
    # a cascade takes its report with it, whichever way its row went.
    profile_report_delete(report_file=instance.report_file)


# --- A reader asks again -----------------------------------------------------------------------------------------


def _when(moment) -> str:
    return f"{timezone.localtime(moment):%-d %b, %H:%M} UTC"


@transaction.atomic
def profile_request_create(*, user, submission: Submission) -> ProfileRequest:
    """Ask for `submission` (the reader's own, accepted) to be profiled again; the profile is queued once this
    commits. Raises ProfileRequestRefused, counting nothing, when profiles are off, the submission is not the
    reader's or not accepted, a request for it is already on its way, or the reader has used their
    PROFILE_REQUESTS_PER_DAY over the last 24 hours (staff are not limited)."""
    if not settings.PROFILES_ENABLED:
        raise ProfileRequestRefused("Profiling is off on this site for now; the profile shown is the latest one.")
    if submission.user_id != user.pk:
        raise ProfileRequestRefused("Only the reader who submitted a kernel can ask for its profile.")
    if submission.status != Submission.Status.PASSED:
        raise ProfileRequestRefused("Only accepted submissions are profiled.")
    # The reader's row, locked: two requests sent at once are counted one after the other, never both under the limit.
    get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True).first()
    if profile_request_pending(submission):
        raise ProfileRequestRefused(
            "A new profile of this submission is already on its way: it runs when a GPU has no judgement waiting."
        )
    quota = profile_request_quota(user)
    if quota.left == 0:
        raise ProfileRequestRefused(
            f"You have asked for {quota.limit} profiles in the last 24 hours, the most a reader may: 0 left. "
            f"The next one is possible from {_when(quota.next_at)}."
        )
    request = ProfileRequest.objects.create(user=user, submission=submission)
    _enqueue_profile(submission, request)
    logger.info("profile requested", extra={"submission": str(submission.public_id)})
    return request

"""The report's SASS (issue 46): asked for by the submission's owner or staff, made by a compile worker, kept.

`disassembly_request` (the section's view) finds the submission's Disassembly or queues one; `disassembly_make`
(the `submissions.disassemble` task, on the `compile` queue) runs cuobjdump on the cubins in the judge's confined
child (kernels/disasm.py) and stores what it said. Why a row and a compile worker: apps.submissions.models.Disassembly.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.submissions.models import Disassembly, Submission
from apps.submissions.selectors import compiled_code, cubins_digest
from config.broker import BROKER_ERRORS

logger = logging.getLogger(__name__)
Status = Disassembly.Status

# A request still pending after this long lost its message (a broker outage, a worker killed mid-task: the task is
# acknowledged late, so that is rare) and is queued again by the next look; as long again after a failure without a
# listing (the tool missing, the time limit hit), so that a passing fault does not stay on the page.
RETRY_AFTER_S = 120


def disassembly_request(*, submission: Submission) -> Disassembly | None:
    """The submission's Disassembly for its cubins as they are now, queued for a compile worker where there is none,
    where it was made from other cubins (staff re-ran the submission), or where it waited or failed for longer than
    RETRY_AFTER_S. None when there is nothing to disassemble (not compiled, or the compile failed). Asked on every
    look at the section (its view polls while it is pending); it queues at most one job per RETRY_AFTER_S."""
    code = compiled_code(submission)
    if not code:
        return None
    digest = cubins_digest(code)
    now = timezone.now()
    with transaction.atomic():
        disassembly, created = Disassembly.objects.select_for_update().get_or_create(
            submission=submission, defaults={"cubins_sha256": digest, "requested_at": now}
        )
        stale = disassembly.cubins_sha256 != digest
        waited = now - disassembly.requested_at > timedelta(seconds=RETRY_AFTER_S)
        if not (created or stale or (waited and disassembly.status != Status.DONE)):
            return disassembly
        disassembly.cubins_sha256, disassembly.status, disassembly.requested_at = digest, Status.PENDING, now
        disassembly.result, disassembly.finished_at = None, None
        disassembly.save()
        transaction.on_commit(lambda: _send(disassembly.pk))
    return disassembly


def _send(disassembly_id: int) -> None:
    from apps.submissions.tasks import disassembly_make_task

    try:
        disassembly_make_task.delay(disassembly_id)
    except BROKER_ERRORS as error:  # the page must not fail for it: the next look after RETRY_AFTER_S sends it again
        logger.warning("disassembly %s: the broker refused its job (%s)", disassembly_id, error)


def disassembly_make(*, disassembly_id: int) -> Disassembly | None:
    """The task's service, on a compile worker: cuobjdump -sass on the submission's cubins as they are now, in the
    judge's confined child; the result stored once. Nothing is locked while the tool runs (up to its 30 s)."""
    from kernels import disasm

    disassembly = Disassembly.objects.select_related("submission").filter(pk=disassembly_id).first()
    if disassembly is None or disassembly.status != Status.PENDING:
        return disassembly  # made already (a redelivered message), or gone with its submission
    code = compiled_code(disassembly.submission)
    digest = cubins_digest(code)
    result = disasm.disassemble([(name, cubin) for name, cubin, _ptx in code], cuobjdump=settings.SUBMISSIONS_CUOBJDUMP)
    with transaction.atomic():
        disassembly = Disassembly.objects.select_for_update().filter(pk=disassembly_id).first()
        # A re-run may have compiled other cubins meanwhile: this answer is for the cubins it read, and the next
        # request, seeing another digest, asks again.
        if disassembly is None or disassembly.status != Status.PENDING:
            return disassembly
        disassembly.cubins_sha256 = digest
        disassembly.result = result.to_dict()
        disassembly.status = Status.DONE if result.listings else Status.FAILED
        disassembly.finished_at = timezone.now()
        disassembly.save()
    if not result.listings:
        logger.warning("disassembly of submission %s: %s", disassembly.submission_id, result.message)
    return disassembly

"""Profiles of accepted submissions (issue 43): a profile document recorded with its findings.

The GPU worker's profile child (still to come: kernels/README.md, "Profiles") ends in a kernels.profile.Profile,
whatever happened: profiled, off on this node and why, no ncu, or failed under replay. `profile_record` stores it,
and a profile that could not be made is stored the same way, so the report says why; it never touches the
submission's status, verdict or figures.
"""

from __future__ import annotations

import logging

from django.db import transaction

from apps.submissions.models import Profile, ProfileFinding, Submission
from kernels import problems, profile_findings
from kernels import profile as profile_mod

logger = logging.getLogger(__name__)


def _findings_of(document: profile_mod.Profile, problem_name: str) -> list[dict]:
    if not document.profiled or not document.metrics:
        return []
    try:
        problem = problems.load(problem_name)
    except (FileNotFoundError, problems.ProblemError):
        problem = None
    found = profile_findings.findings(document.metrics, problem=problem, sizes=document.sizes or None)
    return [finding.to_dict() for finding in found]


@transaction.atomic
def profile_record(*, submission_id: int, document: profile_mod.Profile) -> Profile | None:
    """Store (or replace) the profile of a passed submission with its findings; None if the submission is gone
    or did not pass (a profile is only made of accepted kernels)."""
    submission = Submission.objects.filter(pk=submission_id).select_related("exercise").first()
    if submission is None or submission.status != Submission.Status.PASSED:
        return None
    findings = _findings_of(document, submission.exercise.problem)
    profile, _ = Profile.objects.update_or_create(
        submission=submission,
        defaults={
            "schema_version": document.schema_version,
            "status": document.status,
            "data": document.to_dict(),
            "findings": findings,
            "report_file": document.report_file,
        },
    )
    profile.finding_rows.all().delete()
    ProfileFinding.objects.bulk_create(
        ProfileFinding(profile=profile, rule=f["rule"], capsule_slug=f["capsule_slug"], severity=f["severity"])
        for f in findings
    )
    logger.info("profile recorded", extra={"submission": submission.public_id, "status": document.status})
    return profile

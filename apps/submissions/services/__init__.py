"""Writes for exercises and submissions (ARCHITECTURE.md, convention 4); every status change happens here
(convention 5). One module per topic; callers import the names from this package:

- `lifecycle`: the statuses and which may follow which, and queueing a submission's next stage;
- `exercises`: exercises imported with the book and edited in admin;
- `submitting`: a reader's kernel checked, counted against the quota, stored and queued;
- `pipeline`: the compile stage (CPU) and the GPU stage (claim, judge, record once);
- `sweeper`: stuck submissions queued again or failed;
- `staff`: re-runs and reviews of flagged results;
- `reference`: the reference ladder measured, exported and loaded;
- `profiling`: an accepted submission's Nsight Compute profile recorded with its findings (issue 43);
- `disassembly`: the report's SASS, asked for, made by a compile worker, kept (issue 46);
- `profile_runs`: an accepted submission's profile queued after its pass and made on a GPU worker, and a reader's
  request for another (issue 43).

A submission's life: QUEUED -> COMPILING -> COMPILED -> RUNNING -> PASSED | FAILED | ERROR | TIMED_OUT.
"""

from apps.submissions.services.disassembly import disassembly_make, disassembly_request
from apps.submissions.services.exercises import exercise_save, exercises_import
from apps.submissions.services.lifecycle import IN_PROGRESS, TRANSITIONS, TransitionRefused, web_status
from apps.submissions.services.pipeline import (
    submission_compile,
    submission_gpu_claim,
    submission_gpu_record,
    submission_gpu_start,
    submission_judge,
    submission_orphans_resend,
)
from apps.submissions.services.profile_runs import ProfileRequestRefused, profile_request_create, submission_profile
from apps.submissions.services.profiling import profile_record
from apps.submissions.services.reference import (
    reference_ladder_load,
    reference_ladder_measure,
    reference_result_store,
    reference_results_export,
    reference_results_load,
)
from apps.submissions.services.staff import submission_rerun, submission_review_set
from apps.submissions.services.submitting import (
    SubmissionRefused,
    plan_into_source,
    submission_create,
    triton_plan_into_source,
)
from apps.submissions.services.sweeper import SweepReport, submission_sweep

__all__ = [
    "profile_record",
    "ProfileRequestRefused",
    "profile_request_create",
    "submission_profile",
    "IN_PROGRESS",
    "TRANSITIONS",
    "SubmissionRefused",
    "SweepReport",
    "TransitionRefused",
    "disassembly_make",
    "disassembly_request",
    "exercise_save",
    "exercises_import",
    "plan_into_source",
    "reference_ladder_load",
    "reference_ladder_measure",
    "reference_result_store",
    "reference_results_export",
    "reference_results_load",
    "submission_compile",
    "submission_create",
    "submission_gpu_claim",
    "submission_gpu_record",
    "submission_gpu_start",
    "submission_judge",
    "submission_orphans_resend",
    "submission_review_set",
    "submission_rerun",
    "submission_sweep",
    "triton_plan_into_source",
    "web_status",
]

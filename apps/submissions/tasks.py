"""Celery tasks of the judge pipeline. Each takes ids and calls one service (ARCHITECTURE.md, convention 7).

Queues: `compile` (CPU workers: NVRTC, no GPU taken; routed by CELERY_TASK_ROUTES) and `gpu.<kind>` (one
worker process per GPU; named by whoever enqueues, since it depends on the job's GPU kind), with the profiles of
accepted kernels on `gpu.<kind>.profile` (issue 43), which the same workers take when no judgement waits. The
tasks are acknowledged late and given back when their worker dies (also global settings, repeated here
because losing a GPU job silently is the one thing this pipeline must not do); the services make a second
delivery harmless. Like every task of the site (config.celery.SiteTask), they retry a transient database
error ("database is locked" under SQLite, a connection lost) with backoff rather than leaving the
submission to the sweeper's deadlines.
"""

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from apps.submissions import services, worker


@shared_task(
    name="submissions.compile",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=90,
    time_limit=120,
)
def submission_compile_task(submission_id: int) -> None:
    # NVRTC itself runs in a child with a 30 s timeout (kernels.compiler); these limits are the safety net.
    services.submission_compile(submission_id=submission_id)


@shared_task(
    name="submissions.judge",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.SUBMISSION_GPU_TASK_SOFT_LIMIT_S,
    time_limit=settings.SUBMISSION_GPU_TASK_SOFT_LIMIT_S + 60,
)
def submission_judge_task(self, submission_id: int) -> None:
    # The judge kills its sandboxed child after the exercise's own limit; the task's limits only catch
    # a judge that itself stopped answering. Then the child is replaced and the sweeper re-queues the job.
    try:
        services.submission_judge(
            submission_id=submission_id,
            worker_name=self.request.hostname,
            judge=worker.judge(),
            gpu_index=worker.gpu_index(),
        )
    except SoftTimeLimitExceeded:
        worker.judge_reset()
        raise


@shared_task(
    name="submissions.disassemble",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=90,
    time_limit=120,
)
def disassembly_make_task(disassembly_id: int) -> None:
    # On the `compile` queue (CELERY_TASK_ROUTES): cuobjdump reads reader-built cubins, in the judge's confined child
    # with a 30 s timeout (kernels/disasm.py); these limits are the safety net.
    services.disassembly_make(disassembly_id=disassembly_id)


# The profile child's own limit is 90 s + twice the budget, and its sandbox's 30 s more (kernels/profile_run.py); these
# are the net above it, with room for the device lock (GpuJudge.profile waits for spares' setup steps).
PROFILE_SOFT_LIMIT_S = int(180 + 2 * settings.PROFILE_BUDGET_S)


@shared_task(
    name="submissions.profile",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=PROFILE_SOFT_LIMIT_S,
    time_limit=PROFILE_SOFT_LIMIT_S + 60,
)
def submission_profile_task(submission_id: int) -> None:
    # Issue 43: on `gpu.<kind>.profile`, named where it is sent (services.profile_runs); a GPU worker takes it only
    # when no judgement waits (CELERY_BROKER_TRANSPORT_OPTIONS' queue_order_strategy).
    try:
        services.submission_profile(submission_id=submission_id, judge=worker.judge(), worker_name=worker.node_name())
    except SoftTimeLimitExceeded:
        worker.judge_reset()  # as for a judgement: the next job gets a fresh child
        raise


@shared_task(name="submissions.sweep", soft_time_limit=50, time_limit=60)
def submission_sweep_task() -> None:
    services.submission_sweep()


@shared_task(
    name="submissions.reference_ladder",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=3600,
    time_limit=3660,
)
def reference_ladder_task(self, gpu_kind: str, steps: list[str] | None = None) -> None:
    """Judge the reference ladder (kernels/reference) on this worker's GPU and store ReferenceResults."""
    services.reference_ladder_measure(gpu_kind=gpu_kind, judge=worker.judge(), steps=steps)

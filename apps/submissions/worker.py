"""The GPU worker process: one warm `kernels.GpuJudge` per Celery worker process, its registration and
heartbeat (GpuWorker rows: operators and the progress page see who is online).

One GPU = one Celery worker with one process (README.md, "Operators"):

    CUDA_VISIBLE_DEVICES=0 GPU_KIND=h200 celery -A config worker -Q gpu.h200,gpu.h200.profile -c 1 -n gpu0@%h \
        --prefetch-multiplier 1

A worker is a GPU worker when it consumes a `gpu.<kind>` queue (or `gpu.<kind>.profile`, the profiles of accepted
kernels, issue 43); CPU workers (`-Q default`, `-Q compile`) neither register nor start a judge. The signals are
connected when this module is imported, from
SubmissionsConfig.ready(): a Celery worker sets Django up first thing (Celery's Django fixup, in
WorkController.__init__, before `celeryd_after_setup` and long before `worker_process_init`), so every signal
below is connected before it is sent. Nothing here imports Django models at module level.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import threading

from celery import signals

from apps.submissions.gpu_node import PROFILE_QUEUE_SUFFIX

logger = logging.getLogger(__name__)

_node_name = ""  # the Celery node name (-n), learnt in the main process before the pool forks
_judge = None
_heartbeat_stop = threading.Event()


def gpu_kind() -> str:
    """The kind of the first `gpu.<kind>` queue given to `celery worker -Q`; "" for any other worker.

    Decided by the queues, not by GPU_KIND alone: .env (and so every container) may set GPU_KIND, and a CPU
    worker must never report itself as a GPU that is online."""
    for queue in consumed_queues():
        if queue.startswith("gpu."):
            # gpu.h200.profile is h200's too: a worker of profiles alone still reports the GPU it profiles on.
            return queue[4:].removesuffix(PROFILE_QUEUE_SUFFIX)
    return ""


def consumed_queues() -> list[str]:
    """The queues given to `celery worker -Q` (empty: Celery's default queue only)."""
    argv, queues = sys.argv, []
    for index, arg in enumerate(argv):
        value = (
            argv[index + 1]
            if arg in ("-Q", "--queues") and index + 1 < len(argv)
            else (arg.split("=", 1)[1] if arg.startswith("--queues=") else "")
        )
        queues += [queue for queue in value.split(",") if queue]
    return queues


def takes_untrusted_jobs() -> bool:
    """Whether this worker compiles or judges readers' kernels (the `compile` and `gpu.<kind>` queues)."""
    return any(queue == "compile" or queue.startswith("gpu.") for queue in consumed_queues())


def refuse_unconfined() -> None:
    """Stop a worker that would run readers' kernels on a node that cannot sandbox them (kernels/confine.py), unless
    the operator opted out (KERNELS_SANDBOX_OPT_OUT=1: then a CRITICAL line says so, and the staff judge page)."""
    from kernels import confine

    try:
        found = confine.require()
    except confine.SandboxUnavailable as exc:
        logger.critical("%s", exc)
        raise SystemExit(f"worker not started: {exc}") from None
    logger.info("sandbox: %s", found.summary())


def node_name() -> str:
    return _node_name or f"celery@{socket.gethostname()}"


def judge():
    """This process's warm judge (created on first use; each job still runs in a fresh sandboxed child)."""
    global _judge
    if _judge is None:
        from django.conf import settings

        from kernels import GpuJudge

        _judge = GpuJudge(
            warm=True,
            job=settings.SUBMISSIONS_JUDGE_JOB,
            warm_up=settings.SUBMISSIONS_JUDGE_WARM_UP,
            ceilings_max_age_s=settings.GPU_CEILINGS_MAX_AGE_S,
            spares=settings.GPU_WARM_SPARES,
        )
    return _judge


def judge_reset() -> None:
    """Kill the judge's child (after a task overran its limit); the next job gets a fresh one."""
    global _judge
    if _judge is not None:
        _judge.close()
        _judge = None


def gpu_index() -> str:
    """The host's index of the GPU this worker owns: GPU_ID where the worker sees its GPU renumbered (a container
    given one device sees it as 0; docker-compose.yml sets GPU_ID), else its CUDA_VISIBLE_DEVICES."""
    return (os.environ.get("GPU_ID") or os.environ.get("CUDA_VISIBLE_DEVICES") or "")[:16]


def gpu_name() -> str:
    """Asked of nvidia-smi, so that this process creates no CUDA context (only the judge's child does)."""
    if os.environ.get("GPU_NAME"):
        return os.environ["GPU_NAME"]
    if not shutil.which("nvidia-smi"):
        return ""
    index = (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0]
    try:
        query = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", index],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return query.stdout.strip().splitlines()[0] if query.returncode == 0 and query.stdout.strip() else ""


def host_memory_reachable() -> bool | None:
    """What this worker's judge found at its latest setup: whether kernels may use pageable host memory (HMM);
    None before a setup has reported (the first job's child reports it) or where the judge does not say."""
    kept = _judge.kept if _judge is not None else None
    found = kept.identity.get("pageable_memory_access") if kept is not None else None
    return found if isinstance(found, bool) else None


def sandbox_summary() -> str:
    from kernels import confine

    return confine.support().summary()[:200]


def register() -> None:
    from django.utils import timezone

    from apps.submissions.models import GpuWorker

    now = timezone.now()
    GpuWorker.objects.update_or_create(
        hostname=node_name(),
        defaults={
            "gpu_kind": gpu_kind(),
            "gpu_name": gpu_name()[:100],
            "gpu_index": gpu_index(),
            "sandbox": sandbox_summary(),
            "host_memory_reachable": host_memory_reachable(),
            "started_at": now,
            "last_seen_at": now,
            "stopped_at": None,
            "current_submission": None,
            "profiling_submission": None,  # a restart after a kill: the profile's `finally` never ran
        },
    )


def heartbeat_once() -> None:
    from django.db import close_old_connections
    from django.utils import timezone

    from apps.submissions.models import GpuWorker

    close_old_connections()
    seen = {"last_seen_at": timezone.now(), "stopped_at": None}
    if (reachable := host_memory_reachable()) is not None:
        seen["host_memory_reachable"] = reachable
    if not GpuWorker.objects.filter(hostname=node_name()).update(**seen):
        register()  # the row was deleted in admin: report again


def _heartbeat_loop(interval_s: float) -> None:
    while not _heartbeat_stop.wait(interval_s):
        try:
            heartbeat_once()
        except Exception:  # the database may be away for a moment; the next beat tries again
            logger.exception("GPU worker heartbeat failed")


@signals.celeryd_after_setup.connect
def _remember_node_name(sender, instance=None, **kwargs):
    global _node_name
    _node_name = str(sender)
    if takes_untrusted_jobs():
        refuse_unconfined()  # SystemExit: Celery's signals log an Exception, but this one ends the worker


@signals.worker_process_init.connect
def _start_gpu_process(**kwargs):
    if not gpu_kind():
        return
    from django.conf import settings

    judge().worker.spawn()  # warm-up (CUDA context, cuBLAS, ceilings measured) runs while the worker waits for a job
    try:
        register()
    except Exception:
        logger.exception("GPU worker registration failed; the heartbeat will retry")
    try:
        from apps.submissions.services import submission_orphans_resend

        submission_orphans_resend(worker_name=node_name())
    except Exception:  # the broker's visibility timeout and the sweeper still bring them back
        logger.exception("GPU worker %s could not send its orphans again", node_name())
    _heartbeat_stop.clear()
    threading.Thread(
        target=_heartbeat_loop, args=(settings.GPU_WORKER_HEARTBEAT_S,), daemon=True, name="gpu-worker-heartbeat"
    ).start()
    logger.info("GPU worker %s (%s) ready", node_name(), gpu_kind())


@signals.worker_process_shutdown.connect
def _stop_gpu_process(**kwargs):
    if not gpu_kind():
        return
    _heartbeat_stop.set()
    judge_reset()
    try:
        from django.utils import timezone

        from apps.submissions.models import GpuWorker

        GpuWorker.objects.filter(hostname=node_name()).update(
            stopped_at=timezone.now(), current_submission=None, profiling_submission=None
        )
    except Exception:
        logger.exception("could not mark GPU worker %s stopped", node_name())

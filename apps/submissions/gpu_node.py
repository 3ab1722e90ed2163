"""One Celery GPU worker per GPU of a machine, started and kept running (`manage.py gpu_worker --gpus ...`).

Each worker owns one GPU: CUDA_VISIBLE_DEVICES=<its index> (so its judge's children see that device only, as
device 0), one process (-c 1) that reserves nothing ahead (--prefetch-multiplier 1), the node name gpu<index>@host
and the queues gpu.<kind>, then gpu.<kind>.profile (issue 43: profiles of accepted kernels, taken only when no
judgement waits, by the broker's queue_order_strategy "priority": config/settings/base.py). Two jobs never share a
GPU: the only process that runs jobs on it is its worker's pool process, one job at a time.

CUDA numbers devices fastest first unless told otherwise, nvidia-smi by PCI bus; CUDA_DEVICE_ORDER=PCI_BUS_ID
makes index N the GPU that nvidia-smi lists as N, so that GPU N is the one an operator sees busy.

The supervisor restarts a worker that exits (a crash, an OOM kill, an operator's kill -9) after a delay that
doubles while it keeps dying young (1 s up to a minute), and before that kills what is left of it: its pool
process and the judge's child live in its session and may outlive the main process, still holding the GPU.
In Docker, one container per GPU (docker/gpu-workers.sh) and `restart: unless-stopped` do the same.

Each worker is started with the few variables a judge worker uses (config/judge_env.py: the database, the broker,
the judge's settings), not with this process's whole environment, and under config.settings.judge_worker where
this process has production's settings: the site's secrets never reach a process that runs readers' kernels.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from config.judge_env import judge_worker_environ

RESTART_DELAY_S = 1.0
RESTART_DELAY_MAX_S = 60.0
STOP_TIMEOUT_S = 30.0


def listed_gpus(override: str = "") -> list[str]:
    """The GPUs to run workers on: `override` (or GPU_IDS) as "0,1,3" or "0 1 3", else every GPU that
    `nvidia-smi -L` lists ("GPU 3: NVIDIA H200 (UUID: GPU-...)"). "all" means the listing."""
    text = override or os.environ.get("GPU_IDS", "")
    if text and text != "all":
        return [gpu for gpu in re.split(r"[,\s]+", text) if gpu]
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return [m.group(1) for line in listing.stdout.splitlines() if (m := re.match(r"GPU (\d+):", line))]


PROFILE_QUEUE_SUFFIX = ".profile"


def profile_queue(kind: str) -> str:
    """The queue of a GPU kind's profiles (issue 43), beside its judgements' `gpu.<kind>`."""
    return f"gpu.{kind}{PROFILE_QUEUE_SUFFIX}"


def gpu_queues(kind: str) -> str:
    """What a GPU worker of `kind` consumes, as `-Q` takes it: judgements first, the order the broker serves them in."""
    return f"gpu.{kind},{profile_queue(kind)}"


def worker_command(gpu: str, kind: str, loglevel: str = "INFO") -> list[str]:
    return ["celery", "-A", "config", "worker", "-Q", gpu_queues(kind), "-c", "1", "-n", f"gpu{gpu}@%h"] + [
        "--prefetch-multiplier",
        "1",
        "-l",
        loglevel,
    ]


def worker_env(gpu: str, kind: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """Only the variables a judge worker uses (config/judge_env.py), never the site's secrets: a reader's kernel runs
    under this worker. GPU_ID is what the worker records as its GPU (apps.submissions.worker.gpu_index)."""
    return {
        **judge_worker_environ(os.environ if base is None else base),
        "CUDA_VISIBLE_DEVICES": gpu,
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "GPU_ID": gpu,
        "GPU_KIND": kind,
    }


def command_line(gpu: str, kind: str, loglevel: str = "INFO", extra: list[str] | None = None) -> str:
    """The shell line an operator would type for one GPU."""
    command = worker_command(gpu, kind, loglevel) + list(extra or [])
    return f"CUDA_VISIBLE_DEVICES={gpu} CUDA_DEVICE_ORDER=PCI_BUS_ID GPU_ID={gpu} GPU_KIND={kind} " + " ".join(command)


class Supervisor:
    """Starts one worker per GPU, each in a session of its own, and restarts the ones that exit until told to
    stop (SIGTERM or SIGINT: a warm shutdown of every worker, each finishing its job, SIGKILL after
    STOP_TIMEOUT_S). With `log_dir`, worker N appends its output to gpuN.log there and its main process id
    is in gpuN.pid (the load tool and the tests read both); else the workers write to this process's output."""

    def __init__(self, gpus: list[str], kind: str, loglevel="INFO", extra=None, log_dir: Path | None = None):
        self.gpus, self.kind, self.loglevel, self.extra, self.log_dir = gpus, kind, loglevel, list(extra or []), log_dir
        self.running: dict[str, subprocess.Popen] = {}
        self.started_at: dict[str, float] = {}
        self.delay_s = dict.fromkeys(gpus, RESTART_DELAY_S)
        self.due_at: dict[str, float] = {}  # restarts waiting for their delay
        self.stopping = False

    def say(self, text: str) -> None:
        print(f"gpu_worker: {text}", file=sys.stderr, flush=True)

    def start(self, gpu: str) -> None:
        output = None
        if self.log_dir:
            output = (self.log_dir / f"gpu{gpu}.log").open("ab")
        command = [sys.executable, "-m", *worker_command(gpu, self.kind, self.loglevel), *self.extra]
        process = subprocess.Popen(
            command,
            env=worker_env(gpu, self.kind),
            stdout=output,
            stderr=subprocess.STDOUT if output else None,
            start_new_session=True,  # killpg reaches its pool process and the judge's child
        )
        if output:
            output.close()  # the worker has its own copy
            (self.log_dir / f"gpu{gpu}.pid").write_text(f"{process.pid}\n")
        self.running[gpu], self.started_at[gpu] = process, time.monotonic()
        self.say(f"gpu{gpu} started (pid {process.pid}): {command_line(gpu, self.kind, self.loglevel, self.extra)}")

    def _reap(self, gpu: str, process: subprocess.Popen) -> None:
        lived_s = time.monotonic() - self.started_at[gpu]
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # its pool process and the judge's child, if they outlived it
        del self.running[gpu]
        self.delay_s[gpu] = RESTART_DELAY_S if lived_s > RESTART_DELAY_MAX_S else self.delay_s[gpu]
        self.due_at[gpu] = time.monotonic() + self.delay_s[gpu]
        self.say(f"gpu{gpu} exited ({process.returncode}) after {lived_s:.1f} s; restarting in {self.delay_s[gpu]:g} s")
        self.delay_s[gpu] = min(2 * self.delay_s[gpu], RESTART_DELAY_MAX_S)

    def _stop(self, signum, _frame) -> None:
        self.stopping = True

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        for gpu in self.gpus:
            self.start(gpu)
        while not self.stopping:
            for gpu, process in list(self.running.items()):
                if process.poll() is not None:
                    self._reap(gpu, process)
            for gpu, due in list(self.due_at.items()):
                if time.monotonic() >= due:
                    del self.due_at[gpu]
                    self.start(gpu)
            time.sleep(0.2)
        self.stop_all()
        return 0

    def stop_all(self) -> None:
        for process in self.running.values():
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)  # Celery's warm shutdown: the running job finishes
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for gpu, process in self.running.items():
            try:
                process.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                self.say(f"gpu{gpu} did not stop within {STOP_TIMEOUT_S:g} s: killed")
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        self.running = {}

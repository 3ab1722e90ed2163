"""Start the Celery worker for one GPU: the documented command, with its environment set.

    python manage.py gpu_worker --gpu 0 [--kind h200]
    # = CUDA_VISIBLE_DEVICES=0 GPU_KIND=h200 celery -A config worker -Q gpu.h200 -c 1 -n gpu0@%h --prefetch-multiplier 1

One job per GPU: one worker process (-c 1) that reserves nothing ahead (--prefetch-multiplier 1); the
process keeps a warm judge whose sandboxed child holds the CUDA context. Run one per GPU of the machine.
"""

import os
import shutil

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


def worker_command(gpu: str, kind: str, loglevel: str = "INFO") -> list[str]:
    return [
        "celery",
        "-A",
        "config",
        "worker",
        "-Q",
        f"gpu.{kind}",
        "-c",
        "1",
        "-n",
        f"gpu{gpu}@%h",
        "--prefetch-multiplier",
        "1",
        "-l",
        loglevel,
    ]


class Command(BaseCommand):
    help = "Run the Celery worker of one GPU (replaces this process)."

    def add_arguments(self, parser):
        parser.add_argument("--gpu", default="0", help="the GPU's index on this machine (CUDA_VISIBLE_DEVICES)")
        parser.add_argument(
            "--kind", default=settings.DEFAULT_GPU_KIND, help="its kind, e.g. h200 (must be in GPU_KINDS)"
        )
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument("--print", action="store_true", help="print the command instead of running it")

    def handle(self, *args, gpu, kind, loglevel, print, **options):
        if kind not in settings.GPU_KINDS:
            raise CommandError(f"GPU kind {kind!r} is not in GPU_KINDS ({', '.join(settings.GPU_KINDS)})")
        command = worker_command(gpu, kind, loglevel)
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu, "GPU_KIND": kind}
        line = f"CUDA_VISIBLE_DEVICES={gpu} GPU_KIND={kind} " + " ".join(command)
        if print:
            self.stdout.write(line)
            return
        executable = shutil.which("celery")
        if not executable:
            raise CommandError("celery is not on PATH")
        self.stderr.write(line)
        os.execve(executable, command, env)

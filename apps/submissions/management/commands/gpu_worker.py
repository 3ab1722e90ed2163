"""Start the Celery workers of this machine's GPUs: one GPU (this process becomes its worker), or one worker
per GPU kept running by this process (apps/submissions/gpu_node.py).

    python manage.py gpu_worker --gpu 0 [--kind h200]
    # = CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID GPU_ID=0 GPU_KIND=h200 \\
    #   celery -A config worker -Q gpu.h200 -c 1 -n gpu0@%h --prefetch-multiplier 1 -l INFO
    python manage.py gpu_worker --gpus all          # every GPU nvidia-smi -L lists (or GPU_IDS="0 1 3")
    python manage.py gpu_worker --gpus 0,1 --print  # the lines it would run

One job per GPU: one worker process (-c 1) that reserves nothing ahead (--prefetch-multiplier 1); the
process keeps a warm judge whose sandboxed child holds the CUDA context. With --gpus, a worker that exits
is started again (after 1 s, doubling up to a minute while it keeps dying young).

Workers get only the variables a judge worker uses (config/judge_env.py); --print names them. This command itself
refuses production's settings, which need the site's secrets, and runs under config.settings.judge_worker, which
refuses them: a process can read the environment of every process of its user, the supervisor's included.
"""

import os
import shlex
import shutil
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.submissions.gpu_node import Supervisor, command_line, listed_gpus, worker_command, worker_env
from kernels import profile

PRODUCTION_SETTINGS = "config.settings.prod"


class Command(BaseCommand):
    help = "Run the Celery worker of one GPU (replaces this process), or one per GPU (--gpus), restarted if they die."

    def add_arguments(self, parser):
        parser.add_argument("--gpu", default="0", help="one GPU's index on this machine (CUDA_VISIBLE_DEVICES)")
        parser.add_argument(
            "--gpus", default="", help='one worker per GPU: "all" (nvidia-smi -L, or GPU_IDS) or a list, e.g. 0,1,3'
        )
        parser.add_argument(
            "--kind", default=settings.DEFAULT_GPU_KIND, help="its kind, e.g. h200 (must be in GPU_KINDS)"
        )
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument("--celery-args", default="", help="more arguments for each celery worker (one string)")
        parser.add_argument("--log-dir", default="", help="with --gpus: each worker's output in gpuN.log there")
        parser.add_argument("--print", action="store_true", help="print the command(s) instead of running them")

    def handle(self, *args, gpu, gpus, kind, loglevel, celery_args, log_dir, print, **options):
        if settings.SETTINGS_MODULE == PRODUCTION_SETTINGS:
            raise CommandError(
                "GPU workers run readers' kernels and must not hold the site's secrets, which production's settings "
                "need: start this with DJANGO_SETTINGS_MODULE=config.settings.judge_worker and only the variables a "
                "judge worker uses (README: Running on GPU nodes)."
            )
        if kind not in settings.GPU_KINDS:
            raise CommandError(f"GPU kind {kind!r} is not in GPU_KINDS ({', '.join(settings.GPU_KINDS)})")
        if settings.PROFILES_ENABLED and profile.worker_is_root():
            self.stderr.write(
                "warning: running as root, so these workers judge but do not profile (a profile's processes may "
                "write to /proc, where root's files must stay closed): run them as an unprivileged user "
                "(README, Operators: Profiles)"
            )
        extra = shlex.split(celery_args)
        if gpus:
            return self.supervise(listed_gpus("" if gpus == "all" else gpus), kind, loglevel, extra, log_dir, print)
        line = command_line(gpu, kind, loglevel, extra)
        if print:
            self.stdout.write(line)
            self.print_environment(gpu, kind)
            return
        executable = shutil.which("celery")
        if not executable:
            raise CommandError("celery is not on PATH")
        self.stderr.write(line)
        os.execve(executable, worker_command(gpu, kind, loglevel) + extra, worker_env(gpu, kind))

    def supervise(self, gpus, kind, loglevel, extra, log_dir, print_only):
        if not gpus:
            raise CommandError("no GPU found (nvidia-smi -L listed none): give them, e.g. --gpus 0,1 or GPU_IDS")
        if print_only:
            for gpu in gpus:
                self.stdout.write(command_line(gpu, kind, loglevel, extra))
            self.print_environment(gpus[0], kind)
            return
        folder = Path(log_dir) if log_dir else None
        if folder:
            folder.mkdir(parents=True, exist_ok=True)
        Supervisor(gpus, kind, loglevel, extra, folder).run()

    def print_environment(self, gpu, kind):
        """The names (never the values) of what each worker is given, on stderr beside the command lines."""
        self.stderr.write(f"each worker's environment: {' '.join(sorted(worker_env(gpu, kind)))}")

"""Measure the reference ladder (kernels/reference) on a GPU and store it as ReferenceResults; export or
load the measured figures (the demo ships the H200's: apps/submissions/fixtures/reference_ladder_h200.json).

    python manage.py reference_ladder --enqueue [--gpu-kind h200]   # a GPU worker of that kind measures it
    python manage.py reference_ladder [--gpu-kind h200] [STEP ...]  # measure here (this machine's GPU)
    python manage.py reference_ladder --export FILE [--gpu-kind h200] --no-measure
    python manage.py reference_ladder --load FILE
    python manage.py reference_ladder --load-ladder FILE [--gpu-kind h200]  # kernels.tools.ladder --out FILE
"""

import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from apps.submissions import services
from apps.submissions.models import ReferenceResult
from apps.submissions.rungs import rungs_to_measure


class Command(BaseCommand):
    help = "Measure, export or load the reference ladder's results for a GPU kind."

    def add_arguments(self, parser):
        parser.add_argument(
            "steps",
            nargs="*",
            help="only these rungs, e.g. 01_naive.cu or softmax/triton_01_rows (default: all, the Triton rungs too)",
        )
        parser.add_argument("--gpu-kind", default=settings.DEFAULT_GPU_KIND)
        parser.add_argument("--enqueue", action="store_true", help="send the job to the gpu.<kind> queue instead")
        parser.add_argument(
            "--wait", type=float, default=0, help="with --enqueue: wait up to this many seconds for the results"
        )
        parser.add_argument("--no-measure", action="store_true", help="only --export or --load")
        parser.add_argument("--export", type=Path, help="write the stored results of --gpu-kind to this JSON file")
        parser.add_argument("--load", type=Path, help="load results from a JSON file written by --export")
        parser.add_argument(
            "--load-ladder",
            type=Path,
            help="store a GPU node's `python -m kernels.tools.ladder --out` file as --gpu-kind",
        )

    def handle(self, *args, steps, gpu_kind, enqueue, wait, no_measure, export, load, load_ladder, **options):
        if load_ladder:
            count = services.reference_ladder_load(path=load_ladder, gpu_kind=gpu_kind)
            self.stdout.write(f"stored {count} rungs measured on {gpu_kind} from {load_ladder}")
            if export:
                self._export(export, gpu_kind)
            return
        if load:
            self.stdout.write(f"loaded {services.reference_results_load(path=load)} rungs from {load}")
            return
        if enqueue:
            from apps.submissions.tasks import reference_ladder_task

            sent_at = timezone.now()
            # The queue is the GPU kind asked for here, so it is named here rather than in CELERY_TASK_ROUTES.
            reference_ladder_task.apply_async(args=[gpu_kind, steps or None], queue=f"gpu.{gpu_kind}")
            self.stdout.write(f"sent to gpu.{gpu_kind}: a worker of that kind measures the ladder and stores it")
            # Rows the worker will store: a step name may match several problems' rungs ("01_naive.cu"), and the
            # whole ladder includes the Triton rungs, measured last.
            expected = len(rungs_to_measure(steps or None))
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if ReferenceResult.objects.filter(gpu_kind=gpu_kind, measured_at__gte=sent_at).count() >= expected:
                    break
                time.sleep(2)
            if wait:
                self._table(gpu_kind)
            if export:
                self._export(export, gpu_kind)
            return
        if not no_measure:
            from kernels import GpuJudge
            from kernels.judge import gpu_present

            if not gpu_present():
                raise CommandError("no NVIDIA GPU here: use --enqueue to let a GPU worker measure it")
            with GpuJudge(warm=True) as judge:
                services.reference_ladder_measure(gpu_kind=gpu_kind, judge=judge, steps=steps, log=self.stdout.write)
        if export:
            self._export(export, gpu_kind)

    def _export(self, path: Path, gpu_kind: str) -> None:
        path.write_text(json.dumps(services.reference_results_export(gpu_kind=gpu_kind), indent=1) + "\n")
        self.stdout.write(f"wrote {path}")

    def _table(self, gpu_kind: str) -> None:
        self.stdout.write("| step | verdict | median ms | TFLOP/s | % of baseline | GPU |")
        self.stdout.write("| --- | --- | --- | --- | --- | --- |")
        for r in ReferenceResult.objects.filter(gpu_kind=gpu_kind).order_by("step"):
            self.stdout.write(
                f"| {r.step} | {r.verdict} | {r.time_ms or 0:.3f} | {r.tflops or 0:.2f} | "
                f"{r.pct_of_baseline or 0:.1f} | {r.gpu_name} |"
            )

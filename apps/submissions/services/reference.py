"""The reference ladder (kernels/reference): each rung judged on a GPU kind and stored as a ReferenceResult,
exported to JSON and loaded back (the demo ships the H200's)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from apps.submissions.services.pipeline import _headline_figures

logger = logging.getLogger(__name__)


def _figures_of(result: dict) -> dict:
    return {
        "verdict": result.get("verdict", ""),
        **_headline_figures(result),
        "gpu_name": ((result.get("telemetry") or {}).get("gpu_name") or "")[:100],
    }


def reference_result_store(*, problem: str, gpu_kind: str, step: str, title: str, result: dict, measured_at=None):
    """One rung's JudgeResult (as JSON) for one GPU kind; measuring again replaces it."""
    from apps.submissions.models import ReferenceResult

    values = {
        "title": title[:200],
        "result": result,
        "measured_at": measured_at or timezone.now(),
        **_figures_of(result),
    }
    stored, _ = ReferenceResult.objects.update_or_create(problem=problem, gpu_kind=gpu_kind, step=step, defaults=values)
    return stored


def reference_ladder_measure(*, gpu_kind: str, judge, steps: list[str] | None = None, log=logger.info) -> list:
    """Judge every rung of kernels/reference (or those named: rungs.rungs_to_measure) with `judge` on this GPU and
    store them. The CUDA ladder, then the Triton rungs (issue 46), each compiled as what it is for the arch
    kernels.tools.ladder gives it (sm_90a for a Triton rung) and stored under the problem and file name its page
    reads (selectors.rung_results). Runs where a GPU is: the `submissions.reference_ladder` task on a GPU worker,
    or `manage.py reference_ladder`."""
    from apps.submissions.rungs import rungs_to_measure
    from kernels import JudgeOptions, compile_submission
    from kernels.results import JudgeResult
    from kernels.tools.ladder import arch_of, title_of

    stored = []
    for rung in rungs_to_measure(steps):
        compiled = compile_submission(rung.source, rung.problem, arch=arch_of(rung.path), language=rung.language)
        if compiled.ok:
            result = judge.judge(compiled, JudgeOptions(timeout_s=300.0))
        else:
            result = JudgeResult(
                verdict=compiled.verdict, message=compiled.message, problem=rung.problem, error=compiled.log
            )
        stored.append(
            reference_result_store(
                problem=rung.problem,
                gpu_kind=gpu_kind,
                step=rung.filename,
                title=title_of(rung.path),
                result=result.to_dict(),
            )
        )
        log(
            f"{rung.ref}: {result.verdict.value} {stored[-1].pct_of_baseline or 0:.1f}% of baseline, "
            f"{stored[-1].tflops or 0:.2f} TFLOP/s"
        )
    return stored


def reference_results_export(*, gpu_kind: str) -> dict:
    from apps.submissions.models import ReferenceResult

    rows = ReferenceResult.objects.filter(gpu_kind=gpu_kind).order_by("step")
    return {
        "gpu_kind": gpu_kind,
        "results": [
            {
                "problem": r.problem,
                "step": r.step,
                "title": r.title,
                "measured_at": r.measured_at.isoformat(),
                "result": r.result,
            }
            for r in rows
        ],
    }


@transaction.atomic
def reference_ladder_load(*, path, gpu_kind: str) -> int:
    """Store a ladder measured on a GPU node by `python -m kernels.tools.ladder --out FILE` (no Django there);
    returns how many rungs."""
    from django.utils.dateparse import parse_datetime

    from kernels.tools.ladder import path_of, problem_of, title_of

    data = json.loads(Path(path).read_text())
    for step, result in data["rungs"].items():
        rung = path_of(step)
        reference_result_store(
            problem=problem_of(rung),
            gpu_kind=gpu_kind,
            step=rung.name,
            title=title_of(rung),
            result=result,
            measured_at=parse_datetime(data["measured_at"]),
        )
    return len(data["rungs"])


@transaction.atomic
def reference_results_load(*, path) -> int:
    """Load a ladder measured elsewhere (reference_results_export's JSON); returns how many rungs."""
    from django.utils.dateparse import parse_datetime

    data = json.loads(Path(path).read_text())
    for row in data["results"]:
        reference_result_store(
            problem=row["problem"],
            gpu_kind=data["gpu_kind"],
            step=row["step"],
            title=row["title"],
            result=row["result"],
            measured_at=parse_datetime(row["measured_at"]),
        )
    return len(data["results"])

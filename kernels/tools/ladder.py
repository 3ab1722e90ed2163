"""Measure the reference ladder through the judge's CLI, one process per rung, exactly as BENCHMARKS.md
quotes it (`python -m kernels bench FILE --problem P [--arch sm_90a] --json`; `--arch sm_90a` for the wgmma rung),
and print the table's rows (one per benchmark shape).

    python -m kernels.tools.ladder [--out ladder.json] [FILE ...]

`--out` writes {"measured_at": ISO time, "rungs": {step: the judge's JSON result}}, which
`manage.py reference_ladder --load-ladder` stores on a machine with the site (a GPU node needs no Django).

The ladder: the GEMM rungs `kernels/reference/NN_*.cu` (sgemm, or hgemm where the name says so), then every
`kernels/reference/<problem>/NN_*.cu`, whose problem is its folder's name. The Triton rungs,
`kernels/reference/<problem>/triton_NN_*.py` (issue 46), are no part of it (their numbers are their own); name one as
FILE to bench it (for sm_90a, as tests/kernels/test_triton_rungs.py compiles them).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

REFERENCE_DIR = Path(__file__).parents[1] / "reference"
GEMM_LADDER = sorted(REFERENCE_DIR.glob("[0-9][0-9]_*.cu"))
LADDER = GEMM_LADDER + sorted(REFERENCE_DIR.glob("*/[0-9][0-9]_*.cu"))
TRITON_RUNGS = sorted(REFERENCE_DIR.glob("*/triton_[0-9][0-9]_*.py"))


def _in_problem_folder(path: Path) -> bool:
    return path.resolve().parent != REFERENCE_DIR.resolve()


def problem_of(path: Path) -> str:
    if _in_problem_folder(path):
        return path.parent.name
    return "hgemm" if "hgemm" in path.name else "sgemm"


def step_of(path: Path) -> str:
    """How tables name a rung: "05_blocktile_2d" on the GEMM ladder, "softmax/02_online_cached" elsewhere."""
    return f"{path.parent.name}/{path.stem}" if _in_problem_folder(path) else path.stem


def title_of(path: Path) -> str:
    """The rung's title: the first line of its header comment (a Triton rung's: of its docstring)."""
    return path.read_text().splitlines()[0].lstrip("/* ").strip().strip('"').strip()


# Instructions that exist only in the architecture-specific target sm_90a (code that runs on compute capability
# 9.0 alone): warpgroup MMA and register reallocation between warpgroups. TMA and clusters are plain sm_90.
_SM_90A_ONLY = re.compile(r"\bwgmma\.|\bsetmaxnreg\.")


def arch_of(path: Path) -> str:
    """sm_90a for a rung that uses wgmma or setmaxnreg, and for a Triton rung (Triton chooses wgmma itself where the
    target has it); every other rung builds for the judge's default."""
    if path.suffix == ".py":
        return "sm_90a"
    return "sm_90a" if _SM_90A_ONLY.search(path.read_text()) else "sm_90"


def command_of(path: Path, time_budget_s: float | None = None) -> list[str]:
    command = ["python", "-m", "kernels", "bench", str(path), "--problem", problem_of(path)]
    if arch_of(path) != "sm_90":
        command += ["--arch", arch_of(path)]
    if time_budget_s is not None:
        command += ["--time-budget", str(time_budget_s)]
    return command + ["--json"]


def bench(path: Path, time_budget_s: float | None = None) -> dict:
    command = [sys.executable, *command_of(path, time_budget_s)[1:]]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError:
        return {"verdict": "no_json", "message": (run.stdout + run.stderr)[-2000:]}


def rows(path: Path, result: dict) -> list[str]:
    """One table row per benchmark shape (or one saying why there is none)."""
    if result.get("verdict") != "accepted":
        return [f"| {step_of(path)} | {result.get('verdict')}: {result.get('message', '')[:200]} |"]
    regs = ", ".join(str(k["registers"]) for k in result["kernels"])
    lines = []
    for b in result["benchmarks"]:
        cand, base = b["candidate"], b["baseline"]
        shape = "x".join(str(v) for v in b["sizes"].values())
        lines.append(
            f"| {step_of(path)} | {shape} | `{result['kernels'][0]['name']}` | {regs} | {cand['median_ms']:.3f} "
            f"({cand['q25_ms']:.3f}-{cand['q75_ms']:.3f}) | {b['tflops']:.1f} | {b['gbps']:.0f} | "
            f"{base['median_ms']:.3f} | {b['pct_of_baseline']:.1f} | {b['pct_of_roofline']:.1f} | "
            f"{' '.join(b['flags']) or '-'} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write every rung's full JSON result here")
    parser.add_argument("--time-budget", type=float, help="seconds of timed rounds per shape (the CLI's default: 4)")
    parser.add_argument("files", nargs="*", type=Path, help="only these rungs (default: all)")
    args = parser.parse_args()
    measured_at = datetime.now(UTC).isoformat()
    results = {}
    print(
        "| step | shape | kernel | regs | median ms (IQR) | TFLOP/s | GB/s | baseline ms | % of baseline "
        "| % of roofline | flags |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in args.files or LADDER:
        results[step_of(path)] = bench(path, args.time_budget)
        print("\n".join(rows(path, results[step_of(path)])), flush=True)
    if args.out:
        args.out.write_text(json.dumps({"measured_at": measured_at, "rungs": results}, indent=1))


def path_of(step: str) -> Path:
    """The rung file a step names (step_of's inverse): "softmax/triton_01_rows" is a Triton rung's .py."""
    return REFERENCE_DIR / f"{step}{'.py' if step.rsplit('/', 1)[-1].startswith('triton_') else '.cu'}"


if __name__ == "__main__":
    main()

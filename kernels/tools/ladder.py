"""Measure the reference ladder through the judge's CLI, one process per rung, exactly as BENCHMARKS.md
quotes it (`python -m kernels bench FILE --problem P [--arch sm_90a] --json`; `--arch sm_90a` for the wgmma rung),
and print the table's rows.

    python -m kernels.tools.ladder [--out ladder.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

LADDER = sorted((Path(__file__).parents[1] / "reference").glob("[0-9][0-9]_*.cu"))


def problem_of(path: Path) -> str:
    return "hgemm" if "hgemm" in path.name else "sgemm"


def arch_of(path: Path) -> str:
    """wgmma exists only in the architecture-specific target sm_90a (code that runs on compute capability 9.0
    alone); every other rung builds for the judge's default."""
    return "sm_90a" if "wgmma" in path.name else "sm_90"


def command_of(path: Path) -> list[str]:
    command = ["python", "-m", "kernels", "bench", str(path), "--problem", problem_of(path)]
    if arch_of(path) != "sm_90":
        command += ["--arch", arch_of(path)]
    return command + ["--json"]


def bench(path: Path) -> dict:
    command = [sys.executable, *command_of(path)[1:]]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError:
        return {"verdict": "no_json", "message": (run.stdout + run.stderr)[-2000:]}


def row(path: Path, result: dict) -> str:
    if result.get("verdict") != "accepted":
        return f"| {path.stem} | {result.get('verdict')}: {result.get('message', '')[:200]} |"
    (b,) = result["benchmarks"]
    cand, base = b["candidate"], b["baseline"]
    regs = ", ".join(str(k["registers"]) for k in result["kernels"])
    return (
        f"| {path.stem} | `{result['kernels'][0]['name']}` | {regs} | {cand['median_ms']:.3f} "
        f"({cand['q25_ms']:.3f}-{cand['q75_ms']:.3f}) | {b['tflops']:.1f} | {base['median_ms']:.3f} | "
        f"{b['pct_of_baseline']:.1f} | {b['pct_of_roofline']:.1f} | {' '.join(b['flags']) or '-'} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write every rung's full JSON result here")
    parser.add_argument("files", nargs="*", type=Path, help="only these rungs (default: all)")
    args = parser.parse_args()
    results = {}
    print("| step | kernel | regs | median ms (IQR) | TFLOP/s | cuBLAS ms | % of cuBLAS | % of roofline | flags |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in args.files or LADDER:
        results[path.stem] = bench(path)
        print(row(path, results[path.stem]), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

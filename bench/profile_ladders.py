"""Every rung of the reference ladders profiled as a reader's accepted submission is (issue 43), and each step
k -> k+1 read against the findings: does rung k's top finding name what rung k+1 changes?

    python3 bench/profile_ladders.py --out ladders.json                       # on a GPU node with ncu
    python3 bench/profile_ladders.py --ladders sgemm --out sgemm.json
    python3 bench/profile_ladders.py --examples --ladders none --out examples.json   # each problem's starter: the
                                                                                    # GPU-seconds of a profile
    python3 bench/profile_ladders.py --read ladders.json                      # the tables again, from a run's file
    python3 bench/profile_ladders.py --read ladders.json --record tests/kernels/profiles/h200_ladders.json

Each rung is compiled, judged by one warm GpuJudge (a short timed run: the profile's shape follows from the judged
medians, kernels/profile_run.py) and profiled by `GpuJudge.profile`: the profile child in the sandbox, the device
held alone, as the GPU worker profiles. The file written after every rung holds each rung's verdict, the profile's
status, shape, GPU-seconds and metrics, and its findings; tests/kernels/profiles/ keeps the metrics of a real run
so that every rule is tested on the CPU: `--record` keeps, of each profiled rung, what the rules read (the metrics,
the problem and the shape) and where it was measured (tests/kernels/test_profile_recorded.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernels import compiler, problems, profile_findings  # noqa: E402
from kernels.tools.ladder import GEMM_LADDER, REFERENCE_DIR, arch_of, problem_of, step_of  # noqa: E402

# What each rung changes, as the findings name it: the rules whose problem the step's own header says it fixes
# (kernels/reference/**/NN_*.cu, "Change versus ..."). Rung k's top finding "names what k+1 changes" when it is
# one of these for rung k+1. A step that changes the problem itself (SGEMM 09 -> HGEMM 10) has no such reading.
STEP_FIXES: dict[str, set[str]] = {
    "02_coalesced": {"uncoalesced_global_loads", "uncoalesced_global_stores"},
    "03_smem_tiling": {"redundant_dram_traffic", "long_scoreboard_stalls", "low_arithmetic_intensity"},
    "04_blocktile_1d": {"shared_memory_throttle", "low_arithmetic_intensity"},
    "05_blocktile_2d": {"shared_memory_throttle", "low_arithmetic_intensity"},
    "06_vectorized": {"shared_memory_throttle", "shared_bank_conflicts"},
    "07_autotuned": {
        "occupancy_limited_by_registers",
        "occupancy_limited_by_shared_memory",
        "achieved_occupancy_gap",
        "tail_wave",
    },
    "08_warptiling": {"shared_bank_conflicts", "shared_memory_throttle", "long_scoreboard_stalls"},
    "09_double_buffered": {"barrier_stalls", "long_scoreboard_stalls"},
    "10_hgemm_wmma": set(),  # the problem changes (FP32 -> FP16 inputs on the tensor cores)
    "11_hgemm_wmma_tuned": {
        "barrier_stalls",
        "long_scoreboard_stalls",
        "shared_bank_conflicts",
        "shared_memory_throttle",
        "tensor_pipes_idle",
    },
    "12_hgemm_wgmma": {"tensor_pipes_idle", "shared_memory_throttle", "barrier_stalls"},
    "13_hgemm_staged_persistent": {"tail_wave", "achieved_occupancy_gap", "uncoalesced_global_stores"},
    "attention/02_fused_online": {"redundant_dram_traffic", "low_arithmetic_intensity"},
    "attention/03_fa2": {"tensor_pipes_idle", "long_scoreboard_stalls", "shared_memory_throttle"},
    "attention/04_wgmma_tma": {"tensor_pipes_idle", "long_scoreboard_stalls", "barrier_stalls"},
    "bf16_gemm/02_tma_wgmma": {
        "tensor_pipes_idle",
        "low_arithmetic_intensity",
        "redundant_dram_traffic",
        "long_scoreboard_stalls",
    },
    "bf16_gemm/03_warp_specialized": {"barrier_stalls", "tensor_pipes_idle"},
    "bf16_gemm/04_cluster_persistent": {"tail_wave", "redundant_dram_traffic", "achieved_occupancy_gap"},
    "softmax/02_online_cached": {"redundant_dram_traffic"},
    "softmax/03_cluster_split": {"achieved_occupancy_gap", "tail_wave"},
    "softmax/04_register_rows": {"barrier_stalls", "long_scoreboard_stalls", "shared_memory_throttle"},
    "gemv/02_warp_rows": {"uncoalesced_global_loads", "redundant_dram_traffic"},
    "gemv/03_tensor_cores": {"long_scoreboard_stalls"},
    "gemv/04_persistent": {"tail_wave", "long_scoreboard_stalls", "achieved_occupancy_gap"},
    "transpose/02_smem_tile": {"uncoalesced_global_stores", "shared_bank_conflicts"},
    "transpose/03_eight_per_thread": {"long_scoreboard_stalls", "barrier_stalls"},
    "prefix_sum/02_reduce_then_scan": {"redundant_dram_traffic", "barrier_stalls"},
    "prefix_sum/03_decoupled_lookback": {"redundant_dram_traffic"},
    "prefix_sum/04_lookback_backoff": {"long_scoreboard_stalls"},
}
LADDERS = ("sgemm", "attention", "bf16_gemm", "softmax", "gemv", "transpose", "prefix_sum")


def rungs_of(ladder: str) -> list[Path]:
    if ladder == "sgemm":
        return list(GEMM_LADDER)
    return sorted((REFERENCE_DIR / ladder).glob("[0-9][0-9]_*.cu"))


def profile_one(judge, path: Path, problem_name: str, arch: str, budget_s: float) -> dict:
    from kernels.judge import JudgeOptions

    row = {"step": step_of(path) if path.is_relative_to(REFERENCE_DIR) else f"{problem_name}/example"}
    row["problem"] = problem_name
    compiled = compiler.compile_submission(path.read_text(), problem_name, arch)
    if not compiled.ok:
        return row | {"verdict": compiled.verdict.value, "message": compiled.message}
    judged = judge.judge(compiled, JudgeOptions(time_budget_s=0.5, min_rounds=3, timeout_s=240))
    row |= {"verdict": judged.verdict.value, "message": judged.message}
    if not judged.passed:
        return row
    row["medians_ms"] = {_shape(b.sizes): b.candidate.median_ms for b in judged.benchmarks}
    row["pct_of_baseline"] = {_shape(b.sizes): b.pct_of_baseline for b in judged.benchmarks}
    begin = time.perf_counter()
    run = judge.profile(compiled, judged, budget_s=budget_s)
    document = run.document
    row |= {
        "profile_wall_s": round(time.perf_counter() - begin, 2),
        "status": document.status,
        "reason": document.reason,
        "sizes": document.sizes,
        "gpu_seconds": document.gpu_seconds,
        "kernel": document.kernel,
        "ncu_version": document.ncu_version,
        "gpu_name": document.gpu_name,
        "metrics": document.metrics,
        "report_bytes": len(run.report or b""),
        "hot_lines": [(line.line, round(line.share, 1), line.stall) for line in document.source_lines[:5]],
    }
    return row | findings_of(row)


def findings_of(row: dict) -> dict:
    """The findings and stalls of a row's metrics, by the rules as they are now (so --read re-reads old runs)."""
    if not row.get("metrics"):
        return {"findings": [], "stalls": []}
    problem = problems.load(row["problem"])
    found = profile_findings.findings(row["metrics"], problem=problem, sizes=row["sizes"])
    stalls = profile_findings.top_stalls(row["metrics"])
    return {
        "findings": [{"rule": f.rule, "severity": f.severity, "sentence": f.sentence} for f in found],
        "stalls": [f"{s['reason']} {s['share']:.0f}%" for s in stalls],
    }


def recorded(rows: list[dict], source: str) -> dict:
    """What the rules read of each profiled rung, keyed by its step, and where it was measured: a test fixture."""
    cases = {
        row["step"]: {
            "problem": row["problem"],
            "sizes": row["sizes"],
            "kernel": row["kernel"],
            "gpu_name": row["gpu_name"],
            "ncu_version": row["ncu_version"],
            "metrics": row["metrics"],
        }
        for row in rows
        if row.get("status") in ("profiled", "smaller_shape") and row.get("metrics")
    }
    return {"about": f"recorded by bench/profile_ladders.py, read from {source}", "cases": cases}


def _shape(sizes: dict) -> str:
    return "x".join(str(v) for v in sizes.values())


def steps_table(rows: list[dict]) -> list[str]:
    """Per rung: its top finding; per step k -> k+1: whether that finding is one of what k+1 changes."""
    lines = [
        "| rung | problem | shape | profile GPU-s | top finding (severity) | next rung fixes it? | findings "
        "| top stalls |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    by_ladder: dict[str, list[dict]] = {}
    for row in rows:
        by_ladder.setdefault(row["step"].split("/")[0] if "/" in row["step"] else "sgemm", []).append(row)
    for ladder_rows in by_ladder.values():
        for k, row in enumerate(ladder_rows):
            following = ladder_rows[k + 1]["step"] if k + 1 < len(ladder_rows) else None
            found = row.get("findings") or []
            top = found[0]["rule"] if found else "-"
            if following is None:
                verdict = "(last rung)"
            elif following not in STEP_FIXES or not STEP_FIXES[following]:
                verdict = "n/a: the problem changes"
            else:
                verdict = (
                    "yes"
                    if top in STEP_FIXES[following]
                    else f"no (it fixes {', '.join(sorted(STEP_FIXES[following]))})"
                )
            shown = ", ".join(f"{f['rule']} {f['severity']:.2f}" for f in found)
            severity = f" ({found[0]['severity']:.2f})" if found else ""
            status = row.get("status") or row.get("verdict")
            if status not in ("profiled", "smaller_shape"):
                why = row.get("reason") or row.get("message", "")
                lines.append(f"| {row['step']} | {row['problem']} | - | - | {status}: {why} | | | |")
                continue
            smaller = " (smaller)" if status == "smaller_shape" else ""
            lines.append(
                f"| {row['step']} | {row['problem']} | {_shape(row['sizes'])}{smaller} "
                f"| {row['gpu_seconds']} | {top}{severity} | {verdict} | {shown or '-'} | {'; '.join(row['stalls'])} |"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ladders", default=",".join(LADDERS), help=f"comma-separated, of {LADDERS}, or none")
    parser.add_argument("--examples", action="store_true", help="also each problem's example.cu (the starter)")
    parser.add_argument("--budget-s", type=float, default=10.0, help="the profiling budget (PROFILE_BUDGET_S)")
    parser.add_argument("--out", type=Path, help="write the rows here (JSON) after every rung")
    parser.add_argument("--read", type=Path, help="print the tables of an earlier run's file; profile nothing")
    parser.add_argument("--record", type=Path, help="with --read: write the profiled rungs' metrics here (a fixture)")
    args = parser.parse_args()
    if args.read:
        rows = [row | findings_of(row) for row in json.loads(args.read.read_text())["rows"]]
        print("\n".join(steps_table(rows)))
        if args.record:
            args.record.write_text(json.dumps(recorded(rows, source=args.read.name), indent=1, sort_keys=True) + "\n")
        return 0
    from kernels import profile as profile_mod
    from kernels.judge import GpuJudge

    if profile_mod.worker_is_root():
        raise SystemExit("a root worker does not profile (README, Operators: Profiles): run this as another user")
    targets = []
    for ladder in [name for name in args.ladders.split(",") if name and name != "none"]:
        targets += [(path, problem_of(path), arch_of(path)) for path in rungs_of(ladder)]
    if args.examples:
        for name in problems.available():
            example = problems.PROBLEMS_DIR / name / "example.cu"
            targets.append((example, name, arch_of(example)))
    rows: list[dict] = []
    with GpuJudge(warm=True, spares=2) as judge:
        error = judge.start()
        if error:
            raise SystemExit(error)
        for path, problem_name, arch in targets:
            try:
                row = profile_one(judge, path, problem_name, arch, args.budget_s)
            except Exception as exc:  # one rung's failure is a row, not the end of the run
                row = {
                    "step": str(path.relative_to(ROOT)),
                    "problem": problem_name,
                    "verdict": "error",
                    "message": repr(exc),
                }
            rows.append(row)
            top = (row.get("findings") or [{"rule": "-"}])[0]["rule"]
            print(
                f"{row['step']}: {row.get('status') or row.get('verdict')} {row.get('gpu_seconds')} GPU-s, top {top}",
                flush=True,
            )
            if args.out:
                args.out.write_text(json.dumps({"rows": rows}, indent=1))
    print("\n".join(steps_table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

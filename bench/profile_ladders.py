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
from kernels.profile import PROFILED_STATES  # noqa: E402
from kernels.tools.ladder import GEMM_LADDER, REFERENCE_DIR, arch_of, problem_of, step_of  # noqa: E402

# What each rung changes, as the findings name it: the rules whose measure, read on rung k, the change of rung k + 1
# (its header's "Change versus ...", checked against the capsule that teaches it) directly moves. A rule is here only
# when the step attacks it, not when it merely gets faster. Rung k's top finding "names what k+1 changes" when it is
# one of these for rung k+1. A step that changes the problem itself (SGEMM 09 -> HGEMM 10) has no such reading, and
# neither, as steps_table prints it, has a step whose change no rule measures (an empty set). A rule that no step
# attacks is named in HANDWRITTEN_ONLY of tests/kernels/test_profile_recorded.py.
STEP_FIXES: dict[str, set[str]] = {
    # warps walk rows of C: A broadcast, B read and C written as consecutive floats (32 sectors a request -> 1-4)
    "02_coalesced": {"uncoalesced_global_loads", "uncoalesced_global_stores"},
    # inner-loop operands from shared memory instead of two global loads per FFMA; DRAM bytes do not fall (capsule
    # 34 measures 4.3 -> 8.5 GB), so not redundant_dram_traffic
    "03_smem_tiling": {"long_scoreboard_stalls"},
    # 8 outputs a thread: shared loads per FFMA 2 -> ~1.1; the 64 x 64 block tile halves the bytes from L2/HBM
    "04_blocktile_1d": {"shared_memory_throttle", "redundant_dram_traffic"},
    # 8 x 8 outputs a thread: 16 shared loads per 64 FFMA; the 128 x 128 tile halves the bytes again (capsule 36)
    "05_blocktile_2d": {"shared_memory_throttle", "redundant_dram_traffic"},
    # transposed, padded A tile: A's shared reads lose their 2-way conflict; C written as float4 (4 -> 16 bytes a
    # sector). Shared loads per FFMA are unchanged (capsule 37: the same 32 LDS.128 per 512 FFMA)
    "06_vectorized": {"shared_bank_conflicts", "uncoalesced_global_stores"},
    # the tuned tile fits 128 registers: 2 blocks per SM instead of 1; TN = 4 removes the 2-way conflict on B
    "07_autotuned": {"occupancy_limited_by_registers", "shared_bank_conflicts"},
    # next tile's global loads in flight during the math; 128 FFMA per 6 shared loads a lane (07 had no conflicts
    # left to remove: capsule 38, though this rung's header says it had)
    "08_warptiling": {"long_scoreboard_stalls", "shared_memory_throttle"},
    # a 4-stage cp.async ring: no register waits on global loads, one __syncthreads per tile instead of two
    "09_double_buffered": {"barrier_stalls", "long_scoreboard_stalls"},
    "10_hgemm_wmma": set(),  # the problem changes (FP32 -> FP16 inputs on the tensor cores)
    # a 3-stage cp.async ring (10 loads synchronously), half the barriers per k, ldmatrix + mma.sync instead of
    # WMMA's loads; 10 was already padded by 16 bytes, and shared traffic per FLOP is the same (capsule 45)
    "11_hgemm_wmma_tuned": {"long_scoreboard_stalls", "barrier_stalls", "tensor_pipes_idle"},
    # wgmma reads A and B from shared memory itself (no ldmatrix) and runs asynchronously; still one barrier a tile
    "12_hgemm_wgmma": {"tensor_pipes_idle", "shared_memory_throttle"},
    # C prefetched into L2, the next tile's copies started before the epilogue; the unaligned path's halves packed in
    # registers, where 12 spills (ptxas: 12 bytes of stores a thread, 13: none). 12's float2 stores already use whole
    # sectors, and a persistent grid of whole tiles keeps 12's tile quantisation (512 tiles on 132 blocks)
    "13_hgemm_staged_persistent": {"long_scoreboard_stalls", "register_spills"},
    # one fused kernel: no score reaches global memory (01 moves ~20 bytes a score)
    "attention/02_fused_online": {"redundant_dram_traffic", "low_arithmetic_intensity"},
    # mma.sync on tensor cores; no block barrier between the phases; P in registers, ldmatrix operands; cp.async
    "attention/03_fa2": {"tensor_pipes_idle", "barrier_stalls", "shared_memory_throttle", "long_scoreboard_stalls"},
    # wgmma (operands from shared memory, no ldmatrix), mbarriers and a producer warpgroup instead of 03's
    # __syncthreads, exponentials overlapped with the products
    "attention/04_wgmma_tma": {"tensor_pipes_idle", "barrier_stalls", "shared_memory_throttle"},
    # wgmma instead of FP32 FMAs waiting on L1/L2 loads; 128 x 256 tiles in shared memory, grouped for L2 reuse
    "bf16_gemm/02_tma_wgmma": {"tensor_pipes_idle", "long_scoreboard_stalls", "redundant_dram_traffic"},
    # producer and consumer warpgroups meet through mbarriers: no __syncthreads left in the main loop
    "bf16_gemm/03_warp_specialized": {"barrier_stalls"},
    # the staged epilogue reads and writes C in 64 contiguous bytes a row (03: 16 of each 32-byte sector); the
    # cluster multicast cuts L2 reads and persistence pipeline fills, which no rule measures
    "bf16_gemm/04_cluster_persistent": {"uncoalesced_global_loads", "uncoalesced_global_stores"},
    # one pass: the row crosses DRAM once; float4 loads, 4 in flight; shuffles replace 16 tree barriers a row
    "softmax/02_online_cached": {"redundant_dram_traffic", "long_scoreboard_stalls", "barrier_stalls"},
    # rows over 16384 floats split over a cluster of 8: 256 blocks on all SMs instead of 32 (wide rows only)
    "softmax/03_cluster_split": {"achieved_occupancy_gap", "tail_wave"},
    # the whole row (or part) in registers at once, nothing through shared memory, one exponential per element
    "softmax/04_register_rows": {"long_scoreboard_stalls", "shared_memory_throttle"},
    # a warp walks a row with 16-byte loads (fully used sectors); W streamed once for all B vectors
    "gemv/02_warp_rows": {"uncoalesced_global_loads", "redundant_dram_traffic"},
    # the FMAs go to mma.sync (no rule measures issue slots on a memory problem); W loaded with an L2::256B hint
    "gemv/03_tensor_cores": {"long_scoreboard_stalls"},
    # persistent blocks issue the next tile's loads at once, 4 chunks in flight a warp; 03 had no second wave
    "gemv/04_persistent": {"long_scoreboard_stalls"},
    # 32 x 32 tiles through padded shared memory: writes coalesced (01 moves a 32-byte sector per 4 useful bytes)
    "transpose/02_smem_tile": {"uncoalesced_global_stores", "redundant_dram_traffic"},
    # 8 loads in flight a thread instead of 4; 16 small blocks an SM, so the barrier is shared by twice the elements
    "transpose/03_eight_per_thread": {"long_scoreboard_stalls", "barrier_stalls"},
    # y written once (16 -> 12 bytes an element), shuffles for Hillis-Steele's 20 barriers, 64 bytes in flight
    "prefix_sum/02_reduce_then_scan": {"redundant_dram_traffic", "barrier_stalls", "long_scoreboard_stalls"},
    # single pass with decoupled look-back: x read once (12 -> 8 bytes an element)
    "prefix_sum/03_decoupled_lookback": {"redundant_dram_traffic"},
    # the look-back sleeps before and between polls instead of reloading status words back to back
    "prefix_sum/04_lookback_backoff": {"long_scoreboard_stalls"},
    # context split over blocks, GQA heads together (K and V read once), 16-byte loads, 8 KB in flight a warp
    "paged_decode/02_split_kv": {"uncoalesced_global_loads", "redundant_dram_traffic", "long_scoreboard_stalls"},
    # a 2-page cp.async ring a warp: the next page in flight while this one is computed
    "paged_decode/03_page_ring": {"long_scoreboard_stalls"},
    # a block per row: 16-byte loads and 8-byte stores, contiguous; the row kept in registers, read from DRAM once
    "fp8_quant/02_row_in_registers": {
        "uncoalesced_global_loads",
        "uncoalesced_global_stores",
        "redundant_dram_traffic",
    },
    "fp8_quant/03_fast_division": set(),  # the IEEE division's issue slots: no rule measures them
    # float4, 8 loads in flight a thread; warp shuffles instead of an 8-barrier tree
    "reduce_sum/02_vectorized": {"long_scoreboard_stalls", "barrier_stalls"},
    # a block per row: contiguous 16-byte loads and stores; the row kept in registers, read from DRAM once
    "rmsnorm/02_row_in_registers": {"uncoalesced_global_loads", "uncoalesced_global_stores", "redundant_dram_traffic"},
    # 16-byte loads and stores (01 already coalesced), both loads in flight before the arithmetic
    "swiglu/02_vectorized": {"long_scoreboard_stalls"},
}
# Steps whose change does not show at the shape a profile is made at (profile_run.choose_shape: the benchmark shape
# that moves the most bytes, within the budget), with why: the table says so instead of "no".
NOT_AT_PROFILED_SHAPE: dict[str, str] = {
    "softmax/03_cluster_split": "at 4096x4096, the shape profiled, rows of 4096 floats keep 02's one block a row; "
    "the cluster split runs only at 32x131072",
}
LADDERS = (
    "sgemm",
    "attention",
    "bf16_gemm",
    "softmax",
    "gemv",
    "transpose",
    "prefix_sum",
    "paged_decode",
    "fp8_quant",
    "reduce_sum",
    "rmsnorm",
    "swiglu",
)


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
        if row.get("status") in PROFILED_STATES and row.get("metrics")
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
            elif problem_of(REFERENCE_DIR / f"{following}.cu") != row["problem"]:
                verdict = "n/a: the problem changes"
            elif following in NOT_AT_PROFILED_SHAPE:
                verdict = f"n/a: {NOT_AT_PROFILED_SHAPE[following]}"
            elif not STEP_FIXES.get(following):
                verdict = "n/a: no rule measures what it changes"
            else:
                verdict = (
                    "yes"
                    if top in STEP_FIXES[following]
                    else f"no (it fixes {', '.join(sorted(STEP_FIXES[following]))})"
                )
            shown = ", ".join(f"{f['rule']} {f['severity']:.2f}" for f in found)
            severity = f" ({found[0]['severity']:.2f})" if found else ""
            status = row.get("status") or row.get("verdict")
            if status not in PROFILED_STATES:
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
                f"{row['step']}: {row.get('status') or row.get('verdict')} {row.get('gpu_seconds')} GPU-s, top {top}"
                + (f" ({row.get('reason') or row.get('message')})" if row.get("status") not in PROFILED_STATES else ""),
                flush=True,
            )
            if args.out:
                args.out.write_text(json.dumps({"rows": rows}, indent=1))
    print("\n".join(steps_table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""python -m kernels {check,bench,selftest} ... (see --help)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

from kernels import compiler, problems
from kernels import plan as plan_mod
from kernels.judge import GpuJudge, JudgeOptions, gpu_present
from kernels.results import CompileResult, JudgeResult


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "selftest":
        from kernels.tools import selftest

        return selftest.main(args)
    source = Path(args.file).read_text()
    if args.command == "bench" and args.compiled:
        compiled = _load_compiled(Path(args.compiled), source, args.problem)
    else:
        language = "triton" if args.file.endswith(".py") else "cuda"  # a Triton submission is a .py file (issue 46)
        compiled = compiler.compile_submission(source, args.problem, args.arch, language=language)
    if args.command == "check" and args.save:
        Path(args.save).write_text(compiled.to_json())
    if args.command == "check" or not compiled.ok:
        shown = [dataclasses.replace(k, cubin=b"") for k in compiled.triton_kernels]
        _emit(dataclasses.replace(compiled, cubin=b"", triton_kernels=shown), args.json, _format_compile)
        return 0 if compiled.ok else 1
    if not gpu_present():
        print("bench needs an NVIDIA GPU (nvidia-smi finds none here); `check` runs anywhere", file=sys.stderr)
        return 2
    options = JudgeOptions(
        seed=args.seed, bench=not args.no_time, timeout_s=args.timeout, time_budget_s=args.time_budget
    )
    with GpuJudge(warm=False) as judge:
        result = judge.judge(compiled, options)
    _emit(result, args.json, lambda r: _format_judge(r, compiled))
    return 0 if result.passed else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m kernels", description="Compile, check and time CUDA and Triton kernel submissions."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("check", "compile and validate the plan (no GPU needed)"),
        ("bench", "check on the GPU, then time against the baseline"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument(
            "file", help="the submission: a .cu file with a /* @plan ... */ block, or a Triton .py file with a PLAN"
        )
        cmd.add_argument("--problem", required=True, choices=problems.available())
        cmd.add_argument("--arch", default=compiler.DEFAULT_ARCH, choices=compiler.SUPPORTED_ARCHS)
        cmd.add_argument("--json", action="store_true", help="print the result schema as JSON")
        if name == "check":
            cmd.add_argument(
                "--save",
                metavar="JSON",
                help="also write the whole CompileResult (cubins included) for `bench --compiled`",
            )
        if name == "bench":
            cmd.add_argument(
                "--compiled",
                metavar="JSON",
                help="judge what `check --save` wrote on a compile node instead of compiling here (a GPU node without "
                "the compile stage's pinned Triton); FILE must be the source it was compiled from",
            )
            cmd.add_argument("--seed", type=int, default=None, help="input seed (default: fresh random)")
            cmd.add_argument("--timeout", type=float, default=120.0, help="wall-clock limit of the GPU run, seconds")
            cmd.add_argument(
                "--time-budget", type=float, default=4.0, help="seconds of timed rounds per benchmark shape"
            )
            cmd.add_argument("--no-time", action="store_true", help="correctness only")
    selftest = sub.add_parser("selftest", help="measure the judge's fidelity and cost on this GPU")
    selftest.add_argument("--json", action="store_true")
    selftest.add_argument(
        "--baselines-only", action="store_true", help="only the fastest-library-way check of the baselines"
    )
    return parser


def _load_compiled(path: Path, source: str, problem: str) -> CompileResult:
    """A compile node's result, as the GPU stage gets it from the database: refused unless it is FILE's, for PROBLEM."""
    compiled = CompileResult.from_json(path.read_text())
    if compiled.source_sha256 != compiler.source_sha256(source) or compiled.problem != problem:
        raise SystemExit(f"{path} was compiled from another source or for another problem than the one named")
    return compiled


def _emit(result, as_json: bool, formatter) -> None:
    print(result.to_json(indent=2) if as_json else formatter(result))


def _format_compile(result: CompileResult) -> str:
    lines = [f"{result.verdict.value.upper()}: {result.message}"]
    if result.log.strip() and not result.ok:
        lines += ["", result.log.rstrip()]
    if result.ok:
        lines += _problem_lines(problems.load(result.problem))
        lines += _hopper_lines(result) if result.language == "cuda" else _triton_lines(result)
    for k in result.kernels:
        lines.append(
            f"  {k.name}: {k.registers} registers, {k.static_shared_bytes} B static shared, "
            f"{k.local_bytes} B stack, spills {k.spill_store_bytes}/{k.spill_load_bytes} B (store/load)"
        )
    return "\n".join(lines)


def _problem_lines(problem: problems.Problem) -> list[str]:
    """The argument list the kernels must take, and what the judge allocates for the workspaces."""
    lines = [f"  arguments: ({problem.signature()})"]
    for spec in problem.workspaces:
        counts = sorted({problem.workspace_count(spec.name, sizes) for sizes in problem.all_shapes()})
        itemsize = np.dtype(spec.storage_dtype).itemsize
        shown = ", ".join(str(c) for c in counts)
        lines.append(
            f"  workspace {spec.name}: {shown} elements ({counts[-1] * itemsize / 2**20:.1f} MiB at most), "
            "garbage at every launch, never checked"
        )
    return lines


def _triton_lines(result: CompileResult) -> list[str]:
    """Each Triton build: its launches, warps, stages, shared memory, constexprs and the cubin's parameters."""
    lines = [f"  Triton {result.triton_version}, ptxas {result.ptxas_version}"]
    for k in result.triton_kernels:
        params = ", ".join(f"{p['type']} {p['name']}" for p in k.params)
        lines.append(
            f"  {k.kernel} (launches {', '.join(str(i + 1) for i in k.launches)}): {k.num_warps} warps, "
            f"{k.num_stages} stages, {k.shared_bytes} B shared, constexprs {k.constexprs}, parameters ({params})"
        )
    return lines


def _hopper_lines(result: CompileResult) -> list[str]:
    """Each launch's cluster and the tensor maps passed after the problem's arguments, as the kernel must take them."""
    lines = []
    for data in result.plan:
        launch = plan_mod.Launch.from_dict(data)
        if launch.cluster is not None:
            portable = ", non-portable" if launch.non_portable_cluster else ""
            lines.append(f"  {launch.kernel}: clusters of {list(launch.cluster)}{portable}")
        for m in launch.tensor_maps:
            lines.append(
                f"  {launch.kernel}: then const __grid_constant__ CUtensorMap {m.name}: {m.array} whole, box "
                f"{list(m.box)} (innermost first), swizzle {m.swizzle}, L2 promotion {m.l2_promotion}, "
                f"fill {m.oob_fill}"
            )
    return lines


def _format_judge(result: JudgeResult, compiled: CompileResult) -> str:
    lines = [
        f"{result.verdict.value.upper()}: {result.message}",
        f"  seed {result.seed}, compile {compiled.compile_time_ms:.0f} ms, GPU run {result.wall_time_ms:.0f} ms",
    ]
    for k in result.kernels:
        triton = f", {k.num_warps} warps, {k.dynamic_shared_bytes} B dynamic smem" if k.num_warps is not None else ""
        lines.append(
            f"  kernel {k.name}: {k.registers} regs, {k.static_shared_bytes} B static smem, {k.local_bytes} B local, "
            f"max {k.max_threads_per_block} threads/block{triton}"
        )
    for c in result.checks:
        lines.append(f"  check {c.message}")
    for b in result.benchmarks:
        sizes = "x".join(str(v) for v in b.sizes.values())
        lines.append(
            f"  bench {sizes}: median {b.candidate.median_ms:.4f} ms "
            f"(IQR {b.candidate.iqr_ms:.4f}, n={b.candidate.samples}), {b.tflops:.2f} TFLOP/s, {b.gbps:.0f} GB/s"
        )
        if b.unit == "GB/s":
            baseline = f"{b.baseline_gbps or 0:.0f} GB/s"
            roofline = f"{b.roofline_gbps or 0:.0f} GB/s copy"
        else:
            baseline, roofline = f"{b.baseline_tflops:.2f} TFLOP/s", f"{b.roofline_tflops:.2f} TFLOP/s"
        lines.append(
            f"        baseline {b.baseline.median_ms:.4f} ms ({baseline}): "
            f"{b.pct_of_baseline:.1f}% of baseline, {b.pct_of_roofline:.1f}% of roofline "
            f"({roofline}), max rel_err {b.max_rel_err:.1e}"
        )
        lines += [f"        FLAG: {f}" for f in b.flags]
    if result.telemetry:
        t = result.telemetry
        lines.append(
            f"  GPU {t.gpu_name} (cc {t.compute_capability}), SM clock {t.sm_clock_mhz}/{t.max_sm_clock_mhz} MHz, "
            f"{t.temperature_c} C, driver {t.driver_version}, CUDA {t.cuda_runtime_version}, "
            f"CuPy {t.cupy_version}, NVRTC {t.nvrtc_version}"
        )
    if result.ceilings:
        c = result.ceilings
        tensor = f", FP16 tensor {c.tensor_fp16_tflops:.0f} TFLOP/s" if c.tensor_fp16_tflops else ""
        tensor += f", BF16 tensor {c.tensor_bf16_tflops:.0f} TFLOP/s" if c.tensor_bf16_tflops else ""
        lines.append(f"  ceilings: copy {c.copy_gbps:.0f} GB/s, FP32 {c.fp32_tflops:.1f} TFLOP/s{tensor}")
    if result.error:
        lines.append(f"  error: {result.error.strip()[:2000]}")
    if result.output:
        lines.append(f"  printed ({result.output_bytes} bytes): {result.output[:500]}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

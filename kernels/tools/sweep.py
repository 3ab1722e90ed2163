"""Judge many variants of one kernel in one process and print one table: a rung's ideas tried in one device call.

    python -m kernels.tools.sweep kernels/reference/gemv/sweep.toml [--time-budget 1] [--out sweep.json]
    python -m kernels.tools.sweep SPEC --compile-only        # on a machine without a GPU: NVRTC runs on the CPU

A sweep file (TOML) names the problem, a template (a .cu file beside it, written with `${NAME}` placeholders in
its code and its plan), the placeholders' defaults and the variants, each a name and the values it changes:

    problem = "gemv"
    template = "sweep_gemv.cu"
    arch = "sm_90a"              # optional: the judge's default otherwise
    [defaults]
    ROWS_PER_WARP = 2
    [[variants]]
    name = "rows4"
    ROWS_PER_WARP = 4

Every variant is substituted (string.Template: `$$` writes a dollar), compiled on the CPU in parallel, then judged
one after another on one warm GPU worker exactly as a submission is (every check, interleaved timing against
the baseline). The table lists the accepted variants fastest first (by the median over benchmark shapes of
% of baseline), then the others with their verdicts. `--out` writes every variant's full result as JSON.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import statistics
import string
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from kernels import compiler


@dataclass
class Variant:
    name: str
    values: dict[str, object]
    source: str


def load(spec_path: Path) -> tuple[dict, list[Variant]]:
    """The sweep file and its variants' sources. A placeholder without a value, or a value no placeholder
    uses, is an error: a typo would otherwise judge the defaults twice under two names."""
    spec = tomllib.loads(spec_path.read_text())
    template_text = (spec_path.parent / spec["template"]).read_text()
    template = string.Template(template_text)
    used = {m.group("named") or m.group("braced") for m in template.pattern.finditer(template_text)} - {None}
    defaults = spec.get("defaults", {})
    variants, names = [], set()
    for entry in spec.get("variants") or [{"name": "defaults"}]:
        entry = dict(entry)
        name = entry.pop("name")
        if name in names:
            raise ValueError(f"{spec_path}: two variants are named {name!r}")
        names.add(name)
        values = {**defaults, **entry}
        unknown = set(values) - used
        if unknown:
            raise ValueError(f"{spec_path}: variant {name!r} sets {sorted(unknown)}, which the template never uses")
        variants.append(Variant(name, values, template.substitute(values)))
    return spec, variants


def compile_all(spec: dict, variants: list[Variant]):
    arch = spec.get("arch", compiler.DEFAULT_ARCH)
    with cf.ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:  # each compile runs in a sandboxed child
        return list(pool.map(lambda v: compiler.compile_submission(v.source, spec["problem"], arch), variants))


def judge_all(variants: list[Variant], compiled, time_budget_s: float, seed: int | None):
    """Each compiled variant judged in turn on one warm worker; a line per variant as it is judged, so that a
    run stopped early (a device call's time limit) still shows what it measured."""
    from kernels.judge import GpuJudge, JudgeOptions

    options = JudgeOptions(seed=seed, time_budget_s=time_budget_s)
    results = []
    with GpuJudge(warm=True) as judge:
        for variant, comp in zip(variants, compiled, strict=True):
            result = judge.judge(comp, options) if comp.ok else None
            results.append(result)
            print(table([variant], [comp], [result])[-1], flush=True)
    return results


def score(result) -> float:
    """The variant's figure for ranking: the median over benchmark shapes of % of baseline."""
    return statistics.median(b.pct_of_baseline for b in result.benchmarks)


def table(variants: list[Variant], compiled, results) -> list[str]:
    rows = []
    for variant, comp, result in zip(variants, compiled, results, strict=True):
        if comp.ok and result is not None and result.passed and result.benchmarks:
            regs = ",".join(str(k.registers) for k in result.kernels)
            shapes = "; ".join(
                f"{b.candidate.median_ms:.4f} ms {b.pct_of_baseline:.1f}% base {b.pct_of_roofline:.1f}% roof"
                + (f" [{' '.join(b.flags)}]" if b.flags else "")
                for b in result.benchmarks
            )
            rows.append((0, -score(result), f"| {variant.name} | accepted | {regs} | {shapes} |"))
        else:
            verdict = result.verdict.value if result is not None else comp.verdict.value
            message = (result.message if result is not None else comp.message).replace("\n", " ")[:160]
            rows.append((1, 0.0, f"| {variant.name} | {verdict} | - | {message} |"))
    header = ["| variant | verdict | regs | per benchmark shape: median, % of baseline, % of roofline |"]
    return header + ["| --- | --- | --- | --- |"] + [line for *_, line in sorted(rows, key=lambda r: r[:2])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("--time-budget", type=float, default=1.0, help="seconds of timed rounds per shape")
    parser.add_argument("--seed", type=int, help="input seed (default: a fresh one per variant)")
    parser.add_argument("--only", help="comma-separated variant names: judge these alone")
    parser.add_argument("--compile-only", action="store_true", help="compile every variant and stop (no GPU)")
    parser.add_argument("--out", type=Path, help="write every variant's result as JSON")
    args = parser.parse_args(argv)
    spec, variants = load(args.spec)
    if args.only:
        wanted = args.only.split(",")
        unknown = set(wanted) - {v.name for v in variants}
        if unknown:
            parser.error(f"no variants named {sorted(unknown)} in {args.spec}")
        variants = [v for v in variants if v.name in wanted]
    compiled = compile_all(spec, variants)
    print(f"{spec['problem']}: compiled {sum(c.ok for c in compiled)} of {len(variants)} variants", flush=True)
    if args.compile_only:
        for variant, comp in zip(variants, compiled, strict=True):
            regs = ",".join(f"{k.name}: {k.registers} regs, {k.local_bytes} B local" for k in comp.kernels)
            print(f"  {variant.name}: {comp.verdict.value} {regs if comp.ok else comp.message[:300]}")
        return 0 if all(c.ok for c in compiled) else 1
    results = judge_all(variants, compiled, args.time_budget, args.seed)
    print("\nfastest first:\n" + "\n".join(table(variants, compiled, results)))
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    v.name: {
                        "values": v.values,
                        "result": r.to_dict() if r is not None else {"verdict": c.verdict.value, "log": c.log},
                    }
                    for v, c, r in zip(variants, compiled, results, strict=True)
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

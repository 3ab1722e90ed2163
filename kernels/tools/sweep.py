"""Judge many variants of kernel templates in one process and print one table a problem: a device call's ideas.

    python -m kernels.tools.sweep kernels/reference/gemv/sweep.toml [--time-budget 1] [--out sweep.json]
    python -m kernels.tools.sweep gemv/sweep.toml prefix_sum/sweep.toml:baseline_rung,pf_t256_v4 --deadline 500
    python -m kernels.tools.sweep SPEC --compile-only        # on a machine without a GPU: NVRTC runs on the CPU

A sweep file (TOML) names the problem, a template (a .cu file beside it, written with `${NAME}` placeholders in
its code and its plan), the placeholders' defaults and the variants, each a name and the values it changes:

    problem = "gemv"
    template = "sweep_gemv.cu"
    arch = "sm_90a"              # optional: the judge's default otherwise
    time_budget = 4              # optional: seconds of timed rounds per shape (--time-budget overrides; 1 otherwise)
    [defaults]
    ROWS_PER_WARP = 2
    [[variants]]
    name = "rows4"
    ROWS_PER_WARP = 4
    [[variants]]
    name = "rung_file"
    file = "03_tensor_cores.cu"  # a whole .cu file beside the sweep file, judged as it is (no placeholders)

Every template variant is substituted (string.Template: `$$` writes a dollar); all are compiled on the CPU in
parallel, then judged one after another on one warm GPU worker exactly as a submission is (every check, interleaved
timing against the baseline). Several sweep files share that worker, so its start (the ceilings, each problem's baseline
choice) is paid once; `SPEC:a,b` judges only the variants a and b of SPEC, in the file's order. Each problem's
table lists the accepted variants fastest first (by the median over benchmark shapes of % of roofline), then the
others with their verdicts. `--deadline S` starts no variant once S seconds have passed, so that a device call's
time limit still leaves the tables; `--out` writes every variant's full result as JSON after each one.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import statistics
import string
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from kernels import compiler

DEFAULT_TIME_BUDGET_S = 1.0
NOT_JUDGED = "not judged: the deadline had passed"


@dataclass
class Variant:
    problem: str
    arch: str
    name: str
    values: dict[str, object]
    source: str
    time_budget_s: float


def load(spec_path: Path) -> tuple[dict, list[Variant]]:
    """The sweep file and its variants' sources. A placeholder without a value, or a value no placeholder
    uses, is an error: a typo would otherwise judge the defaults twice under two names."""
    spec = tomllib.loads(spec_path.read_text())
    template_text = (spec_path.parent / spec["template"]).read_text()
    template = string.Template(template_text)
    used = {m.group("named") or m.group("braced") for m in template.pattern.finditer(template_text)} - {None}
    defaults = spec.get("defaults", {})
    budget = float(spec.get("time_budget", DEFAULT_TIME_BUDGET_S))
    arch = spec.get("arch", compiler.DEFAULT_ARCH)
    variants, names = [], set()
    for entry in spec.get("variants") or [{"name": "defaults"}]:
        entry = dict(entry)
        name = entry.pop("name")
        if name in names:
            raise ValueError(f"{spec_path}: two variants are named {name!r}")
        names.add(name)
        if "file" in entry:  # the rung as its file, so that the run shows whether the template's copy is as fast
            if set(entry) != {"file"}:
                raise ValueError(f"{spec_path}: variant {name!r} names a file, so it sets no placeholders")
            source = (spec_path.parent / entry["file"]).read_text()
            variants.append(Variant(spec["problem"], arch, name, {"file": entry["file"]}, source, budget))
            continue
        values = {**defaults, **entry}
        unknown = set(values) - used
        if unknown:
            raise ValueError(f"{spec_path}: variant {name!r} sets {sorted(unknown)}, which the template never uses")
        variants.append(Variant(spec["problem"], arch, name, values, template.substitute(values), budget))
    return spec, variants


def select(argument: str) -> list[Variant]:
    """`SPEC` or `SPEC:name,name`: the sweep file's variants, or the named ones (an unknown name is an error)."""
    path, _, names = argument.partition(":")
    _, variants = load(Path(path))
    if not names:
        return variants
    wanted = names.split(",")
    unknown = set(wanted) - {v.name for v in variants}
    if unknown:
        raise ValueError(f"no variants named {sorted(unknown)} in {path}")
    return [v for v in variants if v.name in wanted]


def compile_all(variants: list[Variant]):
    with cf.ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:  # each compile runs in a sandboxed child
        return list(pool.map(lambda v: compiler.compile_submission(v.source, v.problem, v.arch), variants))


def judge_all(variants: list[Variant], compiled, budget_override: float | None, seed, deadline_s, record):
    """Each compiled variant judged in turn on one warm worker; a line per variant as it is judged (and `record`
    called), so that a run stopped early (a device call's time limit) still shows what it measured. Once
    `deadline_s` has passed since the start, the remaining variants get no result (None)."""
    from kernels.judge import GpuJudge, JudgeOptions

    started = time.monotonic()
    results = []
    with GpuJudge(warm=True) as judge:
        for variant, comp in zip(variants, compiled, strict=True):
            if deadline_s is not None and time.monotonic() - started > deadline_s:
                results.append(None)
                continue
            budget = budget_override if budget_override is not None else variant.time_budget_s
            result = judge.judge(comp, JudgeOptions(seed=seed, time_budget_s=budget)) if comp.ok else None
            results.append(result)
            record(variant, comp, result)
            print(f"{variant.problem}: " + table([variant], [comp], [result])[-1], flush=True)
    return results


def score(result) -> float:
    """The variant's figure for ranking: the median over benchmark shapes of % of roofline. A shape's roofline is
    a fixed figure, so the rank carries none of the baseline's timing noise (gemv's cuBLAS baseline, a 40 us
    launch, read 114% to 537% in one H200 run, and ranked a variant at 75% of roofline above one at 81%)."""
    return statistics.median(b.pct_of_roofline for b in result.benchmarks)


def table(variants: list[Variant], compiled, results) -> list[str]:
    """One problem's rows. A compiled variant without a result is one the deadline skipped."""
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
        elif comp.ok and result is None:
            rows.append((2, 0.0, f"| {variant.name} | - | - | {NOT_JUDGED} |"))
        else:
            verdict = result.verdict.value if result is not None else comp.verdict.value
            message = (result.message if result is not None else comp.message).replace("\n", " ")[:160]
            rows.append((1, 0.0, f"| {variant.name} | {verdict} | - | {message} |"))
    header = ["| variant | verdict | regs | per benchmark shape: median, % of baseline, % of roofline |"]
    return header + ["| --- | --- | --- | --- |"] + [line for *_, line in sorted(rows, key=lambda r: r[:2])]


def by_problem(variants: list[Variant]) -> dict[str, list[int]]:
    """Each problem's variants (their indices), in the order the problems were given."""
    groups: dict[str, list[int]] = {}
    for i, variant in enumerate(variants):
        groups.setdefault(variant.problem, []).append(i)
    return groups


def tables(variants: list[Variant], compiled, results) -> str:
    """A table a problem, in the order the problems were given."""
    out = []
    for problem, mine in by_problem(variants).items():
        rows = table([variants[i] for i in mine], [compiled[i] for i in mine], [results[i] for i in mine])
        out.append(f"\n{problem}, fastest first:\n" + "\n".join(rows))
    return "\n".join(out)


class JsonRecord:
    """Every judged variant's full result, rewritten to the file after each one."""

    def __init__(self, path: Path | None):
        self.path, self.entries = path, {}

    def __call__(self, variant: Variant, comp, result) -> None:
        if self.path is None:
            return
        self.entries[f"{variant.problem}/{variant.name}"] = {
            "values": variant.values,
            "result": result.to_dict() if result is not None else {"verdict": comp.verdict.value, "log": comp.log},
        }
        self.path.write_text(json.dumps(self.entries, indent=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", metavar="SPEC[:variant,...]")
    parser.add_argument("--time-budget", type=float, help="seconds of timed rounds per shape (default: each file's)")
    parser.add_argument("--seed", type=int, help="input seed (default: a fresh one per variant)")
    parser.add_argument("--deadline", type=float, help="seconds after which no further variant is judged")
    parser.add_argument("--compile-only", action="store_true", help="compile every variant and stop (no GPU)")
    parser.add_argument("--out", type=Path, help="write every variant's result as JSON")
    args = parser.parse_args(argv)
    try:
        variants = [v for chosen in map(select, args.specs) for v in chosen]
    except ValueError as error:
        parser.error(str(error))
    compiled = compile_all(variants)
    for problem, mine in by_problem(variants).items():
        print(f"{problem}: compiled {sum(compiled[i].ok for i in mine)} of {len(mine)} variants", flush=True)
    if args.compile_only:
        for variant, comp in zip(variants, compiled, strict=True):
            regs = ",".join(f"{k.name}: {k.registers} regs, {k.local_bytes} B local" for k in comp.kernels)
            print(f"  {variant.problem}/{variant.name}: {comp.verdict.value} {regs if comp.ok else comp.message[:300]}")
        return 0 if all(c.ok for c in compiled) else 1
    results = judge_all(variants, compiled, args.time_budget, args.seed, args.deadline, JsonRecord(args.out))
    print(tables(variants, compiled, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Why is it slow: the rules of kernels/profile_rules.toml evaluated on one profile's metrics (issue 43).

Pure Python, no CUDA and no Django: the web app calls `findings(metrics, problem=..., sizes=...)` when it stores a
profile, and the tests call it on hand-written metric fixtures (tests/kernels/profiles/).

A finding is a rule whose value is worse than its `good`: severity runs from 0 (at good) to 1 (at or past bad),
and findings come worst first. `bytes_vs_minimum` compares the DRAM bytes a kernel moved with the problem's own
`bytes` expression (Problem.bytes_moved) at the profiled shape: "moves 3.1 times the bytes it must".
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

RULES_PATH = Path(__file__).with_name("profile_rules.toml")


class RuleError(ValueError):
    """The rules file is malformed: a test fails on it, and nothing is shown rather than something wrong."""


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    capsule: int
    capsule_slug: str
    requires: tuple[str, ...]
    value: str
    good: float
    bad: float
    sentence: str
    when: str = ""

    def severity(self, value: float) -> float:
        """0 at good (or better), 1 at bad (or worse), linear between."""
        span = self.bad - self.good
        return min(1.0, max(0.0, (value - self.good) / span))

    def fires(self, value: float) -> bool:
        return (value > self.good) if self.bad > self.good else (value < self.good)


@dataclass(frozen=True)
class Finding:
    rule: str
    title: str
    sentence: str
    severity: float  # 0..1
    value: float
    capsule: int
    capsule_slug: str

    @property
    def level(self) -> str:
        """Words for the severity: how the page badges it."""
        return "high" if self.severity >= 0.66 else "medium" if self.severity >= 0.33 else "low"

    def to_dict(self) -> dict:
        return {**asdict(self), "level": self.level}


@dataclass(frozen=True)
class Rules:
    metrics: dict[str, str]  # alias -> Nsight Compute metric name
    derived: dict[str, str]  # name -> expression
    rules: tuple[Rule, ...]


@functools.cache
def load(path: Path = RULES_PATH) -> Rules:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    metrics = dict(data.get("metrics", {}))
    derived = dict(data.get("derived", {}))
    rules = []
    seen = set()
    for raw in data.get("rule", []):
        try:
            rule = Rule(
                id=raw["id"],
                title=raw["title"],
                capsule=int(raw["capsule"]),
                capsule_slug=raw["capsule_slug"],
                requires=tuple(raw.get("requires", ())),
                value=raw["value"],
                good=float(raw["good"]),
                bad=float(raw["bad"]),
                sentence=raw["sentence"],
                when=raw.get("when", ""),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise RuleError(f"rule {raw.get('id', '?')}: {e!r}") from None
        if rule.id in seen:
            raise RuleError(f"rule {rule.id} is defined twice")
        if rule.good == rule.bad:
            raise RuleError(f"rule {rule.id}: good and bad are equal")
        unknown = [name for name in rule.requires if name not in metrics]
        if unknown:
            raise RuleError(f"rule {rule.id} requires unknown metric aliases {unknown}")
        seen.add(rule.id)
        rules.append(rule)
    return Rules(metrics=metrics, derived=derived, rules=tuple(rules))


# --- Expressions: a small, closed arithmetic over named floats --------------------------------------------------

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: lambda a, b: a / b if b else math.inf if a else 0.0,
    ast.FloorDiv: lambda a, b: a // b if b else 0.0,
}
_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_FUNCTIONS = {"min": min, "max": max, "abs": abs}


class Missing(Exception):
    """An expression names a value this profile does not have."""


def evaluate(expr: str, values: dict[str, float]) -> float:
    """Numbers, names bound in `values`, + - * / //, comparisons, and/or/not, min/max/abs. Raises Missing for an
    unbound name and RuleError for anything else."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        raise RuleError(f"cannot parse {expr!r}") from None
    return _eval(tree.body, values, expr)


def _eval(node: ast.AST, values: dict[str, float], text: str) -> float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise Missing(node.id)
        return float(values[node.id])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, values, text)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return float(not _eval(node.operand, values, text))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return float(_BINARY[type(node.op)](_eval(node.left, values, text), _eval(node.right, values, text)))
    if isinstance(node, ast.BoolOp):
        results = [_eval(v, values, text) for v in node.values]
        return float(all(results) if isinstance(node.op, ast.And) else any(results))
    if isinstance(node, ast.Compare):
        left = _eval(node.left, values, text)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _COMPARE:
                break
            right = _eval(right_node, values, text)
            if not _COMPARE[type(op)](left, right):
                return 0.0
            left = right
        else:
            return 1.0
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if node.keywords or not node.args:
            raise RuleError(f"{node.func.id}() takes positional arguments in {text!r}")
        return float(_FUNCTIONS[node.func.id](*[_eval(a, values, text) for a in node.args]))
    raise RuleError(f"{text!r}: only numbers, names, + - * / //, comparisons, and/or/not, min/max/abs are allowed")


# --- Evaluation --------------------------------------------------------------------------------------------------


def problem_values(problem=None, sizes: dict[str, int] | None = None) -> dict[str, float]:
    """What the rules know of the problem: its minimum bytes at the profiled shape and what bounds it."""
    if problem is None:
        return {"min_bytes": 0.0, "tensor_problem": 0.0, "compute_problem": 0.0}
    return {
        "min_bytes": float(problem.bytes_moved(sizes)) if sizes else 0.0,
        "tensor_problem": 1.0 if problem.compute_unit.startswith("tensor") else 0.0,
        "compute_problem": 1.0 if problem.compute_unit == "fp32" else 0.0,
    }


def values_of(metrics: dict[str, float], extra: dict[str, float] | None = None, rules: Rules | None = None) -> dict:
    """The aliases bound to this profile's metric values, then every derived value that can be computed."""
    rules = rules or load()
    values: dict[str, float] = dict(extra or {})
    for alias, name in rules.metrics.items():
        raw = metrics.get(name)
        if isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw):
            values[alias] = float(raw)
    for name, expr in rules.derived.items():
        try:
            values[name] = evaluate(expr, values)
        except Missing:
            continue
    return values


def findings(
    metrics: dict[str, float], *, problem=None, sizes: dict[str, int] | None = None, rules: Rules | None = None
) -> list[Finding]:
    """Every rule that fires on these metrics, worst first (ties: the rules file's order)."""
    rules = rules or load()
    values = values_of(metrics, problem_values(problem, sizes), rules)
    found = []
    for order, rule in enumerate(rules.rules):
        if any(name not in values for name in rule.requires):
            continue
        try:
            if rule.when and not evaluate(rule.when, values):
                continue
            value = evaluate(rule.value, values)
        except Missing:
            continue
        if not math.isfinite(value) or not rule.fires(value):
            continue
        try:
            sentence = rule.sentence.format(value=value, **values)
        except (KeyError, ValueError) as e:
            raise RuleError(f"rule {rule.id}: sentence cannot be filled: {e!r}") from None
        found.append(
            (
                -rule.severity(value),
                order,
                Finding(
                    rule=rule.id,
                    title=rule.title,
                    sentence=sentence[0].upper() + sentence[1:],
                    severity=round(rule.severity(value), 3),
                    value=value,
                    capsule=rule.capsule,
                    capsule_slug=rule.capsule_slug,
                ),
            )
        )
    return [finding for *_, finding in sorted(found, key=lambda item: item[:2])]


@dataclass(frozen=True)
class BytesVsMinimum:
    moved: int  # DRAM bytes read and written
    minimum: int  # the problem's `bytes` expression at the profiled shape
    ratio: float

    @property
    def sentence(self) -> str:
        if self.ratio < 1.05:
            return "This kernel moves no more bytes through DRAM than the problem must."
        return f"This kernel moves {self.ratio:.1f} times the bytes it must through DRAM."


def bytes_vs_minimum(metrics: dict[str, float], *, problem, sizes: dict[str, int]) -> BytesVsMinimum | None:
    """DRAM bytes moved against the problem's minimum; None when either is unknown."""
    rules = load()
    read, write = metrics.get(rules.metrics["dram_read_bytes"]), metrics.get(rules.metrics["dram_write_bytes"])
    if read is None or write is None or problem is None or not sizes:
        return None
    minimum = problem.bytes_moved(sizes)
    if minimum <= 0:
        return None
    moved = int(read + write)
    return BytesVsMinimum(moved=moved, minimum=minimum, ratio=moved / minimum)


# Plain words for the stall reasons of the WarpStateStats section and of source-level sampling
# (smsp__pcsamp_warps_issue_stalled_<reason>): Profiling Guide, "Warp Scheduler States".
STALL_WORDS = {
    "long_scoreboard": "waiting for global or local memory",
    "barrier": "waiting at __syncthreads()",
    "mio_throttle": "the shared-memory and special-function queue is full",
    "short_scoreboard": "waiting for shared memory or a special function result",
    "math_pipe_throttle": "the arithmetic pipe is busy",
    "wait": "a fixed-latency dependency",
    "not_selected": "ready, but another warp was picked",
    "selected": "issuing",
    "lg_throttle": "the global-memory queue is full",
    "tex_throttle": "the texture queue is full",
    "drain": "draining memory stores at exit",
    "dispatch_stall": "the dispatcher held the instruction",
    "imc_miss": "waiting for the constant cache",
    "membar": "waiting at a memory barrier",
    "no_instruction": "waiting for instructions to be fetched",
    "branch_resolving": "resolving a branch",
    "sleeping": "sleeping",
    "misc": "other reasons",
}


def stall_words(reason: str) -> str:
    return STALL_WORDS.get(reason, reason.replace("_", " "))


def top_stalls(metrics: dict[str, float], *, limit: int = 3) -> list[dict]:
    """The largest stall reasons of the WarpStateStats metrics, with their share of all stalls, in plain words."""
    prefix, suffix = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
    stalls = {
        name[len(prefix) : -len(suffix)]: float(value)
        for name, value in metrics.items()
        if name.startswith(prefix) and name.endswith(suffix) and isinstance(value, (int, float))
    }
    stalls.pop("selected", None)  # issuing is not a stall
    total = sum(v for v in stalls.values() if v > 0)
    if total <= 0:
        return []
    ranked = sorted(stalls.items(), key=lambda kv: -kv[1])[:limit]
    return [
        {"reason": reason, "words": stall_words(reason), "share": 100 * value / total, "per_issue": value}
        for reason, value in ranked
        if value > 0
    ]

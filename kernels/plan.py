"""The launch plan: a TOML block inside the submission, and a tiny whitelisted expression language.

    /* @plan
    [[launch]]
    kernel = "sgemm_tiled<64, 64>"
    grid = ["cdiv(N, 64)", "cdiv(M, 64)"]
    block = [256]
    shared_bytes = "2 * 64 * 8 * 4"
    */

Expressions are parsed with `ast` and only integer literals, the problem's size names, + - * // %,
unary minus, parentheses and cdiv/min/max are accepted; nothing is ever passed to eval().
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass

from kernels.results import ResolvedLaunch

Expr = int | str

MAX_LAUNCHES = 8
MAX_EXPR_CHARS = 200
MAX_KERNEL_NAME_CHARS = 200
# Launch limits of compute capability >= 7.0 (CUDA programming guide, "Technical specifications").
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)
# Opt-in dynamic shared memory per block by target; the judge raises the kernel's attribute above 48 KB.
DEFAULT_SHARED_BYTES = 48 * 1024
MAX_SHARED_BYTES_BY_ARCH = {
    "sm_80": 163 * 1024,
    "sm_86": 99 * 1024,
    "sm_89": 99 * 1024,
    "sm_90": 227 * 1024,
    "sm_90a": 227 * 1024,
}

_PLAN_BLOCK = re.compile(r"/\*\s*@plan\b(.*?)\*/", re.DOTALL)
# An identifier with optional template arguments made of literals, names and arithmetic only.
_KERNEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(\s*<[A-Za-z0-9_\s,()+\-*/%.:<>]*>)?$")
_FUNCTIONS = {
    "cdiv": lambda a, b: -(-a // b),
    "min": min,
    "max": max,
}


class PlanError(ValueError):
    """The plan is malformed, refers to unknown names, or asks for more than the hardware allows."""


@dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple[Expr, ...]
    block: tuple[Expr, ...]
    shared_bytes: Expr = 0

    @property
    def base_name(self) -> str:
        """The kernel's identifier without template arguments or namespace."""
        return self.kernel.split("<", 1)[0].strip().split("::")[-1]

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "grid": list(self.grid),
            "block": list(self.block),
            "shared_bytes": self.shared_bytes,
        }


def extract_plan(source: str) -> list[Launch]:
    blocks = _PLAN_BLOCK.findall(source)
    if not blocks:
        raise PlanError("no launch plan: add a comment block starting with '/* @plan' (see the problem statement)")
    if len(blocks) > 1:
        raise PlanError(f"{len(blocks)} '/* @plan' blocks found; write exactly one")
    try:
        table = tomllib.loads(blocks[0])
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"the plan is not valid TOML: {exc}") from None
    except ValueError:  # an integer past Python's 4300-digit conversion limit
        raise PlanError("the plan holds a number too long to read") from None
    except RecursionError:
        # tomllib recurses once per level of [ or {: a plan nested thousands deep must not be a server error.
        raise PlanError("the plan nests arrays or tables too deeply; a launch needs a list of 1 to 3 items") from None
    unknown = set(table) - {"launch"}
    if unknown:
        raise PlanError(f"unknown plan keys {sorted(unknown)}; only [[launch]] tables are allowed")
    launches = table.get("launch")
    if not isinstance(launches, list) or not launches:
        raise PlanError("the plan needs at least one [[launch]] table")
    if len(launches) > MAX_LAUNCHES:
        raise PlanError(f"{len(launches)} launches; at most {MAX_LAUNCHES}")
    if not all(isinstance(t, dict) for t in launches):
        raise PlanError("'launch' must be [[launch]] tables, not a list of values")
    return [_parse_launch(i, t) for i, t in enumerate(launches)]


def _parse_launch(index: int, table: dict) -> Launch:
    where = f"launch {index + 1}"
    unknown = set(table) - {"kernel", "grid", "block", "shared_bytes"}
    if unknown:
        raise PlanError(f"{where}: unknown keys {sorted(unknown)}")
    kernel = table.get("kernel")
    if not isinstance(kernel, str) or len(kernel) > MAX_KERNEL_NAME_CHARS or not _KERNEL_NAME.match(kernel.strip()):
        raise PlanError(f"{where}: 'kernel' must be a kernel name or a template instantiation such as \"k<128, 8>\"")
    dims = {}
    for key in ("grid", "block"):
        value = table.get(key)
        if not isinstance(value, list) or not 1 <= len(value) <= 3:
            raise PlanError(f"{where}: '{key}' must be a list of 1 to 3 items")
        dims[key] = tuple(_check_expr_type(f"{where}: {key}", v) for v in value)
    shared = _check_expr_type(f"{where}: shared_bytes", table.get("shared_bytes", 0))
    return Launch(kernel.strip(), dims["grid"], dims["block"], shared)


def _check_expr_type(where: str, value: object) -> Expr:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise PlanError(f"{where}: {_quote(value)} is neither an integer nor an expression string")
    if isinstance(value, str) and len(value) > MAX_EXPR_CHARS:
        raise PlanError(f"{where}: expression longer than {MAX_EXPR_CHARS} characters")
    return value


def _quote(value: object, limit: int = 60) -> str:
    """A reader's value as it appears in an error, cut short: the value may be a list of thousands."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def evaluate(expr: Expr, sizes: dict[str, int]) -> int:
    """Evaluate one plan expression with the problem's sizes bound; raises PlanError on anything else."""
    if isinstance(expr, int):
        return expr
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError):  # ValueError: a NUL byte, on Pythons that do not call it a SyntaxError
        raise PlanError(f"cannot parse expression {expr!r}") from None
    return _eval_node(tree.body, sizes, expr)


def _eval_node(node: ast.AST, sizes: dict[str, int], text: str) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in sizes:
            raise PlanError(f"unknown name {node.id!r} in {text!r}; known: {', '.join(sizes)}")
        return sizes[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval_node(node.operand, sizes, text)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
        left, right = _eval_node(node.left, sizes, text), _eval_node(node.right, sizes, text)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
            raise PlanError(f"division by zero in {text!r}")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if node.keywords or len(node.args) < 2 or (node.func.id == "cdiv" and len(node.args) != 2):
            raise PlanError(f"{node.func.id}() takes two arguments (min/max: two or more) in {text!r}")
        args = [_eval_node(a, sizes, text) for a in node.args]
        if node.func.id == "cdiv" and args[1] <= 0:
            raise PlanError(f"cdiv() needs a positive divisor in {text!r}")
        return _FUNCTIONS[node.func.id](*args)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        raise PlanError(f"use // for integer division in {text!r}")
    raise PlanError(
        f"{text!r}: only integers, {', '.join(sizes)}, + - * // %, parentheses and cdiv/min/max are allowed"
    )


_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


def resolve(launch: Launch, sizes: dict[str, int], arch: str = "sm_90") -> ResolvedLaunch:
    """Evaluate a launch at one shape and check it against the hardware's launch limits."""
    grid = tuple(evaluate(e, sizes) for e in launch.grid) + (1,) * (3 - len(launch.grid))
    block = tuple(evaluate(e, sizes) for e in launch.block) + (1,) * (3 - len(launch.block))
    shared = evaluate(launch.shared_bytes, sizes)
    at = f"{launch.kernel} at {_fmt_sizes(sizes)}"
    for axis, (g, limit) in enumerate(zip(grid, MAX_GRID_DIMS, strict=True)):
        if not 1 <= g <= limit:
            raise PlanError(f"{at}: grid[{axis}] = {g} is outside 1..{limit}")
    for axis, (b, limit) in enumerate(zip(block, MAX_BLOCK_DIMS, strict=True)):
        if not 1 <= b <= limit:
            raise PlanError(f"{at}: block[{axis}] = {b} is outside 1..{limit}")
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS_PER_BLOCK:
        raise PlanError(f"{at}: {threads} threads per block; at most {MAX_THREADS_PER_BLOCK}")
    max_shared = MAX_SHARED_BYTES_BY_ARCH.get(arch, DEFAULT_SHARED_BYTES)
    if not 0 <= shared <= max_shared:
        raise PlanError(f"{at}: shared_bytes = {shared}; {arch} allows 0..{max_shared} bytes of dynamic shared memory")
    return ResolvedLaunch(launch.kernel, grid, block, shared)


def resolve_all(plan: list[Launch], shapes: list[dict[str, int]], arch: str = "sm_90") -> list[list[ResolvedLaunch]]:
    """Resolve the plan at every shape the problem will run, so that errors surface before the GPU."""
    return [[resolve(launch, sizes, arch) for launch in plan] for sizes in shapes]


def _fmt_sizes(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())

"""The launch plan: a TOML block inside the submission, and a tiny whitelisted expression language.

    /* @plan
    [[launch]]
    kernel = "sgemm_tiled<64, 64>"
    grid = ["cdiv(N, 64)", "cdiv(M, 64)"]
    block = [256]
    shared_bytes = "2 * 64 * 8 * 4"
    */

Expressions are parsed with `ast` and only integer literals, the problem's size names, `SMS` (the GPU's
multiprocessor count, for persistent kernels), + - * // %, unary minus, parentheses and cdiv/min/max are
accepted; nothing is ever passed to eval().

Hopper launches (compute capability 9.0): a launch may ask for thread-block clusters (`cluster = [2, 1, 1]`,
`non_portable_cluster = true` for 9 to 16 blocks) and name TMA tensor maps, declared as [[tensor_map]] tables
over the problem's arrays, which the judge encodes on the GPU node and appends to the kernel's arguments:

    [[tensor_map]]
    name = "tmA"
    array = "A"
    box = [64, 128]          # elements, innermost dimension first
    swizzle = "128B"         # none | 32B | 64B | 128B
    l2_promotion = "256B"    # none | 64B | 128B | 256B
    oob_fill = "zero"        # zero | nan

    [[launch]]
    kernel = "gemm_tma<128, 256>"
    grid = ["SMS"]
    block = [384]
    cluster = [2, 1, 1]
    tensor_maps = ["tmA"]

Everything is checked at every shape on the CPU (`resolve`): grid divisible by the cluster, cluster size, box
limits, the array's strides and rank as cuTensorMapEncodeTiled demands them.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from typing import Any

from kernels.results import ResolvedLaunch, ResolvedTensorMap

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

# The multiprocessor count `SMS` stands for where no GPU is at hand (the H200's, and the H100 SXM's).
DEFAULT_SMS = 132
# Thread-block clusters (CUDA programming guide, "Thread block clusters"): 8 blocks is the portable limit;
# Hopper runs up to 16 once the kernel's non-portable-cluster attribute is set.
MAX_PORTABLE_CLUSTER = 8
MAX_NON_PORTABLE_CLUSTER = 16
HOPPER_ARCHS = ("sm_90", "sm_90a")  # clusters and TMA need compute capability 9.0
# cuTensorMapEncodeTiled's limits (CUDA driver API, "Tensor map object management").
MAX_TENSOR_MAPS = 8
MAX_TENSOR_RANK = 5
MAX_BOX_DIM = 256
TMA_ALIGN_BYTES = 16  # global address and every global stride
MAX_TMA_DIM = 2**32  # elements along one dimension
MAX_TMA_STRIDE_BYTES = 2**40
SWIZZLE_SPAN_BYTES = {"none": None, "32B": 32, "64B": 64, "128B": 128}
L2_PROMOTIONS = ("none", "64B", "128B", "256B")
OOB_FILLS = ("zero", "nan")
ELEMENT_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3": 1, "int32": 4}
_FLOAT_TYPES = ("float32", "float16", "bfloat16")  # NaN fill is for floating types TMA knows as such
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

# The opening of a plan block. Blocks are found by `plan_blocks` below, never by one pattern over the whole file: a
# lazy `/\*\s*@plan\b(.*?)\*/` retries from every opening to the end of the file when no `*/` follows (quadratic:
# 96 KB of repeated "/* @plan" held a web worker 5-9 s).
PLAN_OPENING = re.compile(r"/\*\s*@plan\b")
# Limits of the scan, checked before it starts: the judge's source limit (kernels/source.py, in characters here, which
# a source within its byte limit never exceeds), the blocks counted (one is allowed; a few more make a clear
# message) and one block's text (a plan of 8 launches and 8 tensor maps is under 2 KB).
MAX_SCAN_CHARS = 256 * 1024
MAX_PLAN_BLOCKS = 8
MAX_PLAN_CHARS = 64 * 1024
_CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1 (Unicode category Cc)
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
class TensorMap:
    """A [[tensor_map]] table: a TMA descriptor over one of the problem's arrays, whole."""

    name: str
    array: str
    box: tuple[int, ...]  # elements, innermost dimension first
    swizzle: str = "none"
    l2_promotion: str = "none"
    oob_fill: str = "zero"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "array": self.array,
            "box": list(self.box),
            "swizzle": self.swizzle,
            "l2_promotion": self.l2_promotion,
            "oob_fill": self.oob_fill,
        }

    @classmethod
    def from_dict(cls, data: dict) -> TensorMap:
        return cls(
            data["name"], data["array"], tuple(data["box"]), data["swizzle"], data["l2_promotion"], data["oob_fill"]
        )


@dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple[Expr, ...]
    block: tuple[Expr, ...]
    shared_bytes: Expr = 0
    cluster: tuple[Expr, ...] | None = None
    non_portable_cluster: bool = False
    tensor_maps: tuple[TensorMap, ...] = ()  # the maps the launch names, in its order, each whole

    @property
    def base_name(self) -> str:
        """The kernel's identifier without template arguments or namespace."""
        return self.kernel.split("<", 1)[0].strip().split("::")[-1]

    def to_dict(self) -> dict:
        """Plain data (the stored plan and the GPU job's payload); the Hopper keys only where used, so an
        ordinary plan reads as it always did."""
        data = {
            "kernel": self.kernel,
            "grid": list(self.grid),
            "block": list(self.block),
            "shared_bytes": self.shared_bytes,
        }
        if self.cluster is not None:
            data["cluster"] = list(self.cluster)
        if self.non_portable_cluster:
            data["non_portable_cluster"] = True
        if self.tensor_maps:
            data["tensor_maps"] = [m.to_dict() for m in self.tensor_maps]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Launch:
        cluster = data.get("cluster")
        return cls(
            data["kernel"],
            tuple(data["grid"]),
            tuple(data["block"]),
            data.get("shared_bytes", 0),
            None if cluster is None else tuple(cluster),
            bool(data.get("non_portable_cluster", False)),
            tuple(TensorMap.from_dict(m) for m in data.get("tensor_maps", [])),
        )


@dataclass(frozen=True)
class PlanBlock:
    """One `/* @plan ... */` comment: source[start:end] is the whole comment, `body` the TOML inside it."""

    start: int
    end: int
    body: str


def plan_blocks(source: str) -> list[PlanBlock]:
    """The plan blocks of a source, in one pass: time linear in its length (each character is looked at a bounded
    number of times), whatever it holds. An opening with no `*/` after it ends the scan, as no later opening can be
    closed either. Raises PlanError past the limits above."""
    if len(source) > MAX_SCAN_CHARS:
        raise PlanError(f"the source is {len(source):,} characters; the limit is {MAX_SCAN_CHARS:,}")
    blocks: list[PlanBlock] = []
    position = 0
    while True:
        opening = PLAN_OPENING.search(source, position)  # \s* stops at the next "/", so no text is read twice
        if opening is None:
            return blocks
        close = source.find("*/", opening.end())
        if close < 0:
            if not blocks:
                raise PlanError("the '/* @plan' block is never closed: end it with '*/'")
            return blocks
        if len(blocks) == MAX_PLAN_BLOCKS:
            raise PlanError(f"more than {MAX_PLAN_BLOCKS} '/* @plan' blocks found; write exactly one")
        blocks.append(PlanBlock(opening.start(), close + 2, source[opening.end() : close]))
        position = close + 2


def extract_plan(source: str) -> list[Launch]:
    blocks = plan_blocks(source)
    if not blocks:
        raise PlanError("no launch plan: add a comment block starting with '/* @plan' (see the problem statement)")
    if len(blocks) > 1:
        raise PlanError(f"{len(blocks)} '/* @plan' blocks found; write exactly one")
    body = blocks[0].body
    if len(body) > MAX_PLAN_CHARS:
        raise PlanError(f"the plan is {len(body):,} characters; the limit is {MAX_PLAN_CHARS:,}")
    try:
        table = tomllib.loads(body)
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"the plan is not valid TOML: {exc}") from None
    except ValueError:  # an integer past Python's 4300-digit conversion limit
        raise PlanError("the plan holds a number too long to read") from None
    except RecursionError:
        # tomllib recurses once per level of [ or {: a plan nested thousands deep must not be a server error.
        raise PlanError("the plan nests arrays or tables too deeply; a launch needs a list of 1 to 3 items") from None
    _refuse_control_characters(table)
    unknown = set(table) - {"launch", "tensor_map"}
    if unknown:
        raise PlanError(f"unknown plan keys {sorted(unknown)}; only [[launch]] and [[tensor_map]] tables are allowed")
    launches = table.get("launch")
    if not isinstance(launches, list) or not launches:
        raise PlanError("the plan needs at least one [[launch]] table")
    if len(launches) > MAX_LAUNCHES:
        raise PlanError(f"{len(launches)} launches; at most {MAX_LAUNCHES}")
    if not all(isinstance(t, dict) for t in launches):
        raise PlanError("'launch' must be [[launch]] tables, not a list of values")
    maps = _parse_tensor_maps(table.get("tensor_map", []))
    parsed = [_parse_launch(i, t, maps) for i, t in enumerate(launches)]
    named = {m.name for launch in parsed for m in launch.tensor_maps}
    unused = [name for name in maps if name not in named]
    if unused:
        raise PlanError(f"tensor map {unused[0]!r} is declared but no launch names it in its tensor_maps")
    return parsed


def _refuse_control_characters(table: dict) -> None:
    """TOML escapes let a plan hold any character ("\\u0000" is six plain characters in the source, a NUL once
    read). No kernel name, expression or map name needs a control character, and a NUL in the stored plan is refused
    by PostgreSQL's jsonb, which wedged the compile (retried until "judge error"): refused here, at submit time.
    Iterative: the table may nest as deep as tomllib allows."""
    pending: list[object] = [table]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str) and _CONTROL_CHARACTER.search(value):
            raise PlanError(f"the plan holds a control character in {_quote(value)}; write plain text")


def _parse_tensor_maps(tables: object) -> dict[str, TensorMap]:
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise PlanError("'tensor_map' must be [[tensor_map]] tables, not a list of values")
    if len(tables) > MAX_TENSOR_MAPS:
        raise PlanError(f"{len(tables)} tensor maps; at most {MAX_TENSOR_MAPS}")
    maps: dict[str, TensorMap] = {}
    for index, table in enumerate(tables):
        tensor_map = _parse_tensor_map(index, table)
        if tensor_map.name in maps:
            raise PlanError(f"tensor map {tensor_map.name!r} is declared twice; names must be unique")
        maps[tensor_map.name] = tensor_map
    return maps


def _parse_tensor_map(index: int, table: dict) -> TensorMap:
    where = f"tensor_map {index + 1}"
    unknown = set(table) - {"name", "array", "box", "swizzle", "l2_promotion", "oob_fill"}
    if unknown:
        raise PlanError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("name", "array"):
        value = table.get(key)
        if not isinstance(value, str) or not _IDENTIFIER.match(value):
            raise PlanError(f"{where}: '{key}' must be an identifier, got {_quote(value)}")
    where = f"tensor map {table['name']!r}"
    box = table.get("box")
    if not isinstance(box, list) or not 1 <= len(box) <= MAX_TENSOR_RANK:
        raise PlanError(f"{where}: 'box' must be a list of 1 to {MAX_TENSOR_RANK} integers, innermost dimension first")
    for value in box:
        if isinstance(value, bool) or not isinstance(value, int):
            raise PlanError(f"{where}: box size {_quote(value)} is not an integer")
        if not 1 <= value <= MAX_BOX_DIM:
            raise PlanError(f"{where}: box size {value} is outside 1..{MAX_BOX_DIM}")
    options = {}
    for key, allowed in (
        ("swizzle", tuple(SWIZZLE_SPAN_BYTES)),
        ("l2_promotion", L2_PROMOTIONS),
        ("oob_fill", OOB_FILLS),
    ):
        value = table.get(key, allowed[0])
        if value not in allowed:
            raise PlanError(f"{where}: {key} = {_quote(value)}; one of {', '.join(repr(a) for a in allowed)}")
        options[key] = value
    return TensorMap(table["name"], table["array"], tuple(box), **options)


def _parse_launch(index: int, table: dict, maps: dict[str, TensorMap]) -> Launch:
    where = f"launch {index + 1}"
    unknown = set(table) - {"kernel", "grid", "block", "shared_bytes", "cluster", "non_portable_cluster", "tensor_maps"}
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
    cluster = table.get("cluster")
    if cluster is not None:
        if not isinstance(cluster, list) or not 1 <= len(cluster) <= 3:
            raise PlanError(f"{where}: 'cluster' must be a list of 1 to 3 items")
        cluster = tuple(_check_expr_type(f"{where}: cluster", v) for v in cluster)
    non_portable = table.get("non_portable_cluster", False)
    if not isinstance(non_portable, bool):
        raise PlanError(f"{where}: 'non_portable_cluster' must be true or false")
    if non_portable and cluster is None:
        raise PlanError(f"{where}: 'non_portable_cluster' needs a 'cluster'")
    names = table.get("tensor_maps", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise PlanError(f"{where}: 'tensor_maps' must be a list of tensor map names")
    for name in names:
        if name not in maps:
            known = ", ".join(repr(n) for n in maps) or "none"
            raise PlanError(f"{where}: unknown tensor map {_quote(name)}; declared: {known}")
    if len(set(names)) != len(names):
        raise PlanError(f"{where}: 'tensor_maps' names a map twice")
    return Launch(
        kernel.strip(), dims["grid"], dims["block"], shared, cluster, non_portable, tuple(maps[n] for n in names)
    )


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


def resolve(
    launch: Launch, sizes: dict[str, int], arch: str = "sm_90", problem: Any = None, sms: int = DEFAULT_SMS
) -> ResolvedLaunch:
    """Evaluate a launch at one shape and check it against the hardware's launch limits. `problem` (a
    kernels.problems.Problem) is needed only by plans with tensor maps: their arrays' shapes and types;
    `sms` is what the name SMS stands for (the GPU's multiprocessor count)."""
    env = {**sizes, "SMS": sms}
    grid = tuple(evaluate(e, env) for e in launch.grid) + (1,) * (3 - len(launch.grid))
    block = tuple(evaluate(e, env) for e in launch.block) + (1,) * (3 - len(launch.block))
    shared = evaluate(launch.shared_bytes, env)
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
    if (launch.cluster is not None or launch.tensor_maps) and arch not in HOPPER_ARCHS:
        raise PlanError(f"{at}: clusters and tensor maps need compute capability 9.0 (sm_90 or sm_90a), not {arch}")
    cluster = None if launch.cluster is None else _resolve_cluster(launch, grid, env, at)
    maps = [_resolve_tensor_map(m, sizes, problem, at) for m in launch.tensor_maps]
    return ResolvedLaunch(launch.kernel, grid, block, shared, cluster, launch.non_portable_cluster, maps)


def _resolve_cluster(launch: Launch, grid: tuple[int, ...], env: dict[str, int], at: str) -> tuple[int, ...]:
    cluster = tuple(evaluate(e, env) for e in launch.cluster) + (1,) * (3 - len(launch.cluster))
    for axis, (c, g) in enumerate(zip(cluster, grid, strict=True)):
        if c < 1:
            raise PlanError(f"{at}: cluster[{axis}] = {c}; it must be at least 1")
        if g % c:
            raise PlanError(f"{at}: grid[{axis}] = {g} is not a multiple of cluster[{axis}] = {c}")
    blocks = cluster[0] * cluster[1] * cluster[2]
    limit = MAX_NON_PORTABLE_CLUSTER if launch.non_portable_cluster else MAX_PORTABLE_CLUSTER
    if blocks > limit:
        hint = "" if launch.non_portable_cluster else " (up to 16 with non_portable_cluster = true)"
        raise PlanError(f"{at}: a cluster of {blocks} blocks; at most {limit}{hint}")
    return cluster


def _resolve_tensor_map(tensor_map: TensorMap, sizes: dict[str, int], problem: Any, at: str) -> ResolvedTensorMap:
    """The descriptor cuTensorMapEncodeTiled will be given at this shape, checked as the driver checks it."""
    where = f"{at}: tensor map {tensor_map.name!r}"
    if problem is None:
        raise PlanError(f"{where}: tensor maps need the problem's arrays")
    spec = next((a for a in problem.args if a.name == tensor_map.array), None)
    pointers = ", ".join(a.name for a in problem.args if a.is_pointer and not a.is_workspace)
    if spec is None or not spec.is_pointer:
        raise PlanError(f"{where}: array {tensor_map.array!r} is not one of the problem's arrays ({pointers})")
    if spec.is_workspace:
        raise PlanError(f"{where}: {tensor_map.array!r} is a workspace; tensor maps cover the problem's arrays only")
    shape = problem.array_shape(spec.name, sizes)
    if shape is None:
        raise PlanError(f"{where}: problem {problem.name} declares no shape for {spec.name!r}; no tensor maps over it")
    promised = problem.promised_alignment(spec.name)
    if promised % TMA_ALIGN_BYTES:
        raise PlanError(
            f"{where}: {spec.name} is promised only {promised}-byte alignment; TMA needs {TMA_ALIGN_BYTES} bytes"
        )
    element = ELEMENT_BYTES[spec.dtype]
    dims = tuple(reversed(shape))  # TMA counts dimensions innermost first
    rank = len(dims)
    if rank > MAX_TENSOR_RANK:
        raise PlanError(f"{where}: {spec.name} has rank {rank}; TMA takes at most {MAX_TENSOR_RANK}")
    box = tensor_map.box
    if len(box) != rank:
        raise PlanError(
            f"{where}: box {list(box)} has {len(box)} dimensions but {spec.name} has {rank} "
            f"(innermost first: {list(dims)})"
        )
    box_bytes = box[0] * element
    if box_bytes % TMA_ALIGN_BYTES:
        raise PlanError(
            f"{where}: the box's innermost size {box[0]} x {element} bytes = {box_bytes} bytes is not a multiple "
            f"of {TMA_ALIGN_BYTES}"
        )
    span = SWIZZLE_SPAN_BYTES[tensor_map.swizzle]
    if span is not None and box_bytes > span:
        raise PlanError(
            f"{where}: the box's innermost size is {box_bytes} bytes; swizzle {tensor_map.swizzle} spans at most "
            f"{span} bytes"
        )
    if tensor_map.oob_fill == "nan" and spec.dtype not in _FLOAT_TYPES:
        raise PlanError(f"{where}: oob_fill = 'nan' needs a floating-point array; {spec.name} is {spec.dtype}")
    for axis, extent in enumerate(dims):
        if not 1 <= extent <= MAX_TMA_DIM:
            raise PlanError(f"{where}: {spec.name} has {extent} elements along dimension {axis}; TMA takes 1..2^32")
    strides = []
    stride = element
    for axis in range(1, rank):
        stride *= dims[axis - 1]
        if stride % TMA_ALIGN_BYTES:
            raise PlanError(
                f"{where}: {spec.name}'s stride of dimension {axis} is {stride} bytes, not a multiple of "
                f"{TMA_ALIGN_BYTES} (TMA needs {TMA_ALIGN_BYTES // element}-element rows: see the problem statement)"
            )
        if stride >= MAX_TMA_STRIDE_BYTES:
            raise PlanError(f"{where}: {spec.name}'s stride of dimension {axis} is {stride} bytes; at most 2^40 - 1")
        strides.append(stride)
    return ResolvedTensorMap(
        tensor_map.name,
        spec.name,
        spec.dtype,
        dims,
        tuple(strides),
        box,
        tensor_map.swizzle,
        tensor_map.l2_promotion,
        tensor_map.oob_fill,
    )


def resolve_all(
    plan: list[Launch],
    shapes: list[dict[str, int]],
    arch: str = "sm_90",
    problem: Any = None,
    sms: int = DEFAULT_SMS,
) -> list[list[ResolvedLaunch]]:
    """Resolve the plan at every shape the problem will run, so that errors surface before the GPU."""
    return [[resolve(launch, sizes, arch, problem, sms) for launch in plan] for sizes in shapes]


def _fmt_sizes(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())

"""Triton submissions (issue 46): the parse check and the launch plan, read with `ast`; nothing is executed here.

A Triton submission is one .py file: imports of triton, triton.language and math, module-level constants that are
literals, @triton.jit functions, and the plan as a module-level string literal in TOML (the keys of CUDA's plan,
with Triton's launch options instead of `block` and `shared_bytes`):

    PLAN = \"\"\"
    [[launch]]
    kernel = "vector_add"             # a @triton.jit function of the file
    grid = ["cdiv(N, 1024)"]          # 1-3 items: integers or plan expressions (kernels/plan.py)
    num_warps = 4                     # 1, 2, 4, 8, 16 or 32 (default 4): the block is 32 x num_warps threads
    num_stages = 3                    # 1..8 (default 3)
    constexprs = { BLOCK_SIZE = 1024 }  # values of the kernel's tl.constexpr parameters without defaults (or over them)
    \"\"\"

A kernel's parameters that are not `tl.constexpr` are the problem's arguments, in order; its constexpr parameters
take the plan's values, else their defaults.

`check` is the whitelist (a courtesy: a clear refusal naming the line); the boundary is the sandbox the file is
compiled in (kernels/triton_compiler.py), which holds with `check` switched off (tests/kernels/test_triton_escapes.py).
`extract` reads the plan and the kernels' parameters, and is all the compile stage needs when `check` is off.
"""

from __future__ import annotations

import ast
import math
import tomllib
from dataclasses import dataclass, field
from typing import Any

from kernels import plan as plan_mod
from kernels.plan import PlanError
from kernels.source import SourceRejected

__all__ = ["KernelDef", "PlanError", "SourceRejected", "TritonLaunch", "check", "extract", "triton_types"]

FILENAME = "submission.py"  # how tracebacks and Triton's errors name the reader's file
MAX_SOURCE_BYTES = 64 * 1024
MAX_LINES = 2000
MAX_NODES = 20_000  # syntax tree nodes: a kernel file of 2,000 lines has about 15,000
MAX_FUNCTIONS = 32
MAX_CONSTANTS = 128
MAX_STRING_CHARS = 4096  # a string literal (a docstring, a print's text); PLAN is read on its own
MAX_INT_BITS = 64
MAX_STATIC_UNROLL = 1024  # literal bounds of tl.static_range; a bound from a constexpr meets the time limit
PLAN_NAME = "PLAN"
NUM_WARPS = (1, 2, 4, 8, 16, 32)
MAX_NUM_STAGES = 8
MAX_CONSTEXPRS = 32
MAX_CONSTEXPR_STRING_CHARS = 64

MODULES = ("triton", "triton.language", "math")
# What `from triton import ...` may bind; any public name of triton.language and math may be imported from them, but
# for the modules below. libdevice also comes from its two homes.
TRITON_NAMES = ("jit", "language", "cdiv", "next_power_of_2")
LIBDEVICE_MODULES = ("triton.language.extra", "triton.language.extra.cuda")
# Triton calls a plain Python function it meets in a kernel while it compiles, and triton.language exposes modules
# that lead anywhere (tl.core.builtins is Python's builtins: tl.core.builtins.open would run). In kernels, attribute
# chains under triton.language go through these namespaces only, and never end at a module (a local bound to one
# would lead on): LANGUAGE_MODULES names every module reachable from triton.language in two steps
# (tests/kernels/test_triton_source.py checks the list against the installed Triton).
LANGUAGE_NAMESPACES = ("", "math", "random", "standard", "extra.libdevice", "extra.cuda.libdevice")
LANGUAGE_MODULES = frozenset(
    {
        "builtins",
        "core",
        "cuda",
        "extra",
        "hip",
        "inspect",
        "ir",
        "knobs",
        "libdevice",
        "math",
        "module",
        "pkgutil",
        "random",
        "semantic",
        "standard",
        "target_info",
        "tl",
        "typing",
    }
)
JIT_KEYWORDS = ("noinline", "do_not_specialize", "do_not_specialize_on_alignment", "debug")
# Python's names that reach beyond the kernel (files, the interpreter, objects' insides): refused in kernels, also
# where Triton would evaluate them at compile time (constexpr expressions, calls of plain Python functions).
REFUSED_NAMES = frozenset(
    {
        "__import__",
        "__builtins__",
        "eval",
        "exec",
        "compile",
        "open",
        "input",
        "breakpoint",
        "help",
        "exit",
        "quit",
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "globals",
        "locals",
        "vars",
        "dir",
        "type",
        "object",
        "super",
        "memoryview",
        "bytearray",
        "classmethod",
        "staticmethod",
        "property",
        "id",
        "hash",
    }
)
# Statements and expressions a kernel body never needs (Triton's frontend compiles none of them either).
_REFUSED_IN_KERNELS = {
    ast.Import: "an import",
    ast.ImportFrom: "an import",
    ast.ClassDef: "a class",
    ast.FunctionDef: "a nested function",
    ast.AsyncFunctionDef: "a nested function",
    ast.Lambda: "a lambda",
    ast.Global: "a global statement",
    ast.Nonlocal: "a nonlocal statement",
    ast.Try: "try",
    ast.With: "with",
    ast.AsyncWith: "with",
    ast.AsyncFor: "async for",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Delete: "del",
    ast.Raise: "raise",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator",
    ast.JoinedStr: "an f-string",
    ast.Starred: "a starred expression",
    ast.NamedExpr: "an assignment expression (:=)",
}
if hasattr(ast, "TryStar"):
    _REFUSED_IN_KERNELS[ast.TryStar] = "try"

# Problem argument types (kernels/problems) as Triton signature types.
_TRITON_SCALARS = {"int32": "i32", "float32": "fp32"}
_TRITON_POINTEES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float8_e4m3": "fp8e4nv", "int32": "i32"}


@dataclass(frozen=True)
class Param:
    name: str
    constexpr: bool
    has_default: bool


@dataclass(frozen=True)
class KernelDef:
    """A function of the file as the syntax tree shows it (its decorators are `check`'s business)."""

    name: str
    line: int
    params: tuple[Param, ...]

    @property
    def arguments(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if not p.constexpr)

    @property
    def constexprs(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.constexpr)


@dataclass(frozen=True)
class TritonLaunch:
    kernel: str
    grid: tuple[plan_mod.Expr, ...]
    num_warps: int = 4
    num_stages: int = 3
    constexprs: tuple[tuple[str, Any], ...] = ()

    @property
    def build(self) -> tuple:
        """What makes one compiled kernel: launches with the same build share a cubin."""
        return (self.kernel, self.num_warps, self.num_stages, self.constexprs)

    def as_launch(self) -> plan_mod.Launch:
        """The launch as kernels/plan.py resolves it: the block is num_warps warps; the shared memory is known
        only once compiled (`triton_compiler` checks it then)."""
        return plan_mod.Launch(self.kernel, self.grid, (self.num_warps * 32,), 0)

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "grid": list(self.grid),
            "num_warps": self.num_warps,
            "num_stages": self.num_stages,
            "constexprs": dict(self.constexprs),
        }


@dataclass
class TritonPlan:
    launches: list[TritonLaunch]
    kernels: dict[str, KernelDef] = field(default_factory=dict)


ASSUMED_ALIGNMENT = 16  # what Triton's tt.divisibility hint states


def aligned_arguments(problem) -> tuple[bool, ...]:
    """Per argument: a pointer whose address the problem promises a multiple of 16 bytes (its `alignment`)."""
    return tuple(
        arg.is_pointer and problem.promised_alignment(arg.name) % ASSUMED_ALIGNMENT == 0 for arg in problem.args
    )


def triton_types(problem) -> tuple[str, ...]:
    """The problem's arguments as Triton signature types, in order."""
    types = []
    for arg in problem.args:
        if arg.is_pointer:
            types.append("*" + _TRITON_POINTEES[arg.dtype])
        else:
            types.append(_TRITON_SCALARS[arg.dtype])
    return tuple(types)


# ---- parsing ----------------------------------------------------------------------------------------------------


def parse(source: str) -> ast.Module:
    """The syntax tree, within the size limits; SourceRejected with the line otherwise."""
    size = len(source.encode("utf-8", errors="replace"))
    if size > MAX_SOURCE_BYTES:
        raise SourceRejected(f"the file is {size:,} bytes; the limit is {MAX_SOURCE_BYTES:,}")
    lines = source.count("\n") + 1
    if lines > MAX_LINES:
        raise SourceRejected(f"the file has {lines:,} lines; the limit is {MAX_LINES:,}")
    if "\x00" in source:
        raise SourceRejected(f"line {source[: source.index(chr(0))].count(chr(10)) + 1}: a NUL character")
    try:
        tree = ast.parse(source, filename=FILENAME)
    except SyntaxError as exc:
        raise SourceRejected(f"line {exc.lineno}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise SourceRejected("the file nests expressions too deeply to read") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise SourceRejected(f"the file has {nodes:,} syntax nodes; the limit is {MAX_NODES:,}")
    return tree


def check(source: str) -> None:
    """The whitelist of issue 46. Raises SourceRejected("line N: reason") at the first thing outside it."""
    _Checker().module(parse(source))


def extract(source: str, problem=None) -> TritonPlan:
    """The plan (the module-level PLAN string) and the file's functions and their parameters, from the syntax
    tree alone; with `problem`, each launch checked against its kernel's parameters. Raises PlanError or
    SourceRejected (a file that does not parse)."""
    tree = parse(source)
    kernels: dict[str, KernelDef] = {}
    plan_text: str | None = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            kernels[node.name] = _kernel_def(node)
        elif _assigns(node) == PLAN_NAME:
            if plan_text is not None:
                raise PlanError(f"line {node.lineno}: {PLAN_NAME} is assigned twice; write one plan")
            value = node.value
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                raise PlanError(f"line {node.lineno}: {PLAN_NAME} must be a string literal holding TOML")
            plan_text = value.value
    if plan_text is None:
        raise PlanError(f'no launch plan: add a module-level {PLAN_NAME} = """ ... """ string (see the problem)')
    plan = TritonPlan(parse_plan(plan_text), kernels)
    for index, launch in enumerate(plan.launches):
        _check_launch(index, launch, kernels, problem)
    return plan


def _assigns(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    return None


def _kernel_def(node: ast.FunctionDef) -> KernelDef:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    params = tuple(
        Param(a.arg, _is_constexpr_annotation(a.annotation), i >= first_default) for i, a in enumerate(positional)
    )
    return KernelDef(node.name, node.lineno, params)


def _is_constexpr_annotation(node: ast.expr | None) -> bool:
    """Triton's own test: the annotation names `constexpr` (tl.constexpr, triton.language.constexpr, a string)."""
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split(".")[-1] == "constexpr"
    return _dotted(node).split(".")[-1] == "constexpr"


def _dotted(node: ast.expr) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


# ---- the plan ---------------------------------------------------------------------------------------------------


def parse_plan(text: str) -> list[TritonLaunch]:
    if len(text) > plan_mod.MAX_PLAN_CHARS:
        raise PlanError(f"the plan is {len(text):,} characters; the limit is {plan_mod.MAX_PLAN_CHARS:,}")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"the plan is not valid TOML: {exc}") from None
    except ValueError:
        raise PlanError("the plan holds a number too long to read") from None
    except RecursionError:
        raise PlanError("the plan nests arrays or tables too deeply") from None
    plan_mod._refuse_control_characters(table)
    unknown = set(table) - {"launch"}
    if unknown:
        raise PlanError(f"unknown plan keys {sorted(unknown)}; a Triton plan has [[launch]] tables only")
    launches = table.get("launch")
    if not isinstance(launches, list) or not launches or not all(isinstance(t, dict) for t in launches):
        raise PlanError("the plan needs at least one [[launch]] table")
    if len(launches) > plan_mod.MAX_LAUNCHES:
        raise PlanError(f"{len(launches)} launches; at most {plan_mod.MAX_LAUNCHES}")
    return [_parse_launch(i, t) for i, t in enumerate(launches)]


def _parse_launch(index: int, table: dict) -> TritonLaunch:
    where = f"launch {index + 1}"
    unknown = set(table) - {"kernel", "grid", "num_warps", "num_stages", "constexprs"}
    if unknown:
        hint = " (a Triton launch has num_warps, not block)" if "block" in unknown else ""
        raise PlanError(f"{where}: unknown keys {sorted(unknown)}{hint}")
    kernel = table.get("kernel")
    if not isinstance(kernel, str) or not plan_mod._IDENTIFIER.match(kernel):
        raise PlanError(f"{where}: 'kernel' must name a @triton.jit function of the file")
    grid = table.get("grid")
    if not isinstance(grid, list) or not 1 <= len(grid) <= 3:
        raise PlanError(f"{where}: 'grid' must be a list of 1 to 3 items")
    grid = tuple(plan_mod._check_expr_type(f"{where}: grid", v) for v in grid)
    num_warps = table.get("num_warps", 4)
    if type(num_warps) is not int or num_warps not in NUM_WARPS:
        raise PlanError(f"{where}: num_warps = {plan_mod._quote(num_warps)}; one of {', '.join(map(str, NUM_WARPS))}")
    num_stages = table.get("num_stages", 3)
    if type(num_stages) is not int or not 1 <= num_stages <= MAX_NUM_STAGES:
        raise PlanError(f"{where}: num_stages = {plan_mod._quote(num_stages)}; an integer 1..{MAX_NUM_STAGES}")
    constexprs = table.get("constexprs", {})
    if not isinstance(constexprs, dict):
        raise PlanError(f"{where}: 'constexprs' must be a table such as {{ BLOCK_SIZE = 1024 }}")
    if len(constexprs) > MAX_CONSTEXPRS:
        raise PlanError(f"{where}: {len(constexprs)} constexprs; at most {MAX_CONSTEXPRS}")
    for name, value in constexprs.items():
        _check_constexpr_value(f"{where}: constexpr {name!r}", value)
    return TritonLaunch(kernel, grid, num_warps, num_stages, tuple(sorted(constexprs.items())))


def _check_constexpr_value(where: str, value: object) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if value.bit_length() >= MAX_INT_BITS:
            raise PlanError(f"{where}: {value} does not fit 64 bits")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PlanError(f"{where}: {value} is not a finite number")
        return
    if isinstance(value, str) and len(value) <= MAX_CONSTEXPR_STRING_CHARS:
        return
    raise PlanError(
        f"{where}: {plan_mod._quote(value)}; a constexpr is an integer, a float, true/false or a short string"
    )


def _check_launch(index: int, launch: TritonLaunch, kernels: dict[str, KernelDef], problem) -> None:
    where = f"launch {index + 1}"
    kernel = kernels.get(launch.kernel)
    if kernel is None:
        known = ", ".join(repr(k) for k in kernels) or "none"
        raise PlanError(f"{where}: no function {launch.kernel!r} in the file (functions: {known})")
    given = dict(launch.constexprs)
    for name in given:
        if name not in kernel.constexprs:
            what = "a kernel argument" if name in kernel.arguments else "not a parameter"
            raise PlanError(
                f"{where}: constexpr {name!r} of {kernel.name} (line {kernel.line}) is {what}; "
                "only parameters annotated tl.constexpr take plan values"
            )
    missing = [p.name for p in kernel.params if p.constexpr and not p.has_default and p.name not in given]
    if missing:
        raise PlanError(f"{where}: {kernel.name} needs constexpr values for {', '.join(missing)} in 'constexprs'")
    if problem is not None and len(kernel.arguments) != len(problem.args):
        wanted = problem.signature() if hasattr(problem, "signature") else ", ".join(a.name for a in problem.args)
        raise PlanError(
            f"{where}: {kernel.name} (line {kernel.line}) takes {len(kernel.arguments)} arguments besides its "
            f"constexprs ({', '.join(kernel.arguments) or 'none'}); the problem passes {len(problem.args)}: {wanted}"
        )


# ---- the whitelist ----------------------------------------------------------------------------------------------


class _Checker:
    """Walks the module once; `bound` maps each module-level name to what it is ("triton", "triton.language",
    "math", "triton.jit", "triton.language.<name>", "math.<name>", "constant", "kernel")."""

    def __init__(self):
        self.bound: dict[str, str] = {}
        self.inner: set[int] = set()
        self.functions = 0
        self.constants = 0

    @staticmethod
    def refuse(node: ast.AST, reason: str) -> None:
        raise SourceRejected(f"line {getattr(node, 'lineno', 1)}: {reason}")

    def bind(self, node: ast.AST, name: str, what: str) -> None:
        if name.startswith("__"):
            self.refuse(node, f"the name {name!r} is refused (names starting with two underscores are Python's)")
        if name in self.bound:
            self.refuse(node, f"{name!r} is bound twice; each module-level name is bound once")
        self.bound[name] = what

    def module(self, tree: ast.Module) -> None:
        for position, node in enumerate(tree.body):
            if isinstance(node, ast.Import):
                self.import_(node)
            elif isinstance(node, ast.ImportFrom):
                self.import_from(node)
            elif isinstance(node, ast.FunctionDef):
                self.function(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                self.constant(node)
            elif (
                position == 0
                and isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                continue  # the module's docstring
            else:
                self.refuse(
                    node,
                    f"{_describe(node)} at the top level; a Triton file holds only imports of triton, "
                    "triton.language and math, constants, @triton.jit functions and the PLAN string",
                )

    def import_(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in MODULES:
                self.refuse(node, f"import of {alias.name!r}; only {', '.join(MODULES)} may be imported")
            if alias.asname:
                self.bind(node, alias.asname, alias.name)
            else:
                top = alias.name.split(".")[0]
                if self.bound.get(top) != top:
                    self.bind(node, top, top)

    def import_from(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or module not in (*MODULES, *LIBDEVICE_MODULES):
            self.refuse(node, f"import from {'.' * node.level}{module!r}; only {', '.join(MODULES)} may be imported")
        for alias in node.names:
            name = alias.name
            if name == "*":
                self.refuse(node, "import *; import the names you use")
            if module == "triton":
                allowed = TRITON_NAMES
            elif module in LIBDEVICE_MODULES:
                allowed = ("libdevice",)
            elif module == "triton.language":
                allowed = None if name not in LANGUAGE_MODULES or name in LANGUAGE_NAMESPACES else ()
            else:
                allowed = None
            if name.startswith("_") or (allowed is not None and name not in allowed):
                shown = ", ".join(allowed) if allowed else "public names that are not modules"
                self.refuse(node, f"import of {name!r} from {module}; allowed: {shown}")
            self.bind(node, alias.asname or name, f"{module}.{name}")

    def constant(self, node: ast.Assign | ast.AnnAssign) -> None:
        name = _assigns(node)
        if name is None:
            self.refuse(node, "a module-level assignment must bind one name to a literal")
        if isinstance(node, ast.AnnAssign) and self.resolve(node.annotation) != "triton.language.constexpr":
            self.refuse(node, f"{name}: the only annotation of a constant is tl.constexpr")
        self.constants += 1
        if self.constants > MAX_CONSTANTS:
            self.refuse(node, f"more than {MAX_CONSTANTS} constants")
        value = node.value
        if name == PLAN_NAME:
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                self.refuse(node, f"{PLAN_NAME} must be a string literal holding the TOML plan")
        elif (
            isinstance(value, ast.Call)
            and self.resolve(value.func) == "triton.language.constexpr"
            and len(value.args) == 1
            and not value.keywords
        ):
            self.literal(value.args[0], f"{name} = tl.constexpr(...)")
        else:
            self.literal(value, name)
        self.bind(node, name, "constant")

    def literal(self, node: ast.expr, where: str, allow_tuple: bool = True) -> None:
        """A number, string, True/False/None, a negated number, or a tuple of these."""
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() >= MAX_INT_BITS:
                self.refuse(node, f"{where}: the integer does not fit 64 bits")
            if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
                self.refuse(node, f"{where}: a string of {len(value):,} characters; at most {MAX_STRING_CHARS}")
            if value is None or isinstance(value, (bool, int, float, str)):
                return
        elif (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, (ast.USub, ast.UAdd))
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float)
        ):
            return self.literal(node.operand, where, allow_tuple=False)
        elif isinstance(node, ast.Tuple) and allow_tuple and len(node.elts) <= 64:
            for item in node.elts:
                self.literal(item, where, allow_tuple=False)
            return
        self.refuse(node, f"{where}: {_describe(node)} where a literal must stand (a number, a string, True, None)")

    def resolve(self, node: ast.expr) -> str:
        """What a dotted name means through the module's imports ("tl.constexpr" -> "triton.language.constexpr")."""
        dotted = _dotted(node)
        if not dotted:
            return ""
        head, _, rest = dotted.partition(".")
        base = self.bound.get(head)
        if base is None or base in ("constant", "kernel"):
            return dotted
        return f"{base}.{rest}" if rest else base

    def function(self, node: ast.FunctionDef) -> None:
        self.functions += 1
        if self.functions > MAX_FUNCTIONS:
            self.refuse(node, f"more than {MAX_FUNCTIONS} functions")
        if len(node.decorator_list) != 1:
            first = node.decorator_list[0] if node.decorator_list else node
            self.refuse(first, f"{node.name}: a function of a Triton file has exactly one decorator, @triton.jit")
        self.decorator(node.name, node.decorator_list[0])
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs:
            self.refuse(node, f"{node.name}: *args, **kwargs and keyword-only parameters are refused")
        for arg in (*args.posonlyargs, *args.args):
            if arg.annotation is not None and not self.annotation_ok(arg.annotation):
                self.refuse(arg, f"{node.name}: the annotation of {arg.arg!r} must be tl.constexpr or a literal")
            if arg.arg.startswith("__"):
                self.refuse(arg, f"{node.name}: the parameter name {arg.arg!r} is refused")
        for default in args.defaults:
            self.literal(default, f"{node.name}: a default value")
        if node.returns is not None:
            self.refuse(node, f"{node.name}: a return annotation is refused")
        self.bind(node, node.name, "kernel")
        nodes = [inner for statement in node.body for inner in ast.walk(statement)]
        # Names and attributes that are the object of a further attribute (`tl` and `tl.math` in tl.math.exp): the
        # outermost chain is the one checked.
        self.inner = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
        for inner in nodes:
            self.kernel_node(node.name, inner)

    def annotation_ok(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return len(node.value) <= MAX_STRING_CHARS
        return self.resolve(node) == "triton.language.constexpr"

    def decorator(self, name: str, node: ast.expr) -> None:
        target = node.func if isinstance(node, ast.Call) else node
        if self.resolve(target) != "triton.jit":
            self.refuse(node, f"{name}: the decorator {_dotted(target) or _describe(target)!r} is not triton.jit")
        if isinstance(node, ast.Call):
            if node.args:
                self.refuse(node, f"{name}: triton.jit takes keyword arguments only here")
            for keyword in node.keywords:
                if keyword.arg not in JIT_KEYWORDS:
                    self.refuse(node, f"{name}: triton.jit({keyword.arg}=...) is refused; allowed: {JIT_KEYWORDS}")
                if isinstance(keyword.value, ast.List):
                    for item in keyword.value.elts:
                        self.literal(item, f"{name}: triton.jit({keyword.arg}=...)")
                else:
                    self.literal(keyword.value, f"{name}: triton.jit({keyword.arg}=...)")

    def kernel_node(self, kernel: str, node: ast.AST) -> None:
        where = f"{kernel}: "
        refused = _REFUSED_IN_KERNELS.get(type(node))
        if refused:
            self.refuse(node, f"{where}{refused} inside a kernel is refused")
        if isinstance(node, ast.Name):
            if node.id.startswith("__") or node.id in REFUSED_NAMES:
                self.refuse(node, f"{where}the name {node.id!r} is refused in kernels")
            if id(node) not in self.inner:
                self.chain(where, node)
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                self.refuse(node, f"{where}the attribute {node.attr!r} is refused (private and special attributes)")
            if id(node) not in self.inner:
                self.chain(where, node)
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
                self.refuse(node, f"{where}a string of {len(value):,} characters; at most {MAX_STRING_CHARS}")
            if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() >= MAX_INT_BITS:
                self.refuse(node, f"{where}an integer that does not fit 64 bits")
            if isinstance(value, bytes):
                self.refuse(node, f"{where}a bytes literal is refused")
        elif isinstance(node, ast.keyword) and node.arg is None:
            self.refuse(node.value, f"{where}**keywords are refused")
        elif isinstance(node, ast.Call) and self.resolve(node.func) == "triton.language.static_range":
            for bound in node.args:
                if isinstance(bound, ast.Constant) and type(bound.value) is int and bound.value > MAX_STATIC_UNROLL:
                    self.refuse(
                        node,
                        f"{where}tl.static_range unrolls {bound.value:,} times; at most {MAX_STATIC_UNROLL:,} "
                        "(use range for a loop that is not unrolled)",
                    )

    def chain(self, where: str, node: ast.Name | ast.Attribute) -> None:
        """An outermost name or attribute chain of a kernel, through the module's imports: under triton.language only
        through its namespaces and never ending at a module; triton.X and math.X one step only; no attribute of the
        file's kernels and constants; no module as a value."""
        dotted = _dotted(node)
        if not dotted:
            return  # a chain on a call's or a subscript's result: its parts are checked where they stand
        head = dotted.split(".")[0]
        binding = self.bound.get(head)
        meaning = self.resolve(node)
        parts = meaning.split(".")
        refused = ""
        if binding in ("kernel", "constant") and "." in dotted:
            refused = f"attributes of {head!r} are refused in kernels"
        elif meaning in MODULES or meaning in LIBDEVICE_MODULES:
            refused = f"the module {dotted} as a value is refused; use its functions"
        elif meaning.startswith("triton.language."):
            rest = parts[2:]
            namespace, last = ".".join(rest[:-1]), rest[-1]
            through_module = any(part in LANGUAGE_MODULES for part in rest[:-1])
            if through_module and namespace not in LANGUAGE_NAMESPACES:
                refused = f"{dotted} reaches into tl.{namespace}; kernels use tl.X, tl.math.X, libdevice.X"
            elif last in LANGUAGE_MODULES:
                refused = f"the module {dotted} as a value is refused; use its functions"
        elif meaning.startswith("triton.") and (len(parts) != 2 or parts[1] not in TRITON_NAMES):
            refused = f"{dotted} is refused; kernels use triton.language"
        elif meaning.startswith("math.") and binding is not None and len(parts) != 2:
            refused = f"{dotted} is refused; kernels use math.X"
        if refused:
            self.refuse(node, where + refused)


def _describe(node: ast.AST) -> str:
    names = {
        ast.Expr: "an expression statement",
        ast.If: "an if statement",
        ast.For: "a for loop",
        ast.While: "a while loop",
        ast.With: "a with statement",
        ast.Try: "a try statement",
        ast.ClassDef: "a class",
        ast.AsyncFunctionDef: "an async function",
        ast.Call: "a call",
        ast.Name: "a name",
        ast.Attribute: "an attribute",
        ast.Lambda: "a lambda",
        ast.BinOp: "an arithmetic expression",
        ast.AugAssign: "an augmented assignment",
        ast.Delete: "del",
        ast.Global: "a global statement",
        ast.Raise: "raise",
        ast.Assert: "assert",
        ast.Match: "match",
        ast.List: "a list",
        ast.Dict: "a dict",
        ast.Subscript: "a subscript",
    }
    return names.get(type(node), type(node).__name__)

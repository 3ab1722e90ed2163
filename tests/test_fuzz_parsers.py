"""Property tests (issue 20): whatever text a reader sends, the launch-plan parser answers a plan or a
PlanError and the source screen passes or raises SourceRejected; never another exception."""

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels import plan as plan_mod
from kernels.source import SourceRejected, screen, tokens

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SIZES = [{"M": 7, "N": 3, "K": 1 << 20}]

# Fragments of TOML and of plan expressions, so that examples reach past the TOML reader.
_TOML_BITS = st.sampled_from(
    ["[", "]", "{", "}", "=", ",", '"', "'", "\n", " ", "[[launch]]", "kernel", "grid", "block", "shared_bytes",
     "1", "0", "-1", "1e400", "9" * 5000, "true", "\\u0000", "M", "N", "cdiv(", "min(", ")", "//", "*", "k<1,2>"]
)  # fmt: skip
_EXPR = st.text(alphabet="MNK0123456789+-*/%() ,cdivminax_.e\\x\x00", max_size=220)
_VALUE = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    _EXPR.map(lambda e: '"' + e.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.lists(st.integers(min_value=-5, max_value=5000).map(str) | _EXPR.map(repr), max_size=4).map(
        lambda items: "[" + ", ".join(items) + "]"
    ),
    st.lists(_TOML_BITS, max_size=30).map("".join),
)


def _check(source: str) -> None:
    with contextlib.suppress(plan_mod.PlanError):
        plan_mod.resolve_all(plan_mod.extract_plan(source), SIZES)


@FUZZ
@given(st.text(max_size=400))
def test_any_text_in_a_plan_block_is_a_plan_or_a_plan_error(body):
    _check(f"/* @plan\n{body}\n*/")


@FUZZ
@given(st.lists(_TOML_BITS, max_size=80).map("".join))
def test_any_toml_like_text_is_a_plan_or_a_plan_error(body):
    _check(f"/* @plan\n{body}\n*/")


@FUZZ
@given(kernel=_VALUE, grid=_VALUE, block=_VALUE, shared=_VALUE, extra=st.sampled_from(["", "[[launch]]", "x = 1"]))
def test_any_launch_values_are_a_plan_or_a_plan_error(kernel, grid, block, shared, extra):
    body = f"[[launch]]\nkernel = {kernel}\ngrid = {grid}\nblock = {block}\nshared_bytes = {shared}\n{extra}"
    _check(f"/* @plan\n{body}\n*/")


@FUZZ
@given(_EXPR)
def test_any_expression_evaluates_or_is_a_plan_error(expr):
    with contextlib.suppress(plan_mod.PlanError):
        plan_mod.evaluate(expr, SIZES[0])


_SOURCE_BITS = st.sampled_from(
    ["#", "%:", "include", "include_next", "import", "embed", "__has_include", " ", "\t", "\\\n", "\n", "/*",
     "*/", "//", '"', "'", "<", ">", "cuda_fp16.h", "/etc/passwd", "R\"(", ")\"", "x", "\x00", "é", "\ud800",
     "1'", "0x1'F", "u8", "L", "\r", "\\ \n"]
)  # fmt: skip


@FUZZ
@given(st.one_of(st.text(max_size=600), st.lists(_SOURCE_BITS, max_size=120).map("".join)))
def test_the_source_screen_passes_or_rejects_any_text(source):
    with contextlib.suppress(SourceRejected):
        screen(source)


@FUZZ
@given(st.one_of(st.text(max_size=600), st.lists(_SOURCE_BITS, max_size=120).map("".join)))
def test_the_tokens_cut_the_spliced_text_in_order(source):
    """Nothing is lost or read twice: the tokens, end to end, are the text with its line splices joined."""
    found = list(tokens(source))
    assert "".join(t.text for t in found) == source.replace("\r\n", "\n").replace("\\\n", "")
    assert [t.line for t in found] == sorted(t.line for t in found)

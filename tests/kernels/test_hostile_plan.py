"""Hostile launch plans (issue 20): whatever a reader types, the parser answers a Plan or a PlanError."""

import pytest

from kernels.plan import PlanError, extract_plan


def _plan(body: str) -> str:
    return f"__global__ void k() {{}}\n/* @plan\n{body}\n*/\n"


@pytest.mark.parametrize("depth", [1_000, 30_000])  # deeper is past MAX_PLAN_CHARS
def test_deeply_nested_arrays_are_a_plan_error_not_a_crash(depth):
    nested = "[" * depth + "]" * depth
    with pytest.raises(PlanError, match="nest"):
        extract_plan(_plan(f"[[launch]]\nkernel = 'k'\ngrid = {nested}\nblock = [1]"))


def test_deeply_nested_inline_tables_are_a_plan_error_not_a_crash():
    nested = "{a = " * 5_000 + "1" + "}" * 5_000
    with pytest.raises(PlanError, match="nest"):
        extract_plan(_plan(f"[[launch]]\nkernel = 'k'\ngrid = [1]\nblock = [1]\nshared_bytes = {nested}"))


def test_a_long_wrong_value_is_quoted_short():
    with pytest.raises(PlanError) as raised:
        extract_plan(_plan(f"[[launch]]\nkernel = 'k'\ngrid = [[{', '.join(['1'] * 10_000)}]]\nblock = [1]"))
    assert "neither an integer" in str(raised.value) and len(str(raised.value)) < 300


def test_an_integer_past_pythons_digit_limit_is_a_plan_error():
    with pytest.raises(PlanError, match="too long"):
        extract_plan(_plan(f"[[launch]]\nkernel = 'k'\ngrid = [{'9' * 5_000}]\nblock = [1]"))


@pytest.mark.parametrize("launch", ["launch = [1]", "launch = [{kernel = 'k', grid = [1], block = [1]}, 'x']"])
def test_launch_values_that_are_not_tables_are_a_plan_error(launch):
    with pytest.raises(PlanError, match=r"\[\[launch\]\] tables"):
        extract_plan(_plan(launch))


def test_a_source_with_a_lone_surrogate_is_rejected_not_a_crash():
    from kernels.source import SourceRejected, screen

    with pytest.raises(SourceRejected, match="Unicode"):
        screen("__global__ void k() {} // \ud800")

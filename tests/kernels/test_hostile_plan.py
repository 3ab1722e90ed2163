"""Hostile launch plans (issue 20): whatever a reader types, the parser answers a Plan or a PlanError."""

import pytest

from kernels.plan import PlanError, extract_plan


def _plan(body: str) -> str:
    return f"__global__ void k() {{}}\n/* @plan\n{body}\n*/\n"


@pytest.mark.parametrize("depth", [1_000, 100_000])
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

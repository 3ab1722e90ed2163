"""Launch plans: extraction, the expression whitelist, and the hardware limits."""

import pytest

from kernels.plan import PlanError, evaluate, extract_plan, resolve

SIZES = {"M": 127, "N": 255, "K": 129}


def plan(body: str) -> str:
    return f"__global__ void k() {{}}\n/* @plan\n{body}\n*/\n"


@pytest.mark.parametrize(
    "expr, value",
    [
        (7, 7),
        ("cdiv(N, 128)", 2),
        ("cdiv(M, 128) * 128", 128),
        ("(128 * 8 + 8 * 128) * 4", 8192),
        ("min(M, 64) + max(N, K, 1)", 64 + 255),
        ("N // 2 - N % 2", 126),
        ("-M + 2 * M", 127),
    ],
)
def test_expressions(expr, value):
    assert evaluate(expr, SIZES) == value


@pytest.mark.parametrize(
    "expr, fragment",
    [
        ("X + 1", "unknown name"),
        ("N / 2", "use //"),
        ("N ** 2", "only integers"),
        ("__import__('os').system('true')", "only integers"),
        ("M.bit_length()", "only integers"),
        ("cdiv(N)", "two arguments"),
        ("cdiv(N, 0)", "positive divisor"),
        ("N // 0", "division by zero"),
        ("1.5 * N", "only integers"),
        ("[N][0]", "only integers"),
        ("lambda: 1", "only integers"),
        ("N +", "cannot parse"),
    ],
)
def test_rejected_expressions(expr, fragment):
    with pytest.raises(PlanError, match=fragment.replace("(", r"\(")):
        evaluate(expr, SIZES)


def test_extract_full_plan():
    launches = extract_plan(
        plan(
            '[[launch]]\nkernel = "k<128, 8>"\ngrid = ["cdiv(N, 128)", "M"]\nblock = [256]\nshared_bytes = "2 * 4096"\n'
            '[[launch]]\nkernel = "fix_up"\ngrid = [1]\nblock = [32, 4]\n'
        )
    )
    assert [launch.kernel for launch in launches] == ["k<128, 8>", "fix_up"]
    assert launches[0].base_name == "k"
    assert launches[1].shared_bytes == 0
    first = resolve(launches[0], SIZES)
    assert (first.grid, first.block, first.shared_bytes) == ((2, 127, 1), (256, 1, 1), 8192)


@pytest.mark.parametrize(
    "source, fragment",
    [
        ("__global__ void k() {}", "no launch plan"),
        (plan("[[launch]]\nkernel = 'k'\ngrid = [1]\nblock = [1]") * 2, "exactly one"),
        (plan("[[launch]\nkernel = 'k'"), "not valid TOML"),
        (plan("threads = 4"), "unknown plan keys"),
        (plan("[[launch]]\nkernel = 'k'\ngrid = [1]\nblock = [1]\nstream = 2"), "unknown keys"),
        (plan("[[launch]]\nkernel = 'k; system()'\ngrid = [1]\nblock = [1]"), "kernel name"),
        (plan("[[launch]]\nkernel = 'k'\ngrid = []\nblock = [1]"), "1 to 3 items"),
        (plan("[[launch]]\nkernel = 'k'\ngrid = [1, 1, 1, 1]\nblock = [1]"), "1 to 3 items"),
        (plan("[[launch]]\nkernel = 'k'\ngrid = [1.5]\nblock = [1]"), "neither an integer"),
        (plan("[[launch]]\nkernel = 'k'\ngrid = [true]\nblock = [1]"), "neither an integer"),
        (plan("[[launch]]\nkernel = 'k'\ngrid = [1]\nblock = [1]\n" * 9), "at most 8"),
    ],
)
def test_malformed_plans(source, fragment):
    with pytest.raises(PlanError, match=fragment):
        extract_plan(source)


@pytest.mark.parametrize(
    "grid, block, shared, arch, fragment",
    [
        (["2147483648"], [256], 0, "sm_90", r"grid\[0\]"),
        ([1, 65536], [256], 0, "sm_90", r"grid\[1\]"),
        (["N - 255"], [256], 0, "sm_90", r"grid\[0\] = 0"),
        ([1], [2048], 0, "sm_90", r"block\[0\]"),
        ([1], [32, 32, 2], 0, "sm_90", "2048 threads"),
        ([1], [1, 1, 65], 0, "sm_90", r"block\[2\]"),
        ([1], [256], 232449, "sm_90", "shared_bytes = 232449"),
        ([1], [256], 102400, "sm_89", "sm_89 allows"),
    ],
)
def test_hardware_limits(grid, block, shared, arch, fragment):
    (launch,) = extract_plan(
        plan(f"[[launch]]\nkernel = 'k'\ngrid = {grid!r}\nblock = {block!r}\nshared_bytes = {shared}")
    )
    with pytest.raises(PlanError, match=fragment):
        resolve(launch, SIZES, arch)


def test_limits_that_fit():
    (launch,) = extract_plan(
        plan("[[launch]]\nkernel = 'k'\ngrid = [2147483647, 65535, 65535]\nblock = [32, 32]\nshared_bytes = 232448")
    )
    assert resolve(launch, SIZES).shared_bytes == 227 * 1024

"""On the GPU, the issue-14 problems: each naive rung accepted and timed (memory-bound figures in GB/s against
the measured copy bandwidth, baselines that return arrays of their own checked), the known-bad kernels of
tests/kernels/bad/manifest.toml answered with their verdicts, and the judge's new machinery seen from outside:
workspace garbage, guard bands around workspaces, int32 / FP8 / BF16 poison, const BF16 inputs fingerprinted.

Run on the H200:  python3 -m pytest tests/kernels -m gpu -p no:django --confcutdir=tests/kernels
"""

import tomllib
from dataclasses import replace

import pytest

from kernels import compiler, problems
from kernels.judge import JudgeOptions
from kernels.results import Verdict
from kernels.tools.ladder import REFERENCE_DIR

from .conftest import BAD, read

pytestmark = pytest.mark.gpu

NEW = ["transpose", "reduce_sum", "prefix_sum", "softmax", "rmsnorm", "swiglu", "gemv", "fp8_quant"]
CHECK_ONLY = JudgeOptions(bench=False, timeout_s=120)
QUICK_BENCH = JudgeOptions(time_budget_s=1.0, min_rounds=3, timeout_s=300)
MANIFEST = tomllib.loads((BAD / "manifest.toml").read_text())["bad"] if (BAD / "manifest.toml").exists() else []


def judge_source(gpu_judge, source, problem, options=CHECK_ONLY):
    compiled = compiler.compile_submission(source, problem)
    assert compiled.ok, compiled.log
    return gpu_judge.judge(compiled, options)


@pytest.mark.parametrize("name", NEW)
def test_naive_rung_is_accepted_and_timed_in_gb_per_s(gpu_judge, name):
    problem = problems.load(name)
    result = judge_source(gpu_judge, read(REFERENCE_DIR / name / "01_naive.cu"), name, QUICK_BENCH)
    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)
    assert len(result.checks) == len(problem.tests) and all(c.passed for c in result.checks)
    assert len(result.benchmarks) == len(problem.benchmarks)
    copy_gbps = result.ceilings.copy_gbps
    for bench in result.benchmarks:
        assert bench.unit == "GB/s" and bench.roofline_gbps == copy_gbps
        assert bench.pct_of_roofline == pytest.approx(100 * bench.gbps / copy_gbps)
        assert bench.gbps == pytest.approx(bench.bytes_moved / (bench.candidate.median_ms * 1e-3) / 1e9)
        assert bench.baseline_gbps == pytest.approx(bench.bytes_moved / (bench.baseline.median_ms * 1e-3) / 1e9)
        assert bench.candidate.samples >= 3 and bench.rounds_checked == bench.candidate.samples
        assert 0 < bench.pct_of_roofline <= 105 and bench.pct_of_baseline > 0
    assert "GB/s" in result.message and result.to_json()
    print(f"{name} naive: {result.message}")


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["file"].removesuffix(".cu"))
def test_known_bad_kernel_gets_its_verdict(gpu_judge, entry):
    compiled = compiler.compile_submission(read(BAD / entry["file"]), entry["problem"])
    # `bench = true`: a mistake that only the timed rounds' checks can catch (it shows at benchmark sizes only).
    timeout_s = entry.get("timeout_s", 120)
    options = replace(QUICK_BENCH if entry.get("bench") else CHECK_ONLY, timeout_s=timeout_s)
    result = gpu_judge.judge(compiled, options)  # a plan refused on the CPU comes back with its compile verdict
    print(f"{entry['file']}: {result.verdict.value}: {result.message[:300]}")
    assert result.verdict.value == entry["verdict"], (entry["what"], result.message, result.error)
    assert entry.get("message", "") in result.message, result.message


def test_every_problem_of_issue_14_has_bad_kernels():
    assert {e["problem"] for e in MANIFEST} >= set(NEW)


# ---- the machinery, with small kernels written here ----------------------------------------------------------

_SUM_INTO_WORKSPACE = r"""
__global__ void zero_workspace(int N, const float* x, float* out, float* workspace) { workspace[0] = 0.0f; }

__global__ void sum_into_workspace(int N, const float* x, float* out, float* workspace) {
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < N; i += (long long)gridDim.x * blockDim.x)
        s += x[i];
    for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_down_sync(0xffffffffu, s, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(workspace, s);
    if (OUT_OF_BOUNDS && blockIdx.x == 0 && threadIdx.x == 0) workspace[65536] = 1.0f;
}

__global__ void copy_out(int N, const float* x, float* out, float* workspace) { out[0] = workspace[0]; }
"""
_ZERO_LAUNCH = """
[[launch]]
kernel = "zero_workspace"
grid = [1]
block = [1]
"""
_SUM_LAUNCHES = """
[[launch]]
kernel = "sum_into_workspace"
grid = ["min(cdiv(N, 256), 1024)"]
block = [256]

[[launch]]
kernel = "copy_out"
grid = [1]
block = [1]
"""


def sum_source(zero_first: bool, out_of_bounds: bool = False) -> str:
    plan = (_ZERO_LAUNCH if zero_first else "") + _SUM_LAUNCHES
    return f"#define OUT_OF_BOUNDS {int(out_of_bounds)}\n{_SUM_INTO_WORKSPACE}\n/* @plan\n{plan}*/\n"


def test_a_kernel_that_zeroes_its_workspace_is_accepted(gpu_judge):
    result = judge_source(gpu_judge, sum_source(zero_first=True), "reduce_sum")
    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)


def test_a_kernel_that_counts_on_a_zeroed_workspace_fails(gpu_judge):
    """The workspace holds garbage at every launch: summing into it without zeroing it first is wrong."""
    result = judge_source(gpu_judge, sum_source(zero_first=False), "reduce_sum", JudgeOptions(bench=False, seed=1))
    assert result.verdict is Verdict.WRONG_ANSWER, (result.message, result.error)


def test_writing_past_the_workspace_is_out_of_bounds(gpu_judge):
    result = judge_source(gpu_judge, sum_source(zero_first=True, out_of_bounds=True), "reduce_sum")
    assert result.verdict is Verdict.WRONG_ANSWER and "wrote out of bounds, next to workspace" in result.message


def nothing(problem: str) -> str:
    """A kernel with the problem's signature that writes nothing."""
    return f"""
__global__ void nothing({problems.load(problem).signature()}) {{}}
/* @plan
[[launch]]
kernel = "nothing"
grid = [1]
block = [32]
*/
""".replace("__nv_bfloat16", "unsigned short").replace("__nv_fp8_e4m3", "unsigned char")


@pytest.mark.parametrize(
    "problem, fragments",
    [
        ("prefix_sum", ["1 of 1 elements differ (compared bit for bit)", "1 elements still 0xA5A5A5A5"]),
        ("fp8_quant", ["q: 1 of 1 elements differ", "1 elements still NaN (never written?); scales: 1 of 1"]),
        ("swiglu", ["1 elements NaN/Inf (never written?)"]),
        ("transpose", ["1 of 1 elements differ (compared bit for bit)", "1 elements still NaN (never written?)"]),
    ],
)
def test_unwritten_outputs_show_their_types_poison(gpu_judge, problem, fragments):
    result = judge_source(gpu_judge, nothing(problem), problem)
    assert result.verdict is Verdict.WRONG_ANSWER, (result.message, result.error)
    for fragment in fragments:
        assert fragment in result.checks[0].message, result.checks[0].message


def test_writing_into_a_const_bf16_input_is_caught(gpu_judge):
    source = read(REFERENCE_DIR / "rmsnorm" / "01_naive.cu").replace(
        "    if (r >= rows) return;", "    if (r >= rows) return;\n    if (r == 0) ((unsigned short*)x)[0] ^= 1;", 1
    )
    assert source != read(REFERENCE_DIR / "rmsnorm" / "01_naive.cu")
    result = judge_source(gpu_judge, source, "rmsnorm")
    assert result.verdict is Verdict.WRONG_ANSWER and "the kernel modified its input x" in result.message

"""On the GPU: examples accepted, every known-bad submission answered with its verdict, the worker going on.

Run on the H200:  python3 -m pytest tests/kernels -m gpu -p no:django --confcutdir=tests/kernels
"""

import pytest

from kernels import compiler, problems
from kernels.judge import JudgeOptions
from kernels.results import Verdict

from .conftest import BAD, GOOD, read

pytestmark = pytest.mark.gpu

CHECK_ONLY = JudgeOptions(bench=False, timeout_s=60)
QUICK_BENCH = JudgeOptions(time_budget_s=1.0, min_rounds=3, timeout_s=120)


def judge(gpu_judge, path, problem, options=CHECK_ONLY):
    compiled = compiler.compile_submission(read(path), problem)
    assert compiled.ok, compiled.log
    return gpu_judge.judge(compiled, options)


@pytest.mark.parametrize("problem", problems.available())
def test_example_accepted_and_timed(gpu_judge, problem):
    result = judge(gpu_judge, problems.PROBLEMS_DIR / problem / "example.cu", problem, QUICK_BENCH)
    assert result.verdict is Verdict.ACCEPTED, (result.message, result.error)
    assert all(c.passed for c in result.checks) and len(result.checks) == len(problems.load(problem).tests)
    assert len(result.benchmarks) == len(problems.load(problem).benchmarks)
    for bench in result.benchmarks:
        assert bench.candidate.samples >= 3 and bench.rounds_checked == bench.candidate.samples
        assert bench.pct_of_baseline > 0 and 0 < bench.pct_of_roofline <= 105
    assert result.kernels[0].registers > 0 and result.kernels[0].max_threads_per_block > 0
    assert result.telemetry.gpu_name and result.ceilings.copy_gbps > 1000
    t = result.telemetry  # from NVML, read right after the timed rounds
    assert 0 < t.sm_clock_mhz <= t.max_sm_clock_mhz and t.temperature_c > 0 and t.power_w > 0 and t.driver_version
    assert result.to_json()


@pytest.mark.parametrize(
    "name, problem, verdict, fragment, options",
    [
        ("wrong_result", "sgemm", Verdict.WRONG_ANSWER, "elements wrong", CHECK_ONLY),
        ("partial_write", "vector_add", Verdict.WRONG_ANSWER, "NaN/Inf (never written?)", CHECK_ONLY),
        ("out_of_bounds", "vector_add", Verdict.WRONG_ANSWER, "wrote out of bounds", CHECK_ONLY),
        ("race", "sgemm", Verdict.WRONG_ANSWER, "wrong", CHECK_ONLY),
        ("sgemm_tf32", "sgemm", Verdict.WRONG_ANSWER, "rel_err", CHECK_ONLY),
        ("hgemm_fp16_accumulate", "hgemm", Verdict.WRONG_ANSWER, "rel_err", CHECK_ONLY),
        ("replay_cache", "sgemm", Verdict.WRONG_ANSWER, "4-byte alignment", QUICK_BENCH),
        ("skip_repeated", "sgemm", Verdict.WRONG_ANSWER, "timed round", QUICK_BENCH),
        ("tamper_inputs", "sgemm", Verdict.WRONG_ANSWER, "the kernel modified its input A", CHECK_ONLY),
        ("too_many_threads", "vector_add", Verdict.PLAN_ERROR, "at most 256", CHECK_ONLY),
        ("printf_flood", "vector_add", Verdict.OUTPUT_LIMIT, "printed", CHECK_ONLY),
        ("trap", "vector_add", Verdict.RUNTIME_ERROR, "CUDA error", CHECK_ONLY),
        ("illegal_address", "vector_add", Verdict.RUNTIME_ERROR, "CUDA error", CHECK_ONLY),
        ("infinite_loop", "vector_add", Verdict.TIMED_OUT, "no answer within", JudgeOptions(bench=False, timeout_s=10)),
    ],
)
def test_bad_submission_then_a_good_one(gpu_judge, name, problem, verdict, fragment, options):
    result = judge(gpu_judge, BAD / f"{name}.cu", problem, options)
    assert result.verdict is verdict, (result.message, result.error)
    assert fragment in result.message
    # The worker (replaced if it had to be) judges the next submission normally.
    follow_up = judge(gpu_judge, problems.PROBLEMS_DIR / "vector_add" / "example.cu", "vector_add")
    assert follow_up.verdict is Verdict.ACCEPTED, (follow_up.message, follow_up.error)


@pytest.mark.parametrize(
    "wrong_round, options",
    [
        (1, JudgeOptions()),
        (3, JudgeOptions()),
        # With max_rounds 3 the third round is the last: no job stops before three rounds (kernels/samples.py).
        (3, JudgeOptions(max_rounds=3)),
    ],
    ids=["first", "third", "last"],
)
def test_a_kernel_wrong_in_one_timed_round_is_caught_there(gpu_judge, wrong_round, options):
    """However few rounds the stopping rule asks for, every timed round is checked on fresh inputs."""
    template = read(BAD / "sgemm_wrong_in_one_timed_round.cu")
    source = template.replace("#define WRONG_IN_TIMED_ROUND 1", f"#define WRONG_IN_TIMED_ROUND {wrong_round}")
    compiled = compiler.compile_submission(source, "sgemm")
    assert compiled.ok, compiled.log
    result = gpu_judge.judge(compiled, options)
    assert result.verdict is Verdict.WRONG_ANSWER, (result.message, result.error)
    assert f"timed round {wrong_round} is wrong" in result.message, result.message


def test_the_attention_checks_fp32_reference_is_far_inside_the_tolerance_on_the_gpu(gpu_judge):
    """At benchmark-length rows (seq 4096 causal, 16384), cuBLAS's FP32 products (no TF32) keep the check's own
    reference within 1/50 of the tolerance of the float64 one (the CPU test checks the test shapes)."""
    outcome = gpu_judge.worker.call("kernels.tools.precision:attention_check_reference_job", None, timeout_s=300)
    assert outcome.value, outcome.error
    for row in outcome.value:
        assert row["worst_in_tolerances"] < 1 / 50 and row["norm_in_tolerances"] < 1 / 100, row


def test_workspace_garbage_is_the_same_on_the_gpu_and_the_cpu(gpu_judge):
    outcome = gpu_judge.worker.call("kernels.inputs:garbage_agreement_job", None, timeout_s=120)
    assert outcome.value, outcome.error
    assert all(row["same"] for row in outcome.value), outcome.value


def test_fingerprint_is_the_same_on_the_gpu_and_the_cpu(gpu_judge):
    outcome = gpu_judge.worker.call("kernels.fingerprint:agreement_job", None, timeout_s=120)
    assert outcome.value, outcome.error
    for row in outcome.value:
        assert row["gpu"] == row["cpu"] == row["gpu_again"], row


def test_naive_sgemm_is_slow_but_accepted(gpu_judge):
    result = judge(gpu_judge, GOOD / "sgemm_naive.cu", "sgemm", QUICK_BENCH)
    assert result.verdict is Verdict.ACCEPTED
    assert result.benchmarks[0].pct_of_baseline < 50


def test_tolerance_passes_fp32_and_fails_lower_precision(gpu_judge):
    """cuBLAS FP32 (and FP32-accumulating tensor cores) pass; TF32 operands and FP16 accumulation fail."""
    outcome = gpu_judge.worker.call("kernels.tools.precision:measure_job", None, timeout_s=300)
    assert outcome.value, outcome.error
    for row in outcome.value:
        must_pass = row["variant"] in ("cuBLAS FP32", "cuBLAS FP16 in, FP32 acc")
        assert row["passed"] == must_pass, row


def test_fixed_seed_reproduces_the_checks(gpu_judge):
    options = JudgeOptions(bench=False, seed=99, timeout_s=60)
    first = judge(gpu_judge, problems.PROBLEMS_DIR / "sgemm" / "example.cu", "sgemm", options)
    second = judge(gpu_judge, problems.PROBLEMS_DIR / "sgemm" / "example.cu", "sgemm", options)
    assert [c.rel_err for c in first.checks] == [c.rel_err for c in second.checks]
    other = judge(gpu_judge, problems.PROBLEMS_DIR / "sgemm" / "example.cu", "sgemm", JudgeOptions(bench=False))
    assert other.seed != 99


# Last: should its writes land on something the worker keeps, the tests before it have run.
def test_writes_past_the_guard_bands_are_not_accepted(gpu_judge):
    """A kernel spraying its (wrong) answer past C's far guard band, where a reference or a saved copy of
    the inputs might lie: the judge keeps neither while a kernel runs, so only the output decides. Unmapped
    memory there would be a runtime error instead; either way not accepted, and the worker goes on."""
    result = judge(gpu_judge, BAD / "spray_past_output.cu", "sgemm")
    print(f"spray_past_output: {result.verdict.value}: {result.message}")
    assert result.verdict in (Verdict.WRONG_ANSWER, Verdict.RUNTIME_ERROR), (result.message, result.error)
    if result.verdict is Verdict.WRONG_ANSWER:
        assert "wrong" in result.message or "out of bounds" in result.message, result.message
    follow_up = judge(gpu_judge, problems.PROBLEMS_DIR / "sgemm" / "example.cu", "sgemm")
    assert follow_up.verdict is Verdict.ACCEPTED, (follow_up.message, follow_up.error)

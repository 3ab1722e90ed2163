"""The result schema: JSON round trips, versioning."""

import json

import pytest

from kernels.results import (
    SCHEMA_VERSION,
    BenchResult,
    Ceilings,
    CompileResult,
    JudgeResult,
    KernelResources,
    ShapeCheck,
    Telemetry,
    TimingStats,
    Verdict,
)


def _judge_result() -> JudgeResult:
    stats = TimingStats(10, 2.5, 2.4, 2.6, 2.3, 2.5, 0.001)
    return JudgeResult(
        verdict=Verdict.ACCEPTED,
        message="ok",
        problem="sgemm",
        seed=42,
        checks=[
            ShapeCheck({"M": 1, "N": 1, "K": 1}, True, 1e-8, 1e-6),
            ShapeCheck(
                {"M": 3, "N": 3, "K": 3},
                False,
                None,
                1e-6,
                nonfinite_count=2,
                bad_count=2,
                first_bad_index=[0, 1],
                first_bad_value=None,
                first_bad_expected=0.5,
                message="x",
            ),
        ],
        benchmarks=[
            BenchResult(
                {"M": 4096, "N": 4096, "K": 4096},
                stats,
                stats,
                "cuBLAS",
                100.0,
                50.0,
                40.0,
                50.0,
                63.0,
                79.0,
                11,
                1e-6,
                2 * 4096**3,
                4 * 4 * 4096**2,
                flags=["noisy"],
            )
        ],
        kernels=[KernelResources("k<1>", "_Z1kILi1EEvv", registers=32, static_shared_bytes=0, local_bytes=0)],
        telemetry=Telemetry(gpu_name="NVIDIA H200", sm_clock_mhz=1980),
        ceilings=Ceilings(copy_gbps=4200.0, fp32_tflops=63.0),
        output="hi\n",
        output_bytes=3,
    )


def test_judge_result_round_trip():
    result = _judge_result()
    text = result.to_json()
    data = json.loads(text)
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["verdict"] == "accepted"
    assert data["benchmarks"][0]["candidate"]["median_ms"] == 2.5
    again = JudgeResult.from_json(text)
    assert again == result
    assert again.verdict is Verdict.ACCEPTED and again.passed
    assert again.benchmarks[0].candidate.iqr_ms == pytest.approx(0.2)


def test_compile_result_carries_the_cubin():
    result = CompileResult(
        Verdict.COMPILED,
        "ok",
        "sgemm",
        "sm_90",
        cubin=b"\x7fELF\x00\x01",
        lowered_names={"k": "k"},
        kernels=[KernelResources("k", "k", registers=8)],
        plan=[{"kernel": "k", "grid": ["cdiv(N, 2)"], "block": [32], "shared_bytes": 0}],
    )
    again = CompileResult.from_json(result.to_json())
    assert again == result and again.ok


def test_json_is_strict():
    """No NaN or Infinity: strict JSON parsers (PostgreSQL jsonb, browsers) must accept it."""
    json.loads(_judge_result().to_json(), parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))


def test_other_schema_version_is_refused():
    data = json.loads(_judge_result().to_json())
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValueError, match="schema_version"):
        JudgeResult.from_json(json.dumps(data))


def test_verdicts_that_poison_a_worker():
    assert JudgeResult(Verdict.RUNTIME_ERROR, "", "sgemm").poisons_worker
    assert not JudgeResult(Verdict.WRONG_ANSWER, "", "sgemm").poisons_worker

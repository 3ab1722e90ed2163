"""On the GPU: the worker's ceilings measured by its first child only, and handed to the later ones with the
device's identity; every job still in a child of its own.

Run on the H200:  python3 -m pytest tests/kernels/test_gpu_warm_ahead.py -m gpu -p no:django --confcutdir=tests/kernels
"""

import time

import pytest

from kernels import compiler, problems
from kernels.judge import GpuJudge, JudgeOptions
from kernels.results import Verdict

pytestmark = pytest.mark.gpu

QUICK_BENCH = JudgeOptions(time_budget_s=0.5, min_rounds=3, timeout_s=120)


@pytest.fixture(scope="module")
def compiled_example():
    compiled = compiler.compile_submission((problems.PROBLEMS_DIR / "sgemm" / "example.cu").read_text(), "sgemm")
    assert compiled.ok, compiled.log
    return compiled


def test_the_first_child_measures_and_the_next_ones_are_handed_the_ceilings(compiled_example):
    with GpuJudge(warm=True) as judge:
        assert judge.start() is None
        identity = judge.kept.identity
        results = [judge.judge(compiled_example, QUICK_BENCH) for _ in range(3)]

    assert all(r.verdict is Verdict.ACCEPTED for r in results), [r.message for r in results]
    assert judge.ceilings_measured == 1
    assert len({r.ceilings.measured_at for r in results}) == 1 and results[0].ceilings.copy_gbps > 1000
    assert results[0].ceilings.tensor_fp16_tflops and results[0].ceilings.tensor_bf16_tflops
    assert identity["uuid"] and identity["cuda_driver_version"] > 0 and identity["max_sm_clock_mhz"] > 0
    assert "driver_version" in identity  # NVML answered (it is part of the driver)
    assert isinstance(identity["pageable_memory_access"], bool)  # HMM (None only where the driver does not answer)


def test_ceilings_past_their_age_are_measured_again_before_a_job_not_during_one(compiled_example):
    with GpuJudge(warm=True, ceilings_max_age_s=0) as judge:
        judge.start()
        first = judge.judge(compiled_example, QUICK_BENCH)
        second = judge.judge(compiled_example, QUICK_BENCH)

    assert first.passed and second.passed
    assert first.ceilings.measured_at < second.ceilings.measured_at < time.time()
    # The second job's child measured them in its setup, before the job was sent.
    assert judge.ceilings_measured >= 2

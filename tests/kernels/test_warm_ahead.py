"""The GPU worker's children on the CPU (tests/kernels/standins.py): ceilings measured once per worker and
handed on, measured again on another device or past their age; a successor that imports and sets up during the
job, its GPU step waiting for the job's timed part (the device lock). Each job still gets a fresh child."""

import dataclasses
import json
import time

import pytest

from kernels import ceilings
from kernels.judge import GpuJudge, JudgeOptions
from kernels.payloads import SetupAnswer, SetupRequest
from kernels.results import CompileResult, Verdict

S = "tests.kernels.standins:"
COMPILED = CompileResult(verdict=Verdict.COMPILED, message="", problem="sgemm", arch="sm_90")


@pytest.fixture
def device(tmp_path, monkeypatch):
    """The stand-in device: its identity file and the log of ceiling measurements."""
    identity, log = tmp_path / "identity", tmp_path / "measured.log"
    identity.write_text("GPU-0")
    log.write_text("")
    monkeypatch.setenv("STANDIN_IDENTITY_FILE", str(identity))
    monkeypatch.setenv("STANDIN_MEASURE_LOG", str(log))
    return identity, log


def measurements(log) -> int:
    return len(log.read_text().split())


def run(judge: GpuJudge, job_s: float = 0.0):
    result = judge.judge(COMPILED, JudgeOptions(seed=1, time_budget_s=job_s, timeout_s=60))
    assert result.verdict is Verdict.ACCEPTED, result.error
    return result, json.loads(result.message)


def standin_judge(**options) -> GpuJudge:
    return GpuJudge(warm=True, job=S + "timed_job", warm_up=S + "ceilings_setup", **options)


def test_the_first_child_measures_the_ceilings_and_every_later_child_is_handed_them(device):
    _identity, log = device
    with standin_judge() as judge:
        assert judge.start() is None
        results = [run(judge) for _ in range(3)]

    assert measurements(log) == 1 and judge.ceilings_measured == 1
    stamps = {result.ceilings.measured_at for result, _ in results}
    assert len(stamps) == 1 and None not in stamps  # every result records the ceilings it used
    assert results[0][0].ceilings.copy_gbps == 4100.0
    assert len({times["pid"] for _, times in results}) == 3  # still a fresh child per job


def test_spares_released_during_the_first_job_are_handed_what_its_child_measured(device):
    # No start(): the first job's child measures in its setup, and spares import and are released into their
    # setups while that job runs, before the worker has read the job's answer.
    _identity, log = device
    with standin_judge() as judge:
        run(judge, job_s=4.0)
        run(judge)
        run(judge)

    assert judge.worker.setups_done >= 3  # spares did set up during the jobs
    assert measurements(log) == 1 and judge.ceilings_measured == 1


def test_a_child_on_another_device_identity_measures_again(device, caplog):
    identity, log = device
    with caplog.at_level("WARNING", logger="kernels.judge"), standin_judge() as judge:
        judge.start()
        identity.write_text("GPU-1")  # the driver or the clocks changed after the first child was set up
        first, _ = run(judge)
        second, _ = run(judge)  # its child, set up after the first job, found another device: measured
        third, _ = run(judge)  # handed what the second measured, on the device it runs on

    assert measurements(log) == 2 and judge.ceilings_measured == 2
    assert first.ceilings.measured_at < second.ceilings.measured_at == third.ceilings.measured_at
    assert judge.kept.identity == {"uuid": "GPU-1", "pageable_memory_access": False}
    # The worker says why it measured again, naming what changed.
    assert [r.getMessage() for r in caplog.records] == [
        "a child measured the ceilings again: device identity changed: uuid: 'GPU-0' -> 'GPU-1'"
    ]


def test_ceilings_past_their_age_are_measured_again_by_the_next_child(device):
    _identity, log = device
    with standin_judge(ceilings_max_age_s=0) as judge:
        judge.start()
        stamps = [run(judge)[0].ceilings.measured_at for _ in range(3)]

    assert stamps[0] < stamps[1] < stamps[2]  # each job's child measured its own
    assert measurements(log) >= 3  # (the last successor may be ended before its setup)


def test_a_child_that_idled_past_the_ceilings_age_is_replaced_by_one_that_measures(device):
    _identity, log = device
    with standin_judge(ceilings_max_age_s=4) as judge:
        judge.start()
        first, _ = run(judge)
        second, _ = run(judge)
        time.sleep(4.2)  # no job meanwhile: the child set up after the second job holds old ceilings
        third, _ = run(judge)

    assert first.ceilings.measured_at == second.ceilings.measured_at < third.ceilings.measured_at
    assert third.ceilings.measured_at > second.ceilings.measured_at + 4


def test_the_kept_ceilings_are_handed_on_while_fresh_and_not_after():
    kept = SetupAnswer(identity={"uuid": "GPU-0"}, ceilings={"copy_gbps": 1.0, "measured_at": 1000.0}, measured=True)

    fresh = ceilings.payload_for(kept, max_age_s=60, rehearse=["sgemm"], now=1059.0, device_lock="/tmp/x.lock")
    stale = ceilings.payload_for(kept, max_age_s=60, rehearse=None, now=1060.0)

    assert fresh == SetupRequest(
        ceilings=kept.ceilings,
        identity={"uuid": "GPU-0"},
        baselines=None,
        rehearse=("sgemm",),
        device_lock="/tmp/x.lock",
    )
    assert stale.ceilings is None and stale.identity == {"uuid": "GPU-0"} and stale.rehearse is None
    # The baseline choices outlive the ceilings' age: they depend on the device and library, not the clocks.
    chosen = {"sgemm:K=4096,M=4096,N=4096": {"name": "cuBLAS SGEMM", "tried_ms": {}}}
    with_baselines = dataclasses.replace(kept, baselines=chosen)
    assert ceilings.payload_for(with_baselines, 60, None, now=5000.0).baselines == chosen
    assert ceilings.payload_for(None, 60, None) == SetupRequest()


def test_a_child_keeps_handed_ceilings_only_on_the_device_they_were_measured_on():
    handed = SetupRequest(ceilings={"copy_gbps": 1.0, "measured_at": 5.0}, identity={"uuid": "GPU-0", "driver": "580"})
    measure = lambda: {"copy_gbps": 2.0, "measured_at": 9.0}  # noqa: E731

    same = ceilings.setup_answer(handed, {"uuid": "GPU-0", "driver": "580"}, measure)
    upgraded = ceilings.setup_answer(handed, {"uuid": "GPU-0", "driver": "590"}, measure)
    first = ceilings.setup_answer(None, {"uuid": "GPU-0"}, measure)

    assert (same.ceilings["copy_gbps"], same.measured, same.why_measured) == (1.0, False, "")
    assert (upgraded.ceilings["copy_gbps"], upgraded.measured) == (2.0, True)
    assert first.measured and first.identity == {"uuid": "GPU-0"}
    assert first.why_measured == "no ceilings handed on"
    assert upgraded.why_measured == "device identity changed: driver: '580' -> '590'"


def test_the_successor_sets_up_during_the_job_but_never_during_its_timed_part(device, monkeypatch):
    monkeypatch.setenv("STANDIN_SETUP_S", "0.3")
    # One spare: four importing at once on a loaded 2-core machine once took longer than the whole first job.
    with standin_judge(spares=1) as judge:
        judge.start()
        _, first = run(judge, job_s=5.0)  # the stand-in's whole job is its timed part
        _, second = run(judge, job_s=0.0)

    # The second job's child was started as the first job was sent, imported its modules and was released into its
    # setup before that job ended (on a loaded machine its imports may even finish before the job starts); the
    # setup's GPU step (holding the device lock shared) waited for the timed part to let go.
    assert second["pid"] != first["pid"]
    assert second["imported_at"] < second["setup_at"] < first["job_end"]
    assert second["step_at"] >= first["timed_end"]


def test_spares_released_during_a_job_rehearse_its_problem_not_every_problem(device):
    with standin_judge(spares=1) as judge:
        judge.start()
        _, first = run(judge, job_s=5.0)
        _, second = run(judge)

    assert first["rehearsed"] is None  # the first child, set up before any problem was known: every problem
    assert second["setup_at"] < first["job_end"]  # released while the first job ran
    assert second["rehearsed"] == ["sgemm"]


def test_without_warming_ahead_the_successor_starts_only_after_the_job(device):
    with standin_judge(warm_ahead=False) as judge:
        judge.start()
        _, first = run(judge, job_s=0.5)
        _, second = run(judge)

    assert second["imported_at"] > first["job_end"] and second["setup_at"] > first["job_end"]


@pytest.mark.parametrize("hmm", [True, False], ids=["hmm-on", "hmm-off"])
def test_a_device_whose_kernels_may_use_host_memory_is_named_in_the_log_when_the_ceilings_are_measured(
    device, monkeypatch, caplog, hmm
):
    """With HMM a reader's kernel may dereference its job child's host memory: the operator is told how to turn it
    off, once per measurement of the ceilings (not once per child), and not at all where the driver does not."""
    if hmm:
        monkeypatch.setenv("STANDIN_PAGEABLE_MEMORY_ACCESS", "1")
    with caplog.at_level("WARNING", logger="kernels.judge"), standin_judge() as judge:
        assert judge.start() is None
        run(judge)
        run(judge)
    said = [r.getMessage() for r in caplog.records if "pageable host memory" in r.getMessage()]
    assert len(said) == (1 if hmm else 0)
    assert all("uvm_disable_hmm=1" in line for line in said)

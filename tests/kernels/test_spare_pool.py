"""The GPU worker's pool of spare children on the CPU (tests/kernels/standins.py): spares set up while jobs run,
their GPU steps taking turns with the jobs' timed parts through the worker's device lock, so no step overlaps a
timed part and a burst waits for no setup; a setup that measures the ceilings runs alone; a child runs one job;
a killed job's child and a dead spare are replaced and the pool refills."""

import os
import signal
import time

import pytest

from kernels.judge import GpuJudge, JudgeOptions
from kernels.results import CompileResult, Verdict

S = "tests.kernels.standins:"
COMPILED = CompileResult(verdict=Verdict.COMPILED, message="", problem="sgemm", arch="sm_90")
SETUP_S = 0.4


@pytest.fixture
def events(tmp_path, monkeypatch):
    """The stand-in device, whose setups take SETUP_S; the log of every setup's and job's interval."""
    identity, log = tmp_path / "identity", tmp_path / "events.log"
    identity.write_text("GPU-0")
    log.write_text("")
    monkeypatch.setenv("STANDIN_IDENTITY_FILE", str(identity))
    monkeypatch.setenv("STANDIN_MEASURE_LOG", str(tmp_path / "measured.log"))
    monkeypatch.setenv("STANDIN_EVENT_LOG", str(log))
    monkeypatch.setenv("STANDIN_SETUP_S", str(SETUP_S))

    def read() -> list[tuple[str, int, float, float]]:
        rows = [line.split() for line in log.read_text().splitlines()]
        return [(kind, int(pid), float(start), float(end)) for kind, pid, start, end in rows]

    return read


def pool(spares: int, **options) -> GpuJudge:
    return GpuJudge(warm=True, job=S + "timed_job", warm_up=S + "ceilings_setup", spares=spares, **options)


def burst(judge: GpuJudge, jobs: int, job_s: float, timeout_s: float = 60) -> list:
    return [judge.judge(COMPILED, JudgeOptions(seed=1, time_budget_s=job_s, timeout_s=timeout_s)) for _ in range(jobs)]


def overlaps(a, b) -> bool:
    return a[2] < b[3] and b[2] < a[3]


def test_setups_run_beside_jobs_but_never_beside_a_timed_part_and_no_child_runs_two_jobs(events):
    with pool(spares=3) as judge:
        assert judge.start() is None
        results = burst(judge, 8, job_s=0.3)

    assert all(r.verdict is Verdict.ACCEPTED for r in results)
    log = events()
    jobs, timed = [e for e in log if e[0] == "job"], [e for e in log if e[0] == "timed"]
    setups, steps = [e for e in log if e[0] == "setup"], [e for e in log if e[0] == "step"]
    assert len(jobs) == len(timed) == 8 and len(steps) >= 8
    for part in timed:
        for step in steps:
            assert not overlaps(part, step), (part, step)
    assert len({pid for _, pid, _, _ in jobs}) == 8  # a fresh child per job
    assert max(sum(pid == p for _, p, _, _ in setups) for _, pid, _, _ in jobs) == 1  # each set up once
    # Spares set up while jobs ran (what keeps a burst from waiting), and side by side with each other.
    assert any(overlaps(setup, job) for setup in setups for job in jobs if setup[1] != job[1])
    assert any(overlaps(a, b) for a in steps for b in steps if a is not b)


def test_a_warm_pool_makes_the_jobs_of_a_burst_wait_for_no_setup(events):
    with pool(spares=3) as judge:
        judge.start()
        burst(judge, 3, job_s=0.6)  # the pool fills: its spares import and set up during these jobs
        # On a loaded machine (the whole suite in four processes on two cores) three jobs can end before the
        # spares' imports do: warm up until two are set up beside the next job's, as in a burst's steady state.
        for _ in range(20):
            if judge.worker.ready_spares >= 2:
                break
            burst(judge, 1, job_s=0.6)
        pooled = burst(judge, 9, job_s=0.6)
    # No spares: each job's successor starts only after it, and the next job waits for that child's setup.
    with GpuJudge(warm=True, job=S + "timed_job", warm_up=S + "ceilings_setup", warm_ahead=False) as judge:
        judge.start()
        single = burst(judge, 4, job_s=0.6)

    waited = [r.setup_wait_ms > 0.5 * SETUP_S * 1e3 for r in pooled]
    assert sum(waited) <= 1, waited  # a loaded machine may let one job find its spare's setup unfinished
    assert all(r.setup_wait_ms > 0.5 * SETUP_S * 1e3 for r in single[1:])  # the first's child was started


def test_a_killed_job_is_replaced_by_a_spare_and_the_pool_refills(events):
    with pool(spares=2) as judge:
        judge.start()
        burst(judge, 2, job_s=0.5)
        killed = burst(judge, 1, job_s=30, timeout_s=1.0)[0]
        after = burst(judge, 4, job_s=0.5)
        judge.worker.prepare_spares()  # what the next job does (a loaded machine may drop a slow spare)
        assert len(judge.worker._spares) >= 2  # refilled

    assert killed.verdict is Verdict.TIMED_OUT
    assert all(r.verdict is Verdict.ACCEPTED for r in after)
    job_pids = [pid for kind, pid, _, _ in events() if kind == "job"]
    assert len(job_pids) == len(set(job_pids)) == 6  # the killed job logged nothing; no child reused


def test_a_spare_that_dies_while_waiting_is_dropped_and_replaced(events):
    with pool(spares=2) as judge:
        judge.start()
        burst(judge, 3, job_s=0.5)
        spares = judge.worker._spares
        os.kill(spares[0].process.pid, signal.SIGKILL)  # e.g. the OOM killer, while it waits for a job
        spares[0].join(5)
        after = burst(judge, 4, job_s=0.5)
        failures = judge.worker.spare_failures

    assert all(r.verdict is Verdict.ACCEPTED for r in after)
    assert failures >= 1


def test_a_setup_that_measures_the_ceilings_has_the_device_to_itself(events, tmp_path):
    with GpuJudge(
        warm=True, job=S + "timed_job", warm_up=S + "ceilings_setup", spares=3, ceilings_max_age_s=4
    ) as judge:
        judge.start()  # measures: the first child
        burst(judge, 4, job_s=0.3)
        time.sleep(4.2)  # the kept ceilings are now past their age: the next child measures again
        burst(judge, 4, job_s=0.3)

    measured = {int(pid) for pid in (tmp_path / "measured.log").read_text().split()}
    setups = [e for e in events() if e[0] == "setup"]
    # At least the first child and one after the age ran out; on a loaded machine the first burst itself can outlast
    # the 4 s age, and then a third child measures: what matters is that each measuring setup ran alone.
    assert len(measured) >= 2 and measured <= {pid for _, pid, _, _ in setups}
    for _, pid, start, end in setups:
        if pid in measured:
            others = [s for s in setups if s[1] != pid]
            assert all(o[3] <= start or o[2] >= end for o in others), pid

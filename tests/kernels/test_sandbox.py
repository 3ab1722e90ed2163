"""The sandbox with CPU stand-ins: timeouts, crashes and floods end only the child."""

import contextlib
import os
import time

import pytest

from kernels import sandbox
from kernels.sandbox import Stage, Status, Worker

S = "tests.kernels.standins:"
STANDINS = (S + "echo",)  # the stand-ins' package, readable in the children (kernels/confine.py)


def test_result_and_printed_output_come_back():
    outcome = sandbox.run_once(S + "echo", {"a": 1}, timeout_s=30)
    assert outcome.status is Status.OK
    assert outcome.value == {"a": 1}
    assert outcome.output == "echo {'a': 1}\n"


def test_hang_is_killed_at_the_timeout():
    begin = time.perf_counter()
    outcome = sandbox.run_once(S + "sleep_forever", timeout_s=1.0)
    assert outcome.status is Status.TIMED_OUT
    assert time.perf_counter() - begin < 10
    assert outcome.died_of == "signal SIGKILL"


@pytest.mark.parametrize("func, signal_name", [("abort", "SIGABRT"), ("segfault", "SIGSEGV")])
def test_crash_is_reported_with_its_signal(func, signal_name):
    outcome = sandbox.run_once(S + func, timeout_s=30)
    assert outcome.status is Status.CRASHED
    assert outcome.died_of == f"signal {signal_name}"


def test_printed_flood_is_capped():
    outcome = sandbox.run_once(S + "flood", 2 * sandbox.OUTPUT_LIMIT_BYTES, timeout_s=60)
    assert outcome.status in (Status.OK, Status.ERROR)  # writes past the cap fail with EFBIG
    assert outcome.output_bytes <= sandbox.OUTPUT_LIMIT_BYTES
    assert len(outcome.output) <= sandbox.OUTPUT_RETURNED_BYTES


def test_exception_is_an_error_not_a_crash():
    outcome = sandbox.run_once(S + "fail", timeout_s=30)
    assert outcome.status is Status.ERROR
    assert "ValueError: deliberate" in outcome.error


def test_worker_stays_warm_between_jobs_and_is_replaced_after_a_fault():
    with sandbox.Worker(preload=STANDINS) as worker:
        first = worker.call(S + "pid", timeout_s=30).value
        assert worker.call(S + "pid", timeout_s=30).value == first
        assert worker.call(S + "sleep_forever", timeout_s=0.5).status is Status.TIMED_OUT
        assert not worker.alive
        second = worker.call(S + "pid", timeout_s=30).value
        assert second != first
        assert worker.call(S + "abort", timeout_s=30).status is Status.CRASHED
        third = worker.call(S + "pid", timeout_s=30).value
        assert third not in (first, second)


def test_a_poisoned_result_retires_the_child():
    with sandbox.Worker(preload=STANDINS) as worker:
        first = worker.call(S + "pid", timeout_s=30).value
        assert worker.call(S + "poisoned", timeout_s=30).status is Status.OK
        assert worker.call(S + "pid", timeout_s=30).value != first


def test_each_job_starts_with_empty_output():
    with sandbox.Worker(preload=STANDINS) as worker:
        worker.call(S + "echo", "one", timeout_s=30)
        assert worker.call(S + "echo", "two", timeout_s=30).output == "echo two\n"


def test_failing_setup_is_reported():
    worker = sandbox.Worker(setup=S + "failing_setup")
    outcome = worker.start()
    assert outcome.status is Status.ERROR
    assert "setup failed" in outcome.error
    assert not worker.alive


@pytest.mark.slow
def test_a_spawned_child_sets_up_while_the_caller_works():
    with sandbox.Worker(setup=S + "slow_setup") as worker:
        begin = time.perf_counter()
        worker.spawn()
        assert time.perf_counter() - begin < 0.9  # did not wait for the 1 s setup
        first = worker.call(S + "pid", timeout_s=30)
        assert first.status is Status.OK

        worker.spawn()  # a successor: the old child ends, the next job runs in a new one
        assert worker.call(S + "pid", timeout_s=30).value != first.value


def test_overlapped_work_runs_beside_the_job_when_its_child_is_ready():
    # GpuJudge starts missing spares there (a few ms each): the job must already be running, not waiting for it.
    with sandbox.Worker(preload=STANDINS) as worker:
        assert worker.call(S + "pid", timeout_s=30).status is Status.OK  # the child is up
        calls = []

        def overlap():
            calls.append(time.time())
            time.sleep(1.0)

        begin = time.perf_counter()
        outcome = worker.call(S + "nap", 2.0, timeout_s=30, overlap=overlap)
        elapsed_s = time.perf_counter() - begin

    assert outcome.status is Status.OK and len(calls) == 1
    assert calls[0] < outcome.value["ended"]  # it ran before the answer came...
    assert elapsed_s < 2.8  # ...and beside the job: 3 s if either waited for the other


def test_overlapped_work_runs_during_the_wait_for_a_setup():
    # When the job must wait for its child's setup anyway, the work goes there, not after the send.
    with sandbox.Worker(setup=S + "slow_setup") as worker:
        worker.spawn()  # released into its 1 s setup
        calls = []
        outcome = worker.call(S + "nap", 0.1, timeout_s=30, overlap=lambda: calls.append(time.time()))

    assert outcome.status is Status.OK and len(calls) == 1
    assert outcome.value["began"] - calls[0] > 0.5  # it ran as the 1 s setup began, not once the job was sent


def test_a_failing_setup_of_a_spawned_child_is_reported_at_the_next_call():
    with sandbox.Worker(setup=S + "failing_setup") as worker:
        worker.spawn()
        outcome = worker.call(S + "pid", timeout_s=30)
        assert outcome.status is Status.ERROR and "setup failed" in outcome.error


def test_an_ended_child_is_reaped_beside_the_next_job_while_its_teardown_hold_is_held():
    # GpuJudge's hold is the device lock, shared: the next job starts at once, its timed part waits for the reap.
    ended: list[int] = []
    holds: list[dict] = []

    @contextlib.contextmanager
    def teardown_hold():
        hold = {"pid": ended[-1]}  # promote() takes the hold for the child it has just killed
        holds.append(hold)
        yield
        hold["gone_at_release"] = not os.path.exists(f"/proc/{hold['pid']}")

    with Worker(preload=STANDINS, teardown_hold=teardown_hold) as worker:
        for _ in range(3):
            assert worker.call(S + "pid").value == worker.pid
            ended.append(worker.pid)
            worker.promote()
            assert len(holds) == len(ended)  # taken before promote returns: before the next job can start
    assert [hold["pid"] for hold in holds] == ended
    assert all(hold.get("gone_at_release") for hold in holds)  # released only once its process was reaped


def test_a_child_goes_through_its_stages_whether_released_before_or_after_its_imports():
    with Worker(setup=S + "slow_setup", spares=1) as worker:
        worker.spawn()  # the current child is released at once, before its "imported" notice is read
        assert worker._child.stage is Stage.RELEASED
        worker.spawn_spares()
        spare = worker._spares[0]
        deadline = time.perf_counter() + 60
        while not spare.poll_imported() and time.perf_counter() < deadline:
            time.sleep(0.05)
        assert spare.stage is Stage.IMPORTED and spare.confine_ms is not None
        assert worker.call(S + "pid", timeout_s=30).status is Status.OK  # its notice read with its setup's answer
        assert worker._child.stage is Stage.READY and worker._child.confine_ms is not None
        worker.release_spares()
        assert spare.stage is Stage.SETTING_UP
        worker.promote()  # the spare, still setting up or set up, becomes the current child
        assert worker._child is spare and spare.stage in (Stage.SETTING_UP, Stage.READY)
        assert worker.call(S + "pid", timeout_s=30).value == spare.pid
        assert spare.stage is Stage.READY
        with pytest.raises(RuntimeError, match="'release' in stage ready"):
            spare.release(None)  # a set-up child is never released again

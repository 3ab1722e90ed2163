"""The worker's device lock (kernels/devicelock.py) between real processes: a timed launch excludes every setup
step, setup steps share it, a holder that dies lets go, and without a lock file holding is a no-op."""

import os
import signal
import subprocess
import sys
import time

import pytest

from kernels.devicelock import DeviceLock, new_lock_file, remove_lock_file

HOLD = """
import sys, time
from kernels.devicelock import DeviceLock
lock = DeviceLock()
lock.use(sys.argv[1])
with (lock.timed() if sys.argv[2] == "timed" else lock.setup_step()):
    print(f"{time.time()}", flush=True)
    time.sleep(float(sys.argv[3]))
    print(f"{time.time()}", flush=True)
"""


@pytest.fixture
def lock_file():
    path = new_lock_file()
    yield path
    remove_lock_file(path)


def hold(path: str, kind: str, seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", HOLD, path, kind, str(seconds)], stdout=subprocess.PIPE, text=True)


def interval(process: subprocess.Popen) -> tuple[float, float]:
    out, _ = process.communicate(timeout=30)
    start, end = (float(line) for line in out.split())
    return start, end


def interval_rest(process: subprocess.Popen) -> float:
    """When a process whose first line was read let go."""
    out, _ = process.communicate(timeout=30)
    return float(out.split()[-1])


def first_line(process: subprocess.Popen) -> float:
    return float(process.stdout.readline())


def test_a_timed_launch_and_setup_steps_take_turns(lock_file):
    timed = hold(lock_file, "timed", 0.6)
    first_line(timed)  # it holds the lock now
    steps = [hold(lock_file, "setup", 0.3) for _ in range(2)]
    timed_end = interval_rest(timed)
    step_intervals = [interval(step) for step in steps]

    assert all(start >= timed_end for start, _ in step_intervals)  # no step began before the timed part ended
    (a_start, a_end), (b_start, b_end) = step_intervals
    assert a_start < b_end and b_start < a_end  # the two setup steps ran side by side


def test_a_timed_launch_waits_for_the_setup_step_in_flight(lock_file):
    step = hold(lock_file, "setup", 0.6)
    first_line(step)
    timed = hold(lock_file, "timed", 0.1)
    step_end = interval_rest(step)
    timed_start, _ = interval(timed)
    assert timed_start >= step_end


def test_a_setup_step_asked_for_after_a_waiting_timed_launch_goes_after_it(lock_file):
    # flock alone would let the later step share the lock with the one in flight, and spares stepping back to
    # back would hold the timed launch off for their whole setups: the gate keeps the order.
    step = hold(lock_file, "setup", 1.0)
    first_line(step)
    timed = hold(lock_file, "timed", 0.3)
    time.sleep(0.5)  # the timed launch is waiting for the step by now
    later = hold(lock_file, "setup", 0.1)
    step_end = interval_rest(step)
    timed_start, timed_end = interval(timed)
    later_start, _ = interval(later)
    assert step_end <= timed_start and timed_end <= later_start


def test_a_holder_that_dies_lets_go(lock_file):
    stuck = hold(lock_file, "timed", 60)
    first_line(stuck)
    os.kill(stuck.pid, signal.SIGKILL)  # a job killed at its timeout while it timed a launch
    stuck.wait(10)
    begin = time.time()
    start, _ = interval(hold(lock_file, "setup", 0.0))
    assert start - begin < 5


def test_holding_is_reentrant_and_a_no_op_without_a_lock_file(lock_file):
    synchronised = []
    lock = DeviceLock(synchronize=lambda: synchronised.append(True))
    with lock.timed():  # no file yet: nothing held, nothing synchronised
        pass
    assert synchronised == []

    lock.use(lock_file)
    with lock.timed(), lock.timed():  # the ceilings' timed GEMMs inside a measuring setup
        pass
    assert synchronised == [True]  # once, when the outer hold lets go
    other = hold(lock_file, "timed", 0.0)
    interval(other)  # the lock is free again: this returns

"""CPU stand-ins for misbehaving GPU children: the sandbox treats them exactly like a kernel run."""

import ctypes
import os
import sys
import time

from kernels.devicelock import DeviceLock
from kernels.payloads import GpuJob, SetupAnswer, SetupRequest


def sleep_forever(_payload=None):
    while True:
        time.sleep(1)


def abort(_payload=None):
    os.abort()


def segfault(_payload=None):
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def flood(nbytes):
    line = "x" * 1023 + "\n"
    for _ in range(nbytes // 1024):
        sys.stdout.write(line)
    return "done"


def echo(payload):
    print(f"echo {payload}")
    return payload


def pid(_payload=None):
    return os.getpid()


def nap(seconds):
    """A job that takes `seconds`; answers when it began and ended (time.time, shared by the processes)."""
    began = time.time()
    time.sleep(seconds)
    return {"began": began, "ended": time.time()}


def fail(_payload=None):
    raise ValueError("deliberate")


class Poisoned:
    poisons_worker = True


def poisoned(_payload=None):
    return Poisoned()


def failing_setup(_payload=None):
    raise RuntimeError("setup failed")


def slow_setup(_payload=None):
    time.sleep(1.0)


# ---- A GPU worker's life on the CPU: setup and job that report what they saw and when -----------------
# The device identity is read from STANDIN_IDENTITY_FILE at setup (an operator changing clocks or the driver), with
# pageable memory access where STANDIN_PAGEABLE_MEMORY_ACCESS is set;
# each measurement of the ceilings appends a line to STANDIN_MEASURE_LOG, so a test counts them from outside.
# With STANDIN_EVENT_LOG, each setup, each setup's GPU step ("step", holding the worker's device lock shared),
# each job and each job's timed part ("timed", holding it alone) appends "kind pid start end" (wall clock); a
# setup's step lasts STANDIN_SETUP_S: a test lays the setups beside the jobs' timed intervals. The lock is the
# real one (kernels/devicelock.py), handed in the setup request as kernels.gpu.warm_up takes it.

IMPORTED_AT = time.time()  # this module is the job's: a judge's child imports it in its first phase
_SETUP: dict = {}
_LOCK = DeviceLock()


def ceilings_setup(request: SetupRequest | None = None) -> SetupAnswer:
    """kernels.gpu.warm_up's decisions with the device replaced by files."""
    from kernels.ceilings import setup_answer

    request = request or SetupRequest()
    _LOCK.use(request.device_lock)
    _SETUP["started_at"] = time.time()
    _SETUP["rehearsed"] = request.rehearse
    with _LOCK.setup_step():
        step_start = _SETUP["step_at"] = time.time()
        time.sleep(float(os.environ.get("STANDIN_SETUP_S", "0")))
        _log_event("step", step_start)
    path = os.environ.get("STANDIN_IDENTITY_FILE", "")
    identity = {"uuid": open(path).read().strip() if path else "GPU-standin"}  # noqa: SIM115
    identity["pageable_memory_access"] = bool(os.environ.get("STANDIN_PAGEABLE_MEMORY_ACCESS"))  # HMM on, or off

    def measure():
        with _LOCK.timed(), open(os.environ["STANDIN_MEASURE_LOG"], "a") as log:
            log.write(f"{os.getpid()}\n")
        return {"copy_gbps": 4100.0, "fp32_tflops": 67.0, "measured_at": time.time()}

    answer = setup_answer(request, identity, measure)
    _SETUP["ceilings"] = answer.ceilings
    _log_event("setup", _SETUP["started_at"])
    return answer


def _log_event(kind: str, start: float) -> None:
    if path := os.environ.get("STANDIN_EVENT_LOG"):
        with open(path, "a") as log:
            log.write(f"{kind} {os.getpid()} {start} {time.time()}\n")


def timed_job(job: GpuJob):
    """Stands for a timed GPU job: 'times' for the job's time budget, and reports the ceilings it was handed
    and when this process imported, set up, started and ended the job (JSON in the message)."""
    import json

    from kernels.results import Ceilings, JudgeResult, Verdict

    start = time.time()
    with _LOCK.timed():
        timed_start = time.time()
        time.sleep(job.options.time_budget_s)
        _log_event("timed", timed_start)
        timed_end = time.time()  # still holding the lock: every setup step that waited for it begins after this
    times = {
        "pid": os.getpid(),
        "imported_at": IMPORTED_AT,
        "setup_at": _SETUP["started_at"],
        "step_at": _SETUP["step_at"],
        "rehearsed": _SETUP["rehearsed"],  # the problems its setup was asked to rehearse (None: all)
        "job_start": start,
        "timed_end": timed_end,
        "job_end": time.time(),
    }
    _log_event("job", start)
    return JudgeResult(
        Verdict.ACCEPTED, json.dumps(times), job.problem, ceilings=Ceilings.from_dict(_SETUP["ceilings"])
    )

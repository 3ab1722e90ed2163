"""Child processes that run untrusted work: a hang, a crash or a poisoned CUDA context ends only the child.

A `Worker` is a spawned process (fresh interpreter: no CUDA state inherited) that runs named functions
("package.module:function") on request and can stay alive between jobs. A child starts in two phases: imports
(CuPy, the job's modules), which may overlap another child's job, then its setup (CUDA context, cuBLAS
handle), which runs only when the parent releases it: `prepare_successor` during a job, `promote` once the job
returned. The parent waits with a wall-clock timeout; when it expires the child is killed (SIGKILL) and
replaced on the next call. Whatever the child prints, including a kernel's printf (the CUDA driver writes it
to file descriptor 1), goes to a private log file capped by RLIMIT_FSIZE, so a printf flood can neither fill
the disk nor the parent's memory.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

# What the child may print per job before writes start failing (the excess is dropped, not stored). A
# safety net only: the GPU job stops a printf flood at 64 KB (checks.PRINTED_OUTPUT_LIMIT_BYTES).
OUTPUT_LIMIT_BYTES = 16 << 20
# How much of it comes back to the parent.
OUTPUT_RETURNED_BYTES = 16 * 1024


class Status(str, Enum):
    OK = "ok"  # the function returned; `value` holds its result
    ERROR = "error"  # the function raised; `error` holds the traceback
    TIMED_OUT = "timed_out"  # no answer within the timeout: the child was killed
    CRASHED = "crashed"  # the child died (signal, abort, exit) without answering


@dataclass
class Outcome:
    status: Status
    value: Any = None
    error: str = ""
    exit_code: int | None = None  # negative: killed by that signal
    output: str = ""  # the first OUTPUT_RETURNED_BYTES of what the child printed during the job
    output_bytes: int = 0  # how much it printed (up to OUTPUT_LIMIT_BYTES)
    wall_time_ms: float = 0.0

    @property
    def died_of(self) -> str:
        if self.exit_code is None:
            return ""
        if self.exit_code < 0:
            return f"signal {signal.Signals(-self.exit_code).name}"
        return f"exit code {self.exit_code}"


@dataclass(frozen=True)
class Limits:
    address_space_bytes: int | None = None  # RLIMIT_AS; leave None for CUDA, which maps huge ranges
    output_bytes: int = OUTPUT_LIMIT_BYTES


class _Child:
    """One spawned process, its pipe and its log file."""

    def __init__(self, setup: str | None, preload: tuple[str, ...], limits: Limits):
        ctx = multiprocessing.get_context("spawn")
        fd, self.log_path = tempfile.mkstemp(prefix="kernels-worker-", suffix=".log")
        os.close(fd)
        self.conn, child_conn = ctx.Pipe()
        self.process = ctx.Process(
            target=_child_main, args=(child_conn, self.log_path, setup, preload, limits), daemon=True
        )
        self.process.start()
        child_conn.close()
        self.setting_up = False  # released into its setup, whose answer is not read yet

    def release(self, payload: Any) -> None:
        """Let the child run its setup (its GPU phase) with this payload."""
        self.setting_up = True
        with contextlib.suppress(OSError):  # died during its imports: the setup's answer reports it
            self.conn.send(("setup", payload))

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()

    def end(self) -> None:
        self.kill()
        self.process.join(timeout=10)
        self.conn.close()
        if os.path.exists(self.log_path):
            os.unlink(self.log_path)


class Worker:
    """One child process running jobs in turn, and at most one successor being prepared. Not thread-safe:
    one job at a time, like one GPU.

    A child starts in two phases. The first (spawn, the interpreter, importing `setup`'s module and each of
    `preload`) touches no device and may overlap the current child's job: `prepare_successor`. The second,
    `setup(payload)` (CUDA context, cuBLAS handle, ...), runs only once the child is released with its payload:
    `promote` does that after the current job has returned, so nothing of the successor touches the GPU while a
    job is timed. `setup_payload()` supplies the payload at that moment; the setup's return value is kept in
    `setup_value` once read."""

    def __init__(
        self,
        setup: str | None = None,
        limits: Limits = Limits(),
        startup_timeout_s: float = 300.0,
        preload: tuple[str, ...] = (),
        setup_payload: Callable[[], Any] | None = None,
    ):
        self.setup = setup  # "module:function" run once in the child before the first job (e.g. CUDA warm-up)
        self.preload = preload  # "module:function" names imported in the child's first phase (e.g. the job's)
        self.limits = limits
        self.startup_timeout_s = startup_timeout_s
        self.setup_payload = setup_payload or (lambda: None)
        self.setup_value: Any = None  # what the latest completed setup returned
        self.setup_wait_ms = 0.0  # how long the latest call waited for its child's setup to finish
        self._child: _Child | None = None
        self._successor: _Child | None = None

    @property
    def alive(self) -> bool:
        return self._child is not None and self._child.process.is_alive()

    @property
    def pid(self) -> int | None:
        return self._child.process.pid if self._child is not None else None

    def start(self) -> Outcome:
        """Start the child and wait until its setup has run; the Outcome reports a failed setup."""
        self.spawn()
        return self._await_setup()

    def spawn(self) -> None:
        """Start a new child (ending any current one) and release it at once: its setup then runs while the
        caller does other work; the next `call` waits for it. A successor being prepared is kept."""
        self._end(self._child)
        self._child = self._new_child()
        self._child.release(self.setup_payload())

    def prepare_successor(self) -> None:
        """Start the next child's first phase (no device work) beside the current child, e.g. during its job."""
        if self._successor is None or not self._successor.process.is_alive():
            self._end(self._successor)
            self._successor = self._new_child()

    def promote(self) -> None:
        """End the current child; the successor (or a new child) becomes current and is released into its
        setup, with the payload `setup_payload()` gives now."""
        old, self._child, self._successor = self._child, self._successor or self._new_child(), None
        if old is not None:
            old.kill()  # its CUDA context goes while the successor sets up: nothing is being timed now
        self._child.release(self.setup_payload())
        self._end(old)

    def _new_child(self) -> _Child:
        return _Child(self.setup, self.preload, self.limits)

    def _await_setup(self) -> Outcome:
        self._child.setting_up = False
        outcome = self._wait(self.startup_timeout_s, time.perf_counter())
        if outcome.status is Status.OK:
            self.setup_value = outcome.value
        else:
            self._end(self._child)
            self._child = None
        return outcome

    def call(self, func: str, payload: Any = None, timeout_s: float = 60.0) -> Outcome:
        """Run func(payload) in the child; start (or restart) the child first when needed."""
        if self._child is None or not (self._child.setting_up or self._child.process.is_alive()):
            self.spawn()
        self.setup_wait_ms = 0.0
        if self._child.setting_up:
            started = self._await_setup()
            self.setup_wait_ms = started.wall_time_ms
            if started.status is not Status.OK:
                return started
        begin = time.perf_counter()
        self._child.conn.send((func, payload))
        outcome = self._wait(timeout_s, begin)
        if outcome.status in (Status.TIMED_OUT, Status.CRASHED) or getattr(outcome.value, "poisons_worker", False):
            self._end(self._child)
            self._child = None
        return outcome

    def close(self) -> None:
        """End the current child and any successor."""
        for child in (self._child, self._successor):
            if child is not None:
                child.kill()
        self._end(self._child)
        self._end(self._successor)
        self._child = self._successor = None

    @staticmethod
    def _end(child: _Child | None) -> None:
        if child is not None:
            child.end()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _wait(self, timeout_s: float, begin: float) -> Outcome:
        child = self._child
        ready = child.conn.poll(timeout_s)
        message = None
        if ready:
            try:
                message = child.conn.recv()
            except (EOFError, OSError):
                message = None
        wall_ms = (time.perf_counter() - begin) * 1e3
        output, output_bytes = _read_output(child.log_path)
        if message is not None:
            kind, body = message
            if kind == "ok":
                return Outcome(Status.OK, value=body, output=output, output_bytes=output_bytes, wall_time_ms=wall_ms)
            return Outcome(Status.ERROR, error=body, output=output, output_bytes=output_bytes, wall_time_ms=wall_ms)
        status = Status.CRASHED
        if not ready and child.process.is_alive():
            child.process.kill()
            status = Status.TIMED_OUT
        child.process.join(timeout=10)
        return Outcome(
            status, exit_code=child.process.exitcode, output=output, output_bytes=output_bytes, wall_time_ms=wall_ms
        )


def _read_output(log_path: str) -> tuple[str, int]:
    try:
        with open(log_path, "rb") as log:
            head = log.read(OUTPUT_RETURNED_BYTES)
            size = os.fstat(log.fileno()).st_size
    except OSError:
        return "", 0
    return head.decode("utf-8", errors="replace"), size


def run_once(func: str, payload: Any = None, timeout_s: float = 60.0, limits: Limits = Limits()) -> Outcome:
    """Run one job in a fresh child and end it."""
    with Worker(limits=limits) as worker:
        return worker.call(func, payload, timeout_s)


def resolve(name: str):
    module_name, _, attr = name.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def _child_main(conn, log_path: str, setup: str | None, preload: tuple[str, ...], limits: Limits) -> None:
    _redirect_output(log_path, limits.output_bytes)
    if limits.address_space_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes, limits.address_space_bytes))
    try:
        # First phase: imports only, which may run beside another child's timed job.
        for name in preload:
            resolve(name)
        setup_function = resolve(setup) if setup else None
        # Second phase, once the parent says so: whatever touches the device.
        _kind, setup_payload = conn.recv()
        value = setup_function(setup_payload) if setup_function else None
        conn.send(("ok", value))
    except EOFError:
        return  # the parent ended this child before releasing it
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        return
    while True:
        try:
            func, payload = conn.recv()
        except EOFError:
            return
        _rewind_output()
        try:
            result = resolve(func)(payload)
            message = ("ok", result)
        except BaseException:
            result = None
            message = ("error", traceback.format_exc())
        _flush_quietly()
        conn.send(message)
        if getattr(result, "poisons_worker", False):
            return


def _redirect_output(log_path: str, limit_bytes: int) -> None:
    """Send fds 1 and 2 (Python's and the CUDA driver's printf) to the log, capped in size."""
    # A write past RLIMIT_FSIZE then fails with EFBIG instead of killing the child with SIGXFSZ.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    # The child's streams for the rest of its life: nothing to close them at the end of a block.
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="replace")  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="replace")  # noqa: SIM115


def _rewind_output() -> None:
    """Each job's output starts empty (O_APPEND writes follow the truncation)."""
    _flush_quietly()
    os.ftruncate(1, 0)


def _flush_quietly() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):  # EFBIG once the output cap is reached
            stream.flush()

"""Child processes that run untrusted work: a hang, a crash or a poisoned CUDA context ends only the child.

A `Worker` is a spawned process (fresh interpreter: no CUDA state inherited) that runs named functions
("package.module:function") on request and can stay alive between jobs; `spawn` starts a successor whose
setup (importing CuPy, the cuBLAS handle, ceilings) runs while the caller works. The parent waits with a wall-clock
timeout; when it expires the child is killed (SIGKILL) and replaced on the next call. Whatever the child prints,
including a kernel's printf (the CUDA driver writes it to file descriptor 1), goes to a private log file
capped by RLIMIT_FSIZE, so a printf flood can neither fill the disk nor the parent's memory.
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


class Worker:
    """One child process running jobs in turn. Not thread-safe: one job at a time, like one GPU."""

    def __init__(self, setup: str | None = None, limits: Limits = Limits(), startup_timeout_s: float = 300.0):
        self.setup = setup  # "module:function" run once in the child before the first job (e.g. CUDA warm-up)
        self.limits = limits
        self.startup_timeout_s = startup_timeout_s
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn = None
        self._log_path = ""
        self._setting_up = False  # spawned, its setup's answer not read yet

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def start(self) -> Outcome:
        """Start the child and wait until its setup has run; the Outcome reports a failed setup."""
        self.spawn()
        return self._await_setup()

    def spawn(self) -> None:
        """Start a new child (ending any current one) without waiting for its setup, which then runs while
        the caller does other work; the next `call` waits for it."""
        self.close()
        ctx = multiprocessing.get_context("spawn")
        fd, self._log_path = tempfile.mkstemp(prefix="kernels-worker-", suffix=".log")
        os.close(fd)
        parent_conn, child_conn = ctx.Pipe()
        self._process = ctx.Process(
            target=_child_main, args=(child_conn, self._log_path, self.setup, self.limits), daemon=True
        )
        self._process.start()
        child_conn.close()
        self._conn = parent_conn
        self._setting_up = True

    def _await_setup(self) -> Outcome:
        self._setting_up = False
        outcome = self._wait(self.startup_timeout_s, time.perf_counter())
        if outcome.status is not Status.OK:
            self.close()
        return outcome

    def call(self, func: str, payload: Any = None, timeout_s: float = 60.0) -> Outcome:
        """Run func(payload) in the child; start (or restart) the child first when needed."""
        if self._setting_up or not self.alive:
            started = self._await_setup() if self._setting_up else self.start()
            if started.status is not Status.OK:
                return started
        begin = time.perf_counter()
        self._conn.send((func, payload))
        outcome = self._wait(timeout_s, begin)
        if outcome.status in (Status.TIMED_OUT, Status.CRASHED) or getattr(outcome.value, "poisons_worker", False):
            self.close()
        return outcome

    def close(self) -> None:
        self._setting_up = False
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(timeout=10)
            self._process = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._log_path and os.path.exists(self._log_path):
            os.unlink(self._log_path)
        self._log_path = ""

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _wait(self, timeout_s: float, begin: float) -> Outcome:
        ready = self._conn.poll(timeout_s)
        message = None
        if ready:
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                message = None
        wall_ms = (time.perf_counter() - begin) * 1e3
        output, output_bytes = self._read_output()
        if message is not None:
            kind, body = message
            if kind == "ok":
                return Outcome(Status.OK, value=body, output=output, output_bytes=output_bytes, wall_time_ms=wall_ms)
            return Outcome(Status.ERROR, error=body, output=output, output_bytes=output_bytes, wall_time_ms=wall_ms)
        if ready or not self._process.is_alive():
            self._process.join(timeout=10)
            return Outcome(
                Status.CRASHED,
                exit_code=self._process.exitcode,
                output=output,
                output_bytes=output_bytes,
                wall_time_ms=wall_ms,
            )
        self._process.kill()
        self._process.join(timeout=10)
        return Outcome(
            Status.TIMED_OUT,
            exit_code=self._process.exitcode,
            output=output,
            output_bytes=output_bytes,
            wall_time_ms=wall_ms,
        )

    def _read_output(self) -> tuple[str, int]:
        try:
            with open(self._log_path, "rb") as log:
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


def _child_main(conn, log_path: str, setup: str | None, limits: Limits) -> None:
    _redirect_output(log_path, limits.output_bytes)
    if limits.address_space_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes, limits.address_space_bytes))
    try:
        if setup:
            resolve(setup)()
        conn.send(("ok", None))
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

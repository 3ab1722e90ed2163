"""One lock file per GPU worker, shared by its children: a job's timed rounds hold it alone, spares' setup steps
share it.

The worker's spare children set up (CUDA context, cuBLAS handle, rehearsals) while a job runs in another child,
so no job waits for a successor (kernels/sandbox.py). What must not happen is another process's GPU work while a
launch is being timed: the GPU would time-slice between the contexts and the launch would read slow. So every
step of a spare's setup that launches work on the device holds the lock shared (several spares set up side by
side), and a job's timed rounds hold it exclusively, the whole stage at once (kernels/runner.py): the stage waits
once for the steps in flight, where holding it per timed launch made each of a job's twenty-odd launches wait
for a step (0.55 s a job on the H200, kernels/BENCHMARKS.md). Before letting go, the holder waits for its own GPU
work to finish (`synchronize`), so nothing it queued runs on into the next holder's turn. A job's loading and
correctness checks, which are not timed, run beside spares' steps. Making a CUDA context launches no work on the
device, and a spare makes its context without the lock: beside timed launches it changed none of them
measurably (bench/setup_cost.py).

The lock is flock(2) on a file the parent makes: the kernel drops it when its holder dies (a job killed at its
timeout, a crashed child), so a dead child never wedges the pool. flock grants a shared request while shared
holders remain even if an exclusive one waits, so spares stepping back to back could hold the timed rounds off
for a whole setup: a second file, the gate, is held by an exclusive request while it waits and passed through by
every setup step, so a step asked for after it waits behind it. Holding is reentrant within a process (each timed
launch holds it too, `GpuContext.time_ms`, inside the stage's hold; the ceilings' GEMMs inside a measuring setup's).
Without a path (a cold worker, the CLI, a test on the CPU), holding does nothing: there is no other child to keep
out.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Callable, Iterator


class DeviceLock:
    def __init__(self, synchronize: Callable[[], object] = lambda: None):
        self.synchronize = synchronize
        self.path: str | None = None
        self._fd: int | None = None
        self._gate: int | None = None
        self._depth = 0
        self.waited_s = 0.0  # time spent waiting for the lock, all holds together (a job reports its share)

    def use(self, path: str | None) -> None:
        """Take part in the worker's lock at `path` (None: hold nothing)."""
        if path == self.path:
            return
        for fd in (self._fd, self._gate):
            if fd is not None:
                os.close(fd)
        self.path = path
        self._fd, self._gate = (os.open(path, os.O_RDWR), os.open(gate_path(path), os.O_RDWR)) if path else (None, None)

    @contextlib.contextmanager
    def held(self, exclusive: bool) -> Iterator[None]:
        if self._fd is None:
            yield
            return
        if self._depth == 0:
            asked = time.perf_counter()
            # Through the gate: an exclusive request closes it while it waits, a setup step only passes it.
            fcntl.flock(self._gate, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            finally:
                fcntl.flock(self._gate, fcntl.LOCK_UN)
            self.waited_s += time.perf_counter() - asked
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                try:
                    self.synchronize()
                finally:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)

    def timed(self):
        """For timed work (a job's timed rounds, a launch, a measurement): no other child's GPU work beside it."""
        return self.held(exclusive=True)

    def setup_step(self):
        """For a GPU step of a spare's setup: beside other spares' steps, never beside a timed launch."""
        return self.held(exclusive=False)


@contextlib.contextmanager
def setup_step_at(path: str) -> Iterator[None]:
    """A setup step held by a process that takes no other part in the lock (the worker, while an ended child's
    CUDA context is torn down): an open file description of its own each time, so that holds from several threads
    never release each other's."""
    lock = DeviceLock()
    lock.use(path)
    try:
        with lock.setup_step():
            yield
    finally:
        lock.use(None)


def gate_path(path: str) -> str:
    return path + ".gate"


def new_lock_file() -> str:
    """The parent's lock file and its gate (removed by `remove_lock_file` when the worker closes)."""
    fd, path = tempfile.mkstemp(prefix="kernels-device-", suffix=".lock")
    os.close(fd)
    os.close(os.open(gate_path(path), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    return path


def remove_lock_file(path: str) -> None:
    for name in (path, gate_path(path)):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)

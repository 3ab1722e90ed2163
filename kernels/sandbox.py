"""Child processes that run untrusted work: a hang, a crash or a poisoned CUDA context ends only the child.

A `Worker` is a spawned process (fresh interpreter: no CUDA state inherited) that runs named functions
("package.module:function") on request and can stay alive between jobs, with a pool of spare children
started ahead. A child starts in two phases: imports (CuPy, the job's modules), which may overlap a job and
end with an "imported" notice to the parent, then its setup (CUDA context, cuBLAS handle), which runs only
when the parent releases it with a payload (`Stage` names where a child is in its start). The parent waits
with a wall-clock timeout; when it expires the child is killed (SIGKILL) and replaced on the next call.
Whatever the child prints, including a kernel's printf (the CUDA driver writes it to file descriptor 1), goes to a
private log file capped by RLIMIT_FSIZE, so a printf flood can neither fill the disk nor the parent's memory.

The spares' schedule, for the GPU worker (`kernels.judge.GpuJudge`: one job per child): setups run beside jobs,
taking turns with their timed rounds through the worker's device lock (kernels/devicelock.py):

    job k runs         | up to S spares import and up to S set up (a spare is released into its setup as its
                       | imports finish: the waiting parent looks every MEANWHILE_S); each GPU step of a setup
                       | holds the lock shared, the job's timed rounds hold it alone: they take turns
    job k returns      | gap: its child is killed; a set-up spare becomes the next child; spares are released
                       | until S are setting up or set up again; the killed child is reaped in a thread holding
                       | the lock shared, so its CUDA context's teardown overlaps job k+1's untimed start
    job k+1 is called  | it runs at once (setup_wait_ms ~ 0) unless no spare had finished its setup

Rules it keeps: (1) no GPU work of a setup runs while a launch is timed (the lock; a setup that measures the
ceilings needs the device to itself and is still released alone, in a gap, with `call` waiting for it); (2) a
child runs one job (`promote` ends it; a kernel may have written anywhere in its device memory); (3) a spare that
dies or fails its setup is dropped and replaced by the next `spawn_spares`. S is bounded by CPU cores (each setup
is a busy CPU thread for its duration) and device memory (each set-up spare holds a context, a cuBLAS workspace
and a flush buffer while it waits): `GpuJudge`'s `spares`, the `GPU_WARM_SPARES` setting, README's capacity
section.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import importlib
import io
import json
import multiprocessing
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from enum import Enum
from multiprocessing.connection import Connection
from typing import Any

from kernels import confine
from kernels.confine import Access, Confinement, Limits, SandboxUnavailable

__all__ = [
    "Access",
    "Confinement",
    "Limits",
    "Outcome",
    "SandboxUnavailable",
    "Stage",
    "Status",
    "Worker",
    "run_once",
]

# What the child may print per job before writes start failing (confine.Limits.output_bytes: RLIMIT_FSIZE).
OUTPUT_LIMIT_BYTES = confine.OUTPUT_LIMIT_BYTES
# How much of it comes back to the parent.
OUTPUT_RETURNED_BYTES = 16 * 1024
# How often a parent waiting for a job's answer looks at its spares (setups beside jobs).
MEANWHILE_S = 0.05


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


class Stage(Enum):
    """Where a child is in its start. Each transition is a method of `_Child` (the table `_NEXT`):

        IMPORTING --"imported" notice read (poll_imported)--> IMPORTED --release--> SETTING_UP
        IMPORTING --release--> RELEASED --"imported" notice read (while awaiting its answer)--> SETTING_UP
        SETTING_UP --setup answered OK--> READY
        RELEASED, SETTING_UP --setup failed, or the child died or timed out first--> FAILED (it is ended)

    A child may be released before its notice is read (the current child, `Worker.spawn` and `promote`): its
    setup then starts as soon as its imports end. A failure that a child sends instead of its notice is held in
    `_Child.early` (the child stays IMPORTING) and becomes its setup's answer once released."""

    IMPORTING = "importing"  # its first phase runs (interpreter, imports, confinement); nothing read from it yet
    IMPORTED = "imported"  # its "imported" notice is read: releasing it starts its setup at once
    RELEASED = "released"  # released, its "imported" notice not read yet: the setup starts when the imports end
    SETTING_UP = "setting_up"  # released and imported: the next message is its setup's answer
    READY = "ready"  # its setup answered OK: it runs the next job sent to it
    FAILED = "failed"  # its setup failed, or it died or timed out before answering: ended, out of the pool


# (stage, event) -> next stage; any other pair is a bug of the Worker's.
_NEXT = {
    (Stage.IMPORTING, "imported"): Stage.IMPORTED,
    (Stage.IMPORTING, "release"): Stage.RELEASED,
    (Stage.IMPORTED, "release"): Stage.SETTING_UP,
    (Stage.RELEASED, "imported"): Stage.SETTING_UP,
    (Stage.SETTING_UP, "set up"): Stage.READY,
    (Stage.RELEASED, "failed"): Stage.FAILED,
    (Stage.SETTING_UP, "failed"): Stage.FAILED,
}
# Which spare becomes the next job's child (`Worker._take_spare`): the furthest in its start, worst first.
_PREFERRED = (Stage.IMPORTING, Stage.IMPORTED, Stage.RELEASED, Stage.SETTING_UP, Stage.READY)


class _Child:
    """One child process, its pipe, its log and its scratch folder, and where it is in its start (`stage`).

    The child is a fresh interpreter started with an environment built from nothing (kernels/confine.py): no
    variable of the worker's reaches it unless `confine.CHILD_ENVIRONMENT` names it. Its output goes to a log
    file the parent opened and keeps open (the parent reads it through that descriptor, never by path, so a
    child that could write a link where the log was would not redirect the read); its HOME and TMPDIR are a
    private scratch folder, removed with it."""

    def __init__(
        self, setup: str | None, preload: tuple[str, ...], confinement: Confinement, plain_answers: bool = False
    ):
        self.plain_answers = plain_answers  # read its answers as plain data only (`receive`)
        self.scratch = tempfile.mkdtemp(prefix="kernels-child-")
        self.log_fd, self.log_path = tempfile.mkstemp(prefix="kernels-worker-", suffix=".log")
        # Appending: the child's writes follow each job's truncation (`_rewind_output`), leaving no hole before them.
        fcntl.fcntl(self.log_fd, fcntl.F_SETFL, fcntl.fcntl(self.log_fd, fcntl.F_GETFL) | os.O_APPEND)
        confinement = dataclasses.replace(confinement, access=confinement.access.plus(write=(self.scratch,)))
        self.conn, child_conn = multiprocessing.Pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, json.dumps([p for p in sys.path if p]), str(child_conn.fileno())],
            env=_child_environment(self.scratch),
            # A fixed working folder: NVRTC writes it into the cubin's line info, so a scratch path would make every
            # compile of the same source a different cubin (and name our temporary folders to readers).
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=self.log_fd,
            stderr=self.log_fd,
            pass_fds=(child_conn.fileno(),),
        )
        child_conn.close()
        self.conn.send((setup, preload, confinement))
        self.stage = Stage.IMPORTING
        self.measuring = False  # released into a setup that needs the device alone (it measures the ceilings)
        self.early: tuple | None = None  # an answer other than "imported" read by poll_imported (a failure)
        self.confine_ms: float | None = None  # what confining itself cost the child (its "imported" notice says)

    def receive(self) -> Any:
        """The child's next message. A child that runs a reader's Python (Triton's compile child, issue 46) could
        write any bytes to its pipe, and unpickling them could run code in this process: such a child's messages
        are read as plain data (`plain_loads`), everything else is refused."""
        if not self.plain_answers:
            return self.conn.recv()
        message = plain_loads(self.conn.recv_bytes(MAX_PLAIN_ANSWER_BYTES))
        if not (isinstance(message, tuple) and len(message) == 2 and message[0] in ("imported", "ok", "error")):
            return ("error", "the child sent a message of the wrong form")
        if message[0] == "imported" and (
            self.stage not in (Stage.IMPORTING, Stage.RELEASED) or type(message[1]) is not float
        ):
            return ("error", "the child sent an 'imported' notice out of turn")
        if message[0] == "error" and not isinstance(message[1], str):
            return ("error", "the child sent an error that is not text")
        return message

    def _advance(self, event: str) -> None:
        try:
            self.stage = _NEXT[self.stage, event]
        except KeyError:
            raise RuntimeError(f"child {self.pid}: {event!r} in stage {self.stage.value}") from None

    @property
    def released(self) -> bool:
        """Released into its setup (whatever became of it)."""
        return self.stage not in (Stage.IMPORTING, Stage.IMPORTED)

    @property
    def setting_up(self) -> bool:
        """Released into its setup, whose answer is not read yet."""
        return self.stage in (Stage.RELEASED, Stage.SETTING_UP)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def exit_code(self) -> int | None:
        return self.process.returncode

    def join(self, timeout: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout)

    def poll_imported(self) -> bool:
        """Read the child's "imported" notice if it has come (never blocks); whether it is IMPORTED (waiting to be
        released). Only while it is IMPORTING: once released, its notice is read with its setup's answer."""
        if self.stage is Stage.IMPORTING and self.alive:
            with contextlib.suppress(EOFError, OSError):
                if self.conn.poll(0):
                    message = self.receive()
                    if message[0] == "imported":
                        self.heard_imported(message[1])
                    else:
                        self.early = message
        return self.stage is Stage.IMPORTED

    def heard_imported(self, confine_ms: float) -> None:
        """Its "imported" notice was read (by `poll_imported`, or by `Worker._wait` after its release)."""
        self._advance("imported")
        self.early, self.confine_ms = None, confine_ms

    def release(self, payload: Any, measuring: bool = False) -> None:
        """Let the child run its setup (its GPU phase) with this payload."""
        self._advance("release")
        self.measuring = measuring
        with contextlib.suppress(OSError):  # died during its imports: the setup's answer reports it
            self.conn.send(("setup", payload))

    def setup_answered(self, ok: bool) -> None:
        """Its setup's answer was read (or it died, or timed out, first)."""
        self._advance("set up" if ok else "failed")

    def kill(self) -> None:
        if self.alive:
            self.process.kill()

    def end(self) -> None:
        self.kill()
        self.join(timeout=10)
        self.conn.close()
        with contextlib.suppress(OSError):
            os.close(self.log_fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.log_path)
        shutil.rmtree(self.scratch, ignore_errors=True)  # never follows the links a child may have left there


# The most a plain-answering child may send in one message (a Triton compile's PTX and cubins are well under it).
MAX_PLAIN_ANSWER_BYTES = 64 << 20


class _PlainUnpickler(pickle.Unpickler):
    """Builds str, bytes, numbers, None, booleans, lists, tuples, dicts and sets; no class or function is ever
    looked up, so nothing a message holds is called."""

    def find_class(self, module: str, name: str):
        raise pickle.UnpicklingError(f"{module}.{name}: a plain answer holds no classes")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("a plain answer holds no persistent ids")


def plain_loads(data: bytes) -> Any:
    """Plain data from a child's message, or ("error", why) for anything else (a child that wrote garbage or a
    crafted pickle to its pipe: an error answer, never code run here)."""
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except Exception as exc:  # noqa: BLE001 (whatever the bytes were: the child's fault, reported as its error)
        return ("error", f"the child sent a message that is not plain data ({type(exc).__name__}: {exc})")


# The child's first words, run by `python -I` (no PYTHON* variable, no user site, no current folder on the path):
# the parent's import path, then the child's main over the pipe the parent passed.
_BOOT = "import json, sys; sys.path[:] = json.loads(sys.argv[1]); import kernels.sandbox as s; s.child_entry()"


def _child_environment(scratch: str) -> dict[str, str]:
    """Only the variables named in confine.CHILD_ENVIRONMENT, and the scratch folder as home and temp."""
    env = {name: os.environ[name] for name in confine.child_variables() if name in os.environ}
    env["CUPY_CACHE_DIR"] = child_cupy_cache_dir()
    return {**env, "PATH": confine.SAFE_PATH, "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8"}


def child_cupy_cache_dir() -> str:
    """Where children keep CuPy's compiled library kernels: the worker's own cache (HOME is the child's scratch)."""
    return os.environ.get("CUPY_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cupy", "kernel_cache")


class Worker:
    """One child process running jobs in turn, and a pool of children started ahead: up to `spares` set up
    (or setting up) and `spares` more importing. Not thread-safe: one job at a time, like one GPU.

    A child starts in two phases (`Stage`). The first (spawn, the interpreter, importing `setup`'s module and
    each of `preload`, confinement) touches no device and may overlap a job: `spawn_spares` starts it for every
    missing spare. The second, `setup(payload)` (CUDA context, cuBLAS handle, ...), runs once the child is
    released with its payload: `spawn` and `promote` release the current child; `release_spares` releases
    imported spares, before a job is sent, after it (`promote`) and while it runs (`call` looks every
    MEANWHILE_S), until `spares` are setting up or set up. Spares' setups thus run beside jobs: the caller
    makes their GPU steps take turns with a job's timed part (GpuJudge: the device lock, kernels/devicelock.py).
    `setup_payload()` supplies the payload at release; `setup_alone()` says when a setup must have the device
    to itself (it measures the ceilings): then it is released alone, as the current child, no spare is
    released beside it, and `call` waits for it before sending the job. The latest completed setup's return
    value is kept in `setup_value`.

    After each job (`promote`) the old child is ended (a kernel may have written anywhere in its device
    memory: no child runs two jobs), reaped beside the next job while `teardown_hold` is held when given; the
    next job's child is the spare furthest in its start (set up when one is), so the next job starts without
    waiting; the pool is refilled. A burst of jobs waits for no setup unless jobs come faster than `spares`
    setups; a worker that idles between jobs pays nothing."""

    def __init__(
        self,
        setup: str | None = None,
        limits: Limits | None = None,
        access: Access | None = None,
        startup_timeout_s: float = 300.0,
        preload: tuple[str, ...] = (),
        setup_payload: Callable[[], Any] | None = None,
        spares: int = 1,
        setup_alone: Callable[[], bool] | None = None,
        teardown_hold: Callable[[], AbstractContextManager] | None = None,
        plain_answers: bool = False,
    ):
        self.setup = setup  # "module:function" run once in the child before the first job (e.g. CUDA warm-up)
        self.preload = preload  # "module:function" names imported in the child's first phase (e.g. the job's)
        # What the OS holds each child to (kernels/confine.py): by default the interpreter, the libraries and the
        # packages of `setup` and `preload`, so every job function must be among those (`call` checks).
        code = (*preload, *([setup] if setup else []))
        self.confinement = Confinement(access or Access.for_code(code), limits or Limits())
        confine.make_undumpable()
        self.startup_timeout_s = startup_timeout_s
        self.setup_payload = setup_payload or (lambda: None)
        self.setup_alone = setup_alone or (lambda: False)
        self.spares = max(0, spares)
        # Held from an ended child's kill until its process is gone (its CUDA context torn down), when given: the
        # next job then starts at once, and only its timed part waits for the teardown (GpuJudge: the device lock,
        # shared). Without it the gap between jobs waits for the teardown.
        self.teardown_hold = teardown_hold
        # Read the children's answers as plain data only (a child that runs a reader's Python: `_Child.receive`).
        self.plain_answers = plain_answers
        self._reapers: list[threading.Thread] = []
        self.setup_value: Any = None  # what the latest completed setup returned
        self.setup_wait_ms = 0.0  # how long the latest call waited for setups to finish before its job
        self.setups_done = 0  # setups that answered OK
        self.spare_failures = 0  # spares whose setup failed or that died before their job (replaced)
        self._child: _Child | None = None
        self._spares: list[_Child] = []

    @property
    def alive(self) -> bool:
        return self._child is not None and self._child.alive

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    @property
    def ready_spares(self) -> int:
        return sum(spare.stage is Stage.READY for spare in self._spares)

    def start(self) -> Outcome:
        """Start the child and wait until its setup has run; the Outcome reports a failed setup."""
        self.spawn()
        return self._await_setup(self._child)

    def spawn(self) -> None:
        """Start a new child (ending any current one) and release it at once: its setup then runs while the
        caller does other work; the next `call` waits for it. Spares are kept."""
        self._end(self._child)
        self._child = self._new_child()
        self._release(self._child)

    def prepare_spares(self) -> None:
        """`spawn_spares`, then `release_spares`."""
        self.spawn_spares()
        self.release_spares()

    def spawn_spares(self) -> None:
        """Start the first phase (no device work) of spares, e.g. during a job, until `spares` of them are
        importing or imported: each is released into its setup (`release_spares`) as its imports end."""
        self._drop_dead_spares()
        while sum(not s.released for s in self._spares) < self.spares:
            self._spares.append(self._new_child())

    def _release(self, child: _Child) -> None:
        child.release(self.setup_payload(), measuring=self.setup_alone())

    def release_spares(self) -> None:
        """Release imported spares into their setups now, until `spares` are setting up or set up; none while
        the next setup would measure or the current child's does (it is released alone, as the current child)."""
        if self.setup_alone() or (self._child is not None and self._child.measuring and self._child.setting_up):
            return
        released = sum(s.released for s in self._spares)
        for spare in [s for s in self._spares if not s.released]:
            if released >= self.spares:
                return
            if spare.poll_imported():
                self._release(spare)
                released += 1

    def promote(self) -> None:
        """In a gap between jobs: end the current child; a spare (set up if one is) or a new child becomes
        current, released into its setup if it was not; refill the pool when no set-up spare is left."""
        old = self._child
        if old is not None:
            old.kill()
            if self.teardown_hold is not None:
                self._reap_beside(old)  # the hold is taken now, before any child is released below
                old = None
        self._child = self._take_spare() or self._new_child()
        if not self._child.released:
            self._release(self._child)
        self.release_spares()  # refill: keep `spares` setting up or set up
        self._end(old)  # without a hold: the gap waits for its CUDA context's teardown

    def _reap_beside(self, child: _Child) -> None:
        """Reap a killed child in a thread that holds `teardown_hold` from now until its process is gone, so that
        no timed part and no measuring setup begins while its CUDA context is torn down."""
        held = ExitStack()
        held.enter_context(self.teardown_hold())

        def reap() -> None:
            with held:
                child.end()

        self._reapers = [t for t in self._reapers if t.is_alive()]
        reaper = threading.Thread(target=reap, name=f"reap-{child.pid}", daemon=True)
        reaper.start()
        self._reapers.append(reaper)

    def discard_set_up(self) -> None:
        """End the current child and every spare released into its setup (e.g. they hold ceilings past their
        age); spares still importing are kept."""
        self._end(self._child)
        self._child = None
        for spare in [s for s in self._spares if s.released]:
            self._spares.remove(spare)
            self._end(spare)

    def _take_spare(self) -> _Child | None:
        self._drop_dead_spares()
        for spare in list(self._spares):
            spare.poll_imported()
            # Its setup answered (SETTING_UP: the next message is that answer, not its "imported" notice): read it.
            if spare.stage is Stage.SETTING_UP and spare.conn.poll(0):
                self._await_setup(spare)
        if not self._spares:
            return None
        best = max(self._spares, key=lambda s: _PREFERRED.index(s.stage))
        self._spares.remove(best)
        return best

    def _drop_dead_spares(self) -> None:
        for spare in [s for s in self._spares if not s.alive]:
            self._spares.remove(spare)
            self._end(spare)
            self.spare_failures += 1

    def _new_child(self) -> _Child:
        found = confine.require()  # SandboxUnavailable: no child starts unconfined unless the operator opted out
        confinement = dataclasses.replace(self.confinement, enforce=found.confined)
        return _Child(self.setup, self.preload, confinement, self.plain_answers)

    def _await_setup(self, child: _Child) -> Outcome:
        outcome = self._wait(child, self.startup_timeout_s, time.perf_counter())
        child.setup_answered(outcome.status is Status.OK)
        if outcome.status is Status.OK:
            self.setup_value = outcome.value
            self.setups_done += 1
        elif child is self._child:
            self._end(self._child)
            self._child = None
        else:
            self._spares.remove(child)
            self._end(child)
            self.spare_failures += 1
        return outcome

    def call(
        self,
        func: str,
        payload: Any = None,
        timeout_s: float = 60.0,
        overlap: Callable[[], None] | None = None,
    ) -> Outcome:
        """Run func(payload) in the child; start (or restart) the child first when needed. The child's setup
        finishes before the job is sent, and so does a spare's that measures (the others run beside the job,
        sharing the device lock with its timed rounds). `overlap` is work of the parent's (GpuJudge:
        `spawn_spares`) done where it delays nothing: before waiting for those setups when there is one to wait
        for, else once the job is sent."""
        self._check_readable(func)
        if self._child is None or not (self._child.setting_up or self._child.alive):
            self.spawn()
        awaited = [s for s in self._spares if s.setting_up and s.measuring]
        if overlap is not None and (self._child.setting_up or awaited):
            overlap()
            overlap = None
        begin = time.perf_counter()
        own = self._await_setup(self._child) if self._child.setting_up else None
        for spare in awaited:
            self._await_setup(spare)
        self.setup_wait_ms = (time.perf_counter() - begin) * 1e3
        if own is not None and own.status is not Status.OK:
            return own
        begin = time.perf_counter()
        self._child.conn.send((func, payload))
        if overlap is not None:
            overlap()
        # A spare whose imports finish while the job runs starts its setup then.
        meanwhile = self.release_spares if self._spares else None
        outcome = self._wait(self._child, timeout_s, begin, meanwhile)
        if outcome.status in (Status.TIMED_OUT, Status.CRASHED) or getattr(outcome.value, "poisons_worker", False):
            self._end(self._child)
            self._child = None
        return outcome

    def _check_readable(self, func: str) -> None:
        package = confine.package_dir(func.partition(":")[0].split(".")[0])
        if package not in self.confinement.access.read:
            raise ValueError(f"{func}: its package is not readable in the sandbox; name it in `preload` or `access`")

    def close(self) -> None:
        """End the current child and every spare."""
        children = [c for c in (self._child, *self._spares) if c is not None]
        for child in children:
            child.kill()
        for child in children:
            self._end(child)
        for reaper in self._reapers:
            reaper.join()
        self._child, self._spares, self._reapers = None, [], []

    @staticmethod
    def _end(child: _Child | None) -> None:
        if child is not None:
            child.end()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @staticmethod
    def _wait(child: _Child, timeout_s: float, begin: float, meanwhile: Callable[[], None] | None = None) -> Outcome:
        """The child's answer, or its death, or the timeout (then the child is killed). `meanwhile` runs every
        MEANWHILE_S while waiting (releasing spares whose imports finish during a job)."""
        deadline = begin + timeout_s
        message, ready = child.early, True
        child.early = None
        while message is None:
            remaining = max(0.0, deadline - time.perf_counter())
            ready = child.conn.poll(min(remaining, MEANWHILE_S) if meanwhile else remaining)
            if not ready and meanwhile and remaining > MEANWHILE_S:
                meanwhile()
                continue
            if not ready:
                break
            try:
                message = child.receive()
            except (EOFError, OSError):
                break
            if message[0] == "imported":  # the notice of its first phase, unread until now
                child.heard_imported(message[1])
                message = None
        wall_ms = (time.perf_counter() - begin) * 1e3
        output, output_bytes = _read_output(child.log_fd)
        if message is not None:
            kind, body = message
            if kind == "ok":
                return Outcome(Status.OK, value=body, output=output, output_bytes=output_bytes, wall_time_ms=wall_ms)
            return Outcome(Status.ERROR, error=body, output=output, output_bytes=output_bytes, wall_time_ms=wall_ms)
        status = Status.CRASHED
        if not ready and child.alive:
            child.kill()
            status = Status.TIMED_OUT
        child.join(timeout=10)
        return Outcome(
            status, exit_code=child.exit_code, output=output, output_bytes=output_bytes, wall_time_ms=wall_ms
        )


def _read_output(log_fd: int) -> tuple[str, int]:
    try:
        head = os.pread(log_fd, OUTPUT_RETURNED_BYTES, 0)
        size = os.fstat(log_fd).st_size
    except OSError:
        return "", 0
    return head.decode("utf-8", errors="replace"), size


def run_once(
    func: str,
    payload: Any = None,
    timeout_s: float = 60.0,
    limits: Limits | None = None,
    access: Access | None = None,
    preload: tuple[str, ...] = (),
    plain_answers: bool = False,
) -> Outcome:
    """Run one job in a fresh child and end it (`preload`: more "module:function" names imported before the child
    confines itself; `plain_answers`: see `Worker`)."""
    with Worker(limits=limits, access=access, preload=(func, *preload), plain_answers=plain_answers) as worker:
        return worker.call(func, payload, timeout_s)


def resolve(name: str):
    module_name, _, attr = name.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def child_entry() -> None:
    """The child's main (see _BOOT): its start message, then `_child_main` with its output on the parent's log."""
    conn = Connection(int(sys.argv[2]))
    setup, preload, confinement = conn.recv()
    # The child's streams for the rest of its life (fds 1 and 2 are the log): nothing to close them at the end.
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="replace")  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="replace")  # noqa: SIM115
    _child_main(conn, setup, preload, confinement)


def _child_main(conn: Connection, setup: str | None, preload: tuple[str, ...], confinement: Confinement) -> None:
    try:
        # First phase: imports only, which may run beside another child's timed job; then the OS confinement,
        # before the first payload (and so before anything a reader wrote) arrives.
        for name in preload:
            resolve(name)
        setup_function = resolve(setup) if setup else None
        begin = time.perf_counter()
        confine.apply(confinement)
        conn.send(("imported", (time.perf_counter() - begin) * 1e3))
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


def _rewind_output() -> None:
    """Each job's output starts empty (O_APPEND writes follow the truncation)."""
    _flush_quietly()
    os.ftruncate(1, 0)


def _flush_quietly() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):  # EFBIG once the output cap is reached
            stream.flush()

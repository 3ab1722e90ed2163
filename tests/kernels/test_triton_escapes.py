"""Triton submissions with the parse check switched off (issue 46): the sandbox alone holds.

The reader's file runs (its module-level code, its default values) in the PTX child, as a hostile file would if the
parse check were fooled. Every way out is tried in one file, each attempt's outcome collected and raised at the end,
so the compile result's log shows what happened; no canary secret may appear anywhere in the result. The ptxas
child, the one child that may execve, runs test job functions (tests/kernels/triton_escapes.py): only Triton's
ptxas executes there. Needs Landlock and seccomp, as tests/kernels/test_confine.py."""

from __future__ import annotations

import ast
import json
import os
import secrets
import shutil
import sys
import tempfile
import time

import pytest

from kernels import confine, sandbox
from kernels import triton_compiler as tc
from kernels import triton_source as triton_source_mod
from kernels.results import Verdict

pytestmark = pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())

KERNEL_AND_PLAN = '''
@triton.jit
def k(a, b, c, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(c + offsets, tl.load(a + offsets, mask=offsets < n), mask=offsets < n)


PLAN = """
[[launch]]
kernel = "k"
grid = ["cdiv(N, 256)"]
constexprs = { BLOCK = 256 }
"""
'''

ATTACK = """
import os, socket, subprocess, sys
import triton
import triton.language as tl

SECRET_PATH = {secret_path!r}
PARENT = {parent!r}
MARKER = {marker!r}
PTXAS = {ptxas!r}
tried = {{}}

def attempt(name, action):
    try:
        tried[name] = "GOT " + repr(action())
    except BaseException as exc:
        tried[name] = "refused " + type(exc).__name__ + " " + str(getattr(exc, "strerror", "") or exc)

attempt("secret_file", lambda: open(SECRET_PATH).read())
attempt("parent_environ", lambda: open(f"/proc/{{PARENT}}/environ").read())
attempt("parent_mem", lambda: open(f"/proc/{{PARENT}}/mem", "rb").read(64))
attempt("project_root", lambda: open({pyproject!r}).read())
attempt("etc_shadow", lambda: open("/etc/shadow").read())
attempt("own_environ", lambda: dict(os.environ))
attempt("proc_environ", lambda: open("/proc/self/environ").read())
attempt("socket", lambda: socket.create_connection(("127.0.0.1", 6379), timeout=2))
attempt("fork", lambda: os.fork())
attempt("shell", lambda: subprocess.run(["/bin/sh", "-c", "echo escaped"], capture_output=True).stdout)
attempt("system", lambda: (os.system("touch " + MARKER), os.path.exists(MARKER)))
attempt("exec_ptxas", lambda: subprocess.run([PTXAS, "--version"], capture_output=True).returncode)
attempt("write_outside", lambda: open(MARKER, "w").write("escaped"))
attempt("write_scratch", lambda: open(os.path.join(os.environ["HOME"], "mine"), "w").write("fine"))

def default_value_attack(path=attempt("default_value", lambda: open(SECRET_PATH).read())):
    return path
"""
RAISE = '\nraise RuntimeError("ATTEMPTS " + repr(tried))\n'


@pytest.fixture(scope="module")
def canaries():
    """Secrets in the worker's environment and in a private file (module-wide: one attack compile serves all)."""
    token = "CANARY" + secrets.token_hex(8)
    saved = {name: os.environ.get(name) for name in ("STRIPE_SECRET_KEY", "DATABASE_URL", "SECRET_KEY")}
    os.environ.update(STRIPE_SECRET_KEY=f"sk_live_{token}", DATABASE_URL=f"postgres://k:{token}@db/k", SECRET_KEY=token)
    folder = tempfile.mkdtemp(prefix="worker-secrets-")
    path = os.path.join(folder, "env")
    with open(path, "w") as file:
        file.write(f"EMAIL_HOST_PASSWORD={token}\n")
    os.chmod(path, 0o600)
    yield token, path
    shutil.rmtree(folder)
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="module")
def unchecked():
    """The parse check switched off: the file runs as written, and only the OS stands in the way."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(triton_source_mod, "check", lambda source: None)
        yield


def leaked(token: str, result) -> bool:
    return token in json.dumps(result.to_dict(), default=str)


@pytest.fixture(scope="module")
def attacked(canaries, unchecked):
    token, secret_path = canaries
    marker = os.path.join(tempfile.gettempdir(), f"triton-escaped-{token}")
    source = ATTACK.format(
        secret_path=secret_path,
        parent=os.getpid(),
        marker=marker,
        ptxas=tc.ptxas_path(90),
        pyproject=os.path.join(os.path.dirname(os.path.dirname(tc.__file__)), "pyproject.toml"),
    )
    result = tc.compile_triton(source + KERNEL_AND_PLAN + RAISE, "vector_add")
    yield result, token, marker
    if os.path.exists(marker):
        os.unlink(marker)


def attempts(result) -> dict:
    assert result.verdict is Verdict.COMPILE_ERROR, (result.verdict, result.message, result.log[-2000:])
    line = next(line for line in result.log.splitlines() if line.startswith("RuntimeError: ATTEMPTS "))
    return ast.literal_eval(line.split("ATTEMPTS ", 1)[1])


def test_the_attack_file_runs_in_the_child_and_nothing_leaks(attacked):
    result, token, marker = attacked
    tried = attempts(result)
    assert not leaked(token, result)
    assert not os.path.exists(marker)
    assert tried["write_scratch"].startswith("GOT")  # the file did run, with its scratch folder writable


@pytest.mark.parametrize(
    "attempt",
    ["secret_file", "default_value", "parent_environ", "parent_mem", "project_root", "etc_shadow", "write_outside"],
)
def test_files_outside_the_childs_paths_do_not_open(attacked, attempt):
    result, _token, _marker = attacked
    assert attempts(result)[attempt].startswith("refused PermissionError"), attempts(result)[attempt]


@pytest.mark.parametrize("attempt", ["fork", "shell", "exec_ptxas"])
def test_the_ptx_child_starts_no_process_not_even_ptxas(attacked, attempt):
    result, _token, _marker = attacked
    assert attempts(result)[attempt].startswith("refused PermissionError"), attempts(result)[attempt]


def test_os_system_starts_no_shell(attacked):
    """glibc's system() answers 127 << 8 when it cannot start the shell (posix_spawn refused): no marker file."""
    result, _token, marker = attacked
    assert attempts(result)["system"] == "GOT (32512, False)"
    assert not os.path.exists(marker)


def test_no_network_from_the_ptx_child(attacked):
    result, _token, _marker = attacked
    assert attempts(result)["socket"].startswith("refused PermissionError")


def test_the_ptx_childs_environment_holds_no_secret(attacked):
    result, token, _marker = attacked
    tried = attempts(result)
    assert tried["own_environ"].startswith("GOT") and token not in tried["own_environ"]
    assert token not in tried["proc_environ"]


def test_a_crafted_pickle_on_the_pipe_runs_nothing_in_the_parent(canaries, unchecked):
    """The reader's code writes its own answer to the child's pipe: a pickle that would run a command when
    unpickled. The parent reads the PTX child's answers as plain data only: an internal error, nothing run."""
    token, _ = canaries
    marker = os.path.join(tempfile.gettempdir(), f"triton-pickled-{token}")
    source = (
        f"""
import os, pickle, sys
from multiprocessing.connection import Connection
import triton
import triton.language as tl

class Boom:
    def __reduce__(self):
        return (os.system, ("touch {marker}",))

Connection(int(sys.argv[2]), readable=False).send_bytes(pickle.dumps(("ok", Boom())))
"""
        + KERNEL_AND_PLAN
    )
    result = tc.compile_triton(source, "vector_add")
    assert result.verdict is Verdict.INTERNAL_ERROR, (result.verdict, result.message)
    assert not os.path.exists(marker)


@pytest.mark.parametrize("message", ["('imported', 1.0)", "('error', 42)", "['ok']", "('ok',)"])
def test_a_forged_message_on_the_pipe_is_an_error_not_a_crash_of_the_parent(unchecked, message):
    """Messages a reader's file could forge in the PTX child's protocol: a second "imported" notice, an error that
    is no text, messages of the wrong shape. Each is the child's error (internal_error), never an exception here."""
    source = (
        f"""
import pickle, sys
from multiprocessing.connection import Connection
import triton
import triton.language as tl

Connection(int(sys.argv[2]), readable=False).send_bytes(pickle.dumps({message}))
"""
        + KERNEL_AND_PLAN
    )
    result = tc.compile_triton(source, "vector_add")
    assert result.verdict is Verdict.INTERNAL_ERROR, (result.verdict, result.message)


def test_python_that_triton_calls_while_compiling_a_kernel_is_held_too(canaries, unchecked):
    """Triton calls a plain Python function it meets in a kernel body while it compiles: tl.core.builtins is
    Python's builtins (the parse check refuses the chain; here it is off). The open() does run, in the PTX child,
    and the OS refuses the secret."""
    token, secret_path = canaries
    source = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(a, b, c, n, BLOCK: tl.constexpr):\n"
        f"    tl.core.builtins.print('stolen', tl.core.builtins.open({secret_path!r}).read())\n"
        "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(c + offsets, tl.load(a + offsets, mask=offsets < n), mask=offsets < n)\n"
        + KERNEL_AND_PLAN[KERNEL_AND_PLAN.index("\n\nPLAN") :]
    )
    result = tc.compile_triton(source, "vector_add")
    assert result.verdict is Verdict.COMPILE_ERROR, (result.verdict, result.message)
    assert result.message == "PermissionError(13, 'Permission denied')" and "submission.py, line 7" in result.log
    assert not leaked(token, result)


def test_plain_loads_refuses_classes_and_keeps_data():
    import pickle

    assert sandbox.plain_loads(pickle.dumps(("ok", {"a": [1, 2.5, b"x", None, True]}))) == (
        "ok",
        {"a": [1, 2.5, b"x", None, True]},
    )
    kind, why = sandbox.plain_loads(pickle.dumps(("ok", Verdict.COMPILED)))
    assert kind == "error" and "no classes" in why
    kind, _ = sandbox.plain_loads(b"\x80\x04garbage")
    assert kind == "error"


def test_a_module_level_time_bomb_meets_the_time_limit(unchecked):
    source = "import triton\nimport triton.language as tl\nwhile True:\n    pass\n" + KERNEL_AND_PLAN
    result = tc.compile_triton(source, "vector_add", timeout_s=2)
    assert result.verdict is Verdict.TIMED_OUT, (result.verdict, result.message)


# ---- the ptxas child: the one that may execve -----------------------------------------------------------------

T = "tests.kernels.triton_escapes:"
LIBC = os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")


def ptxas_child(func: str, payload):
    ptxas = tc.ptxas_path(90)
    access = tc.ptxas_access(ptxas).plus(read=(confine.package_dir("tests"),))
    outcome = sandbox.run_once(func, payload, 60, sandbox.Limits(), access, preload=tc.PTXAS_PRELOAD)
    assert outcome.status is sandbox.Status.OK, outcome.error or outcome.died_of
    return outcome.value


@pytest.mark.skipif(not os.path.exists(LIBC), reason="glibc's libc.so.6 is elsewhere on this machine")
def test_the_ptxas_child_executes_ptxas_and_nothing_else():
    ptxas = tc.ptxas_path(90)
    found = ptxas_child(T + "executions", {"ptxas": ptxas, "python": sys.executable, "program": LIBC})
    assert found["ptxas"] == "ran: exit 0", found
    for name in ("shell", "python", "readable", "copy"):
        assert found[name].startswith("refused: PermissionError"), (name, found[name])


def test_a_ptxas_left_running_dies_with_its_child():
    """The parent kills the ptxas child at its timeout; the ptxas it started (reading a FIFO nobody writes) goes too,
    instead of running on as an orphan."""
    name = f"hung-{secrets.token_hex(6)}.ptx"
    ptxas = tc.ptxas_path(90)
    access = tc.ptxas_access(ptxas).plus(read=(confine.package_dir("tests"),))
    outcome = sandbox.run_once(T + "ptxas_on_a_fifo", {"ptxas": ptxas, "name": name}, 3, sandbox.Limits(), access)
    assert outcome.status is sandbox.Status.TIMED_OUT, (outcome.status, outcome.error)
    for _ in range(50):
        if not any(name in cmdline for cmdline in command_lines()):
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"a ptxas reading {name} outlived its child")


def command_lines() -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as file:
                    found.append(file.read().decode(errors="replace"))
            except OSError:
                continue
    return found


def test_the_ptxas_child_reads_no_secret_and_has_no_network(canaries):
    token, secret_path = canaries
    found = ptxas_child(T + "reads", {"secret": secret_path, "parent": f"/proc/{os.getpid()}/environ"})
    assert found["secret"].startswith("refused") and found["parent"].startswith("refused"), found
    assert found["network"].startswith("refused: PermissionError"), found
    assert token not in json.dumps(found)

"""What an attacker would run if they had code execution in a sandboxed child (kernels/confine.py), as job
functions: each tries one way out and returns what it got, so the test in the parent can look for secrets in it.
They run in the compile child's confinement (tests/kernels/test_confine.py), the strictest a reader meets."""

from __future__ import annotations

import os
import resource
import socket
import subprocess

from kernels import compiler


def environment(_payload=None) -> dict:
    with open("/proc/self/environ", "rb") as raw:
        return {"os_environ": dict(os.environ), "proc_environ": raw.read().decode(errors="replace")}


def read_file(path: str) -> str:
    """The file's text, or the error that refused it."""
    try:
        with open(path, errors="replace") as file:
            return file.read()
    except OSError as exc:
        return f"refused: {exc.__class__.__name__}: {exc.strerror}"


def through_own_proc(target: str) -> dict:
    """The child's own /proc entry (where a GPU child may write, for CUDA's driver): its magic links to the root
    and to the working folder lead to `target`, and a write with truncation to the worker's entry."""
    tried = {
        "root_link": read_file(f"/proc/self/root{target}"),
        "cwd_link": read_file(f"/proc/self/cwd{target}"),
    }
    for name, path in (("own_comm", "/proc/self/comm"), ("parent_comm", f"/proc/{os.getppid()}/comm")):
        try:
            with open(path, "w") as comm:
                comm.write("escaped")
            tried[name] = "written"
        except OSError as exc:
            tried[name] = f"refused: {exc.__class__.__name__}: {exc.strerror}"
    return tried


def include_through_a_link(target: str) -> dict:
    """A link in the child's own scratch folder (its HOME) to a file outside, then NVRTC told to include it."""
    link = os.path.join(os.environ["HOME"], "innocent.h")
    os.symlink(target, link)
    ok, log, _cubin, _names = compiler.nvrtc_compile(f'#include "{link}"\n', [], "sm_90")
    return {"ok": ok, "log": log}


def connect(address: tuple[str, int]) -> str:
    try:
        with socket.create_connection(address, timeout=2):
            return "connected"
    except OSError as exc:
        return f"refused: {exc.__class__.__name__}: {exc.strerror}"


def fork_bomb(_payload=None) -> dict:
    """Processes by fork and by exec; a thread must still start (CUDA and NVRTC make threads)."""
    tried = {}
    try:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        tried["fork"] = "forked"
    except OSError as exc:
        tried["fork"] = f"refused: {exc.strerror}"
    try:
        tried["exec"] = subprocess.run(["/bin/true"], timeout=5).returncode
    except OSError as exc:
        tried["exec"] = f"refused: {exc.strerror}"
    import threading

    done = []
    thread = threading.Thread(target=lambda: done.append(True))
    thread.start()
    thread.join()
    tried["thread"] = bool(done)
    return tried


def limits_and_capabilities(_payload=None) -> dict:
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    raised = "kept"
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        raised = "raised"
    except (OSError, ValueError) as exc:
        raised = f"refused: {exc}"
    return {
        "core": resource.getrlimit(resource.RLIMIT_CORE),
        "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
        "cap_eff": fields["CapEff"].strip(),
        "no_new_privs": fields["NoNewPrivs"].strip(),
        "seccomp": fields["Seccomp"].strip(),
        "core_limit_raise": raised,
    }


def crash_for_a_core(_payload=None) -> None:
    os.abort()


def cuda_then_escapes(secret_path: str) -> dict:
    """A GPU child's host side after its CUDA context exists, as a judged job's child is."""
    import cupy

    values = cupy.arange(1 << 20, dtype=cupy.float32)
    kernel_ran = float((values * 2).sum()) == float(values.sum()) * 2
    return {
        "kernel_ran": kernel_ran,
        "secret": read_file(secret_path),
        "parent": read_file(f"/proc/{os.getppid()}/environ"),
        "network": connect(("127.0.0.1", 6379)),
        "fork": fork_bomb(),
        "environment": environment(),
    }


def sockets(_payload=None) -> dict:
    """What a child may do with sockets: a TCP connection to the worker's Redis, a UDP socket, and a Unix socket
    it listens on and connects to itself (what ncu and its target do, issue 43)."""
    import tempfile

    tried = {"tcp": connect(("127.0.0.1", 6379))}
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
        tried["udp"] = "made"
    except OSError as exc:
        tried["udp"] = f"refused: {exc.strerror}"
    path = os.path.join(tempfile.gettempdir(), "s")
    try:
        with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
            server.bind(path)
            server.listen(1)
            client.connect(path)
            client.sendall(b"x")
            tried["unix"] = "connected"
    except OSError as exc:
        tried["unix"] = f"refused: {exc.strerror}"
    try:  # TCP Fast Open: a connection made by the first send, past connect()
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as fast:
            fast.sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", 6379))
            tried["tcp_fastopen"] = "sent"
    except OSError as exc:
        tried["tcp_fastopen"] = f"refused: {exc.strerror}"
    tried["tcp_loopback_ncu_port"] = _tcp_loopback(49152 + 7)  # inside ncu's port range (kernels/profile.py)
    tried["tcp_loopback_other_port"] = _tcp_loopback(40000)
    return tried


def _tcp_loopback(port: int) -> str:
    """Listen on 127.0.0.1:port and connect to it, as ncu and the library it injects into its target do."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", port))
            server.listen(1)
            with socket.create_connection(("127.0.0.1", port), timeout=2) as client:
                client.sendall(b"x")
        return "connected"
    except OSError as exc:
        return f"refused: {exc.strerror}"


# What a process of a profile child runs (ncu's target stands for it): its own /proc entry, its parent's, then
# the same after it narrows /proc to its own entry (argv: sys.path as JSON, the kernels folder, the layer as JSON).
_STARTED_PROCESS = """
import importlib.util, json, os, sys
sys.path[:] = json.loads(sys.argv[1])
spec = importlib.util.spec_from_file_location(
    "kernels", sys.argv[2] + "/__init__.py", submodule_search_locations=[sys.argv[2]]
)
package = importlib.util.module_from_spec(spec)
sys.modules["kernels"] = package
spec.loader.exec_module(package)
from kernels import confine

def tried(path, mode):
    try:
        with open(path, mode) as file:
            file.write("escaped") if mode == "w" else file.read()
        return "written" if mode == "w" else "read"
    except OSError as exc:
        return f"refused: {exc.__class__.__name__}: {exc.strerror}"

def look():
    return {
        "own_comm": tried("/proc/self/comm", "w"),
        "parent_status": tried(f"/proc/{os.getppid()}/status", "r"),
        "parent_comm": tried(f"/proc/{os.getppid()}/comm", "w"),
    }

answer = {"before": look()}
if sys.argv[3] != "null":
    confine.narrow_to_own_proc(confine.Access.from_dict(json.loads(sys.argv[3])))
    answer["narrowed"] = look()
print(json.dumps(answer))
"""


def processes_and_proc(worker_pid: int) -> dict:
    """In a profile child (Access.descendants_proc): a process it starts reaches its own /proc entry (as ncu's
    target's CUDA driver must) and, until it narrows /proc, its parent's; the worker's secrets stay closed; and
    once this child narrows its own /proc, what it starts after has no entry of its own."""
    import json
    import sys

    from kernels import confine

    layer = json.dumps(confine.confined_with().to_dict())
    program = [sys.executable, "-I", "-S", "-c", _STARTED_PROCESS, json.dumps(sys.path), confine.package_dir("kernels")]

    def start(narrow: bool) -> dict:
        ran = subprocess.run([*program, layer if narrow else "null"], capture_output=True, text=True, timeout=30)
        return json.loads(ran.stdout) if ran.returncode == 0 else {"failed": ran.stderr[-500:]}

    answer = {
        "worker_environ": read_file(f"/proc/{worker_pid}/environ"),
        "started": start(narrow=True),
    }
    confine.narrow_to_own_proc(confine.confined_with())
    answer["started_after_narrowing"] = start(narrow=False)
    return answer

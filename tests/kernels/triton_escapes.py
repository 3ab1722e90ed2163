"""Job functions for the ptxas child of Triton submissions (kernels/triton_compiler.py), run in its confinement by
tests/kernels/test_triton_escapes.py: the one child kind that may execve. Each tries one way out and returns what it
got. (The PTX child's escapes are the reader's own file: the attack sources in that test.)"""

from __future__ import annotations

import os
import socket
import subprocess


def run(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20)
        return f"ran: exit {done.returncode}"
    except OSError as exc:
        return f"refused: {exc.__class__.__name__}: {exc.strerror}"


def executions(paths: dict) -> dict:
    """ptxas (allowed), then a shell, the interpreter, a program it may read (glibc's libc.so.6 runs as one), that
    program copied into the writable scratch folder (all refused)."""
    copy = os.path.join(os.environ["HOME"], "copied-program")
    try:
        with open(paths["program"], "rb") as source, open(copy, "wb") as target:
            target.write(source.read())
        os.chmod(copy, 0o755)
    except OSError as exc:
        copy_note = f"not copied: {exc.strerror}"
    else:
        copy_note = "copied"
    return {
        "ptxas": run([paths["ptxas"], "--version"]),
        "shell": run(["/bin/sh", "-c", "true"]),
        "python": run([paths["python"], "-c", "pass"]),
        "readable": run([paths["program"]]),
        "copy": run([copy]) if copy_note == "copied" else copy_note,
    }


def reads(paths: dict) -> dict:
    found = {}
    for name, path in paths.items():
        try:
            with open(path, errors="replace") as file:
                found[name] = file.read()
        except OSError as exc:
            found[name] = f"refused: {exc.__class__.__name__}: {exc.strerror}"
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=2).close()
        found["network"] = "connected"
    except OSError as exc:
        found["network"] = f"refused: {exc.__class__.__name__}: {exc.strerror}"
    return found


def ptxas_on_a_fifo(payload: dict) -> str:
    """ptxas told to read a FIFO nobody writes: it waits forever, so the parent's timeout kills this child. The
    ptxas process must die with it (kernels/triton_compiler.py, `tie_processes_to_this_one`)."""
    from kernels import triton_compiler

    if payload.get("tie", True):  # False: how it went before (the test's control)
        triton_compiler.tie_processes_to_this_one()
    fifo = os.path.join(os.environ["HOME"], payload["name"])
    os.mkfifo(fifo)
    subprocess.run([payload["ptxas"], "--gpu-name=sm_90a", fifo, "-o", fifo + ".o"])
    return "ptxas returned"

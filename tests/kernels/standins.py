"""CPU stand-ins for misbehaving GPU children: the sandbox treats them exactly like a kernel run."""

import ctypes
import os
import sys
import time


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


def fail(_payload=None):
    raise ValueError("deliberate")


class Poisoned:
    poisons_worker = True


def poisoned(_payload=None):
    return Poisoned()


def failing_setup():
    raise RuntimeError("setup failed")


def slow_setup():
    time.sleep(1.0)

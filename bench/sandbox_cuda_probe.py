"""Which of the sandbox's mechanisms lets CUDA's driver work on this GPU node (kernels/confine.py).

    python3 bench/sandbox_cuda_probe.py

Starts one fresh interpreter per line, applies one mechanism of a GPU child's confinement (or all of them, as
`confine.apply` does), then makes a CUDA context and runs a CuPy reduction, and prints OK or the CUDA error. On
the H200 of 2026-12-07 the first version of the policy failed here with cudaErrorOperatingSystem twice over: the
seccomp filter refused `socket`, `bind` and `listen` (the driver binds a Unix socket), and Landlock refused writes
to the child's own /proc entry; `Access.cuda_driver` allows exactly those. Run it first on a new kind of node or
driver: a FAIL on the last line means GPU jobs would fail there with internal_error.
"""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import sys
from kernels import confine, judge
import cupy

step = sys.argv[1]
access = judge.gpu_access((judge.JOB,), None)
if step == "rlimits":
    confine._set_limits(confine.Limits())
elif step == "landlock":
    confine._libc().prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS, which Landlock requires
    confine._restrict_files(access, confine.support().landlock_abi)
elif step == "seccomp":
    confine._libc().prctl(38, 1, 0, 0, 0)
    confine._filter_calls(access.cuda_driver)
elif step == "capabilities":
    confine._drop_capabilities()
elif step == "all":
    confine.apply(confine.Confinement(access))
try:
    cupy.cuda.runtime.getDevice()
    total = int(cupy.arange(1000).sum())
    print(f"{step:13s} OK (sum {total})", flush=True)
except Exception as exc:
    print(f"{step:13s} FAIL {exc}", flush=True)
"""


def main() -> None:
    from kernels import confine

    print(f"sandbox: {confine.support().summary()}")
    for step in ("none", "rlimits", "landlock", "seccomp", "capabilities", "all"):
        subprocess.run([sys.executable, "-c", CHILD, step], timeout=120, check=False)


if __name__ == "__main__":
    main()

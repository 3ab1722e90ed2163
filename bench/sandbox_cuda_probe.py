"""Which of the sandbox's mechanisms lets CUDA's driver work on this GPU node (kernels/confine.py).

    python3 bench/sandbox_cuda_probe.py
    python3 bench/sandbox_cuda_probe.py --find-paths     # where Landlock is what fails: which paths CUDA needs
    python3 bench/sandbox_cuda_probe.py --find-rights    # which rights in its own /proc entry
    python3 bench/sandbox_cuda_probe.py --profile        # the profile child's confinement (issue 43): ncu profiling
    python3 bench/sandbox_cuda_probe.py --profile --find-paths      # the sgemm example in each line instead
    python3 bench/sandbox_cuda_probe.py --profile --find-calls      # where seccomp is what fails: which call

Starts one fresh interpreter per line, applies one mechanism of a GPU child's confinement (or all of them, as
`confine.apply` does), then makes a CUDA context and runs a CuPy reduction, and prints OK or the CUDA error. On
the H200 and H100 nodes of 2026-12-07 the first version of the policy failed here with cudaErrorOperatingSystem
twice over: the seccomp filter refused `socket`, `bind` and `listen` (the driver binds a Unix socket), and
Landlock refused the driver's opens in the child's own /proc entry (writes, and opens that truncate);
`Access.cuda_driver` allows exactly those. Run it first on a new kind of node or driver: a FAIL on the last line
means GPU jobs would fail there with internal_error.

With --profile each line runs the profile child's job instead (kernels/profile_child.py: ncu profiling the sgemm
example at a test shape, its target inheriting the confinement) under the profile child's rights, and prints the
target's own last words where it fails: on the H100 of 2026-12-07 a sandboxed target failed to make its CUDA context
under ncu (cudaErrorOperatingSystem), and this says which mechanism refused what.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

# Every child first gets a private scratch folder, as the sandbox gives it (TMPDIR, CuPy's kernel cache), so that
# CuPy's first compile on a cold node has somewhere to write: without it a FAIL could be the probe's, not CUDA's.
SCRATCH = """
import os, tempfile
scratch = tempfile.mkdtemp(prefix="cuda-probe-")
os.environ["TMPDIR"] = scratch
os.environ["CUPY_CACHE_DIR"] = scratch
tempfile.tempdir = scratch
from kernels import confine, judge
import cupy

def gpu_access():
    return judge.gpu_access((judge.JOB,), None).plus(write=(scratch,))

def cuda_works():
    cupy.cuda.runtime.getDevice()
    return int(cupy.arange(1000).sum())

# The seccomp filter as confine.apply installs it for these rights (may_execute: new processes as well).
def filter_calls(access, may_execute=False):
    confine._libc().prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS, which seccomp and Landlock require
    confine._filter_calls(
        access.cuda_driver, may_execute=bool(access.execute) or may_execute, local_sockets=access.local_sockets,
        tcp=bool(access.tcp_ports),
    )
"""

# The same two functions for the profile child (--profile): its rights, and a profile of the sgemm example.
PROFILE = """
from kernels import compiler, problems, profile_child, profile_run
from kernels import profile as profile_mod
_ncu = profile_mod.find_ncu()
_compiled = compiler.compile_submission((problems.PROBLEMS_DIR / "sgemm" / "example.cu").read_text(), "sgemm")
_job = profile_child.ProfileJob(
    compiled=_compiled.to_dict(), sizes=dict(problems.load("sgemm").tests[-1].sizes), seed=1, ncu=_ncu,
    kernel_regex=profile_run.kernel_regex(_compiled), launch_count=len(_compiled.plan), metrics=(), timeout_s=90,
)

def gpu_access():
    return profile_child.profile_access(_ncu, profile_run.CHILD_CODE).plus(write=(scratch,))

def cuda_works():
    answer = profile_child.profile_job(_job)
    if not answer.get("ok"):
        raise RuntimeError(f"ncu exit {answer['returncode']}: {profile_mod.last_words(answer['output'])}")
    return "profiled"
"""


def prefix() -> str:
    """What every child starts with: its scratch folder, then a GPU child's or (--profile) the profile child's rights
    and work."""
    return SCRATCH + (PROFILE if "--profile" in sys.argv else "")


# One mechanism of the confinement (argv[1]), or all of them as `confine.apply` does.
CHILD = """
import sys
step = sys.argv[1]
access = gpu_access()
if step == "rlimits":
    confine._set_limits(confine.Limits())
elif step == "landlock":
    confine._libc().prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS, which Landlock requires
    confine._restrict_files(access, confine.support().landlock_abi)
    if access.tcp_ports:
        confine._restrict_tcp_ports(*access.tcp_ports)
elif step == "seccomp":
    filter_calls(access)
elif step == "capabilities":
    confine._drop_capabilities()
elif step == "all":
    confine.apply(confine.Confinement(access))
try:
    print(f"{step:13s} OK ({cuda_works()})", flush=True)
except Exception as exc:
    print(f"{step:13s} FAIL {exc}", flush=True)
"""

# A GPU child's Landlock rules plus every right on the paths given (argv[1], JSON).
CHILD_WITH_PATHS = """
import json, sys
confine._libc().prctl(38, 1, 0, 0, 0)
confine._restrict_files(gpu_access().plus(write=json.loads(sys.argv[1])), confine.support().landlock_abi)
cuda_works()
"""

# The child's own /proc entry with every right but the one named (argv[1]).
CHILD_WITHOUT_RIGHT = """
import sys
from landlock import FSAccess
left_out = FSAccess[sys.argv[1]] if sys.argv[1] != "nothing" else 0
confine._own_proc_rights = lambda cuda_driver: FSAccess.all() & ~left_out
confine._libc().prctl(38, 1, 0, 0, 0)
confine._restrict_files(gpu_access(), confine.support().landlock_abi)
cuda_works()
"""

# --profile: the profile child exactly as a GPU worker starts it (sandbox.run_once: the empty environment, the
# scratch folder, every mechanism), the judge's own path through kernels/profile_run.py but for the judging.
SANDBOXED = """
from kernels import sandbox
outcome = sandbox.run_once(
    "kernels.profile_child:profile_job", _job, 150, access=profile_child.profile_access(_ncu, profile_run.CHILD_CODE),
    plain_answers=True,
)
answer = outcome.value if isinstance(outcome.value, dict) else {}
child = "" if outcome.status is sandbox.Status.OK else f" (the child: {outcome.status.value})"
words = profile_mod.last_words(str(answer.get("output", outcome.error)))
verdict = "OK (profiled)" if answer.get("ok") else f"FAIL{child} {words}"
print(f"{'sandbox':13s} {verdict}", flush=True)
"""

# The seccomp filter with one of its refusals lifted (argv[1]): a call's name, or "processes" for new processes
# (fork, vfork, execve and clone without CLONE_THREAD), as a child that executes files gets them.
CHILD_WITH_CALL = """
import sys
lifted = sys.argv[1]
access = gpu_access()
confine._DENIED_CALLS = tuple(name for name in confine._DENIED_CALLS if name != lifted)
filter_calls(access, may_execute=lifted == "processes")
cuda_works()
"""

SEARCH_DEPTH = 4


def works_with(paths: list[str]) -> bool:
    child = subprocess.run(
        [sys.executable, "-c", prefix() + CHILD_WITH_PATHS, json.dumps(paths)],
        timeout=120,
        check=False,
        capture_output=True,
    )
    return child.returncode == 0


def candidates(folder: str) -> list[list[str]]:
    """The entries of a folder, each a candidate; /proc's process folders together as one (a child's own number
    is not known beforehand)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    entries = [os.path.join(folder, name) for name in names]
    if folder == "/proc":
        numbered = [e for e in entries if os.path.basename(e).isdigit()]
        return [numbered] + [[e] for e in entries if e not in numbered]
    return [[e] for e in entries]


def needed(folder: str, granted: list[str], pool: ThreadPoolExecutor, depth: int = 0) -> list[str]:
    """Leave each entry of `folder` out in turn, every other entry (and `granted`) allowed with all rights: the
    entries without which CUDA fails, searched again inside those that are folders."""
    entries = candidates(folder)
    everything = [path for entry in entries for path in entry]
    if not works_with(granted + everything):
        return [f"{folder} (itself: all of its entries allowed is not enough)"]
    without = [[path for other in entries if other is not entry for path in other] for entry in entries]
    verdicts = list(pool.map(lambda rest: works_with(granted + rest), without))
    found: list[str] = []
    for entry, rest, works in zip(entries, without, verdicts, strict=True):
        if works:
            continue
        if len(entry) == 1 and os.path.isdir(entry[0]) and not os.path.islink(entry[0]) and depth < SEARCH_DEPTH:
            found += needed(entry[0], granted + rest, pool, depth + 1)
        else:
            found.append(entry[0] if len(entry) == 1 else f"{folder}/<process folders>")
    return found


def find_paths() -> None:
    if not works_with(["/"]):
        print("landlock with every right on / still fails: not a question of paths")
        return
    with ThreadPoolExecutor(max_workers=8) as pool:
        for path in needed("/", [], pool):
            print(f"needed  {path}")


def find_rights() -> None:
    from landlock import FSAccess

    for name in ["nothing"] + [right.name for right in FSAccess if right & FSAccess.all()]:
        child = subprocess.run(
            [sys.executable, "-c", prefix() + CHILD_WITHOUT_RIGHT, name], timeout=120, check=False, capture_output=True
        )
        why = "" if child.returncode == 0 else child.stderr.decode(errors="replace").strip().splitlines()[-1:]
        print(f"without {name:12s} {'OK' if child.returncode == 0 else 'FAIL'} {''.join(why)}", flush=True)


def find_calls() -> None:
    from kernels import confine

    def works(lifted: str) -> tuple[str, bool]:
        child = subprocess.run(
            [sys.executable, "-c", prefix() + CHILD_WITH_CALL, lifted], timeout=180, check=False, capture_output=True
        )
        return lifted, child.returncode == 0

    with ThreadPoolExecutor(max_workers=4) as pool:
        for lifted, ok in pool.map(works, ("nothing", "processes", *confine._DENIED_CALLS)):
            print(f"lifted {lifted:18s} {'OK' if ok else 'FAIL'}", flush=True)


def main() -> None:
    from kernels import confine

    print(f"sandbox: {confine.support().summary()}")
    if "--profile" in sys.argv:
        from kernels import profile

        admins = profile.counters_for_admins_only()
        print(f"performance counters: {'administrators only (RmProfilingAdminOnly=1)' if admins else 'not restricted'}")
    if "--find-paths" in sys.argv:
        find_paths()
        return
    if "--find-rights" in sys.argv:
        find_rights()
        return
    if "--find-calls" in sys.argv:
        find_calls()
        return
    for step in ("none", "rlimits", "landlock", "seccomp", "capabilities", "all"):
        subprocess.run([sys.executable, "-c", prefix() + CHILD, step], timeout=180, check=False)
    if "--profile" in sys.argv:
        subprocess.run([sys.executable, "-c", prefix() + SANDBOXED], timeout=240, check=False)


if __name__ == "__main__":
    main()

"""The OS holds alone (issue 41): every way out of a child that touches reader input, tried on the real compile
path with the source screen switched off, ends in a clear verdict with no secret and no foreign file in the result.

The worker (this test process) holds canary secrets in its environment and a canary file outside the child's
paths, as a production worker holds DATABASE_URL and a .env; each test looks for the canaries in everything the
child returned. Needs a kernel with Landlock and seccomp (Linux 5.13+, as on CI and the H200 nodes)."""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import shutil
import signal
import tempfile

import pytest

from kernels import compiler, confine, judge, sandbox
from kernels import source as source_mod
from kernels.results import Verdict

pytestmark = pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())

E = "tests.kernels.escapes:"
PR_GET_DUMPABLE = 3
PLAN = '\n/* @plan\n[[launch]]\nkernel = "k"\ngrid = [1]\nblock = [32]\n*/\n'
KERNEL = 'extern "C" __global__ void k(const float* A, const float* B, float* C, int N) {}\n'


@pytest.fixture
def canaries(monkeypatch):
    """Secrets in the worker's environment and in a private file; what a leak would show."""
    token = "CANARY" + secrets.token_hex(8)
    monkeypatch.setenv("STRIPE_SECRET_KEY", f"sk_live_{token}")
    monkeypatch.setenv("DATABASE_URL", f"postgres://kernel:{token}@db/kernel")
    monkeypatch.setenv("SECRET_KEY", token)
    folder = tempfile.mkdtemp(prefix="worker-secrets-")
    path = os.path.join(folder, "env")
    with open(path, "w") as file:
        file.write(f"EMAIL_HOST_PASSWORD={token}\n")
    os.chmod(path, 0o600)
    yield token, path
    shutil.rmtree(folder)


@pytest.fixture
def unscreened(monkeypatch):
    """The screen switched off: whatever the source names reaches NVRTC, and only the OS stands in the way."""
    monkeypatch.setattr(source_mod, "screen", lambda source: None)


def compile_including(path: str):
    return compiler.compile_submission(f'#include "{path}"\n' + KERNEL + PLAN, "vector_add")


def leaked(token: str, *results) -> bool:
    text = json.dumps([r.to_dict() if hasattr(r, "to_dict") else r for r in results], default=str)
    return token in text


def compile_child_access() -> sandbox.Access:
    """The compile child's paths, and this folder's escapes module to run in it."""
    return compiler.compile_access().plus(read=(confine.package_dir("tests"),))


def gpu_child_access() -> sandbox.Access:
    """A GPU child's paths (CUDA's device nodes and driver files besides), and the escapes module."""
    return judge.gpu_access((E + "environment",), None)


@pytest.fixture(params=["compile_child", "gpu_child"])
def in_child(request):
    """Runs an escape in a compile child or a GPU child (on a CPU node: with the GPU child's wider paths)."""
    access = compile_child_access() if request.param == "compile_child" else gpu_child_access()

    def run(func: str, payload=None):
        outcome = sandbox.run_once(func, payload, 60, sandbox.Limits(), access)
        assert outcome.status is sandbox.Status.OK, outcome.error or outcome.died_of
        return outcome.value

    return run


ATTACK = 'static const int k = 1\'000; static const char* s = "x\'/*";\n#include "/proc/self/environ"\n// */\n'


def test_the_reported_attack_is_refused_by_the_screen_and_leaks_nothing_without_it(canaries, monkeypatch):
    token, _ = canaries
    screened = compiler.compile_submission(ATTACK + KERNEL + PLAN, "vector_add")
    assert screened.verdict is Verdict.SOURCE_REJECTED
    monkeypatch.setattr(source_mod, "screen", lambda source: None)
    unscreened = compiler.compile_submission(ATTACK + KERNEL + PLAN, "vector_add")
    # The child's own environment is all /proc/self/environ can show: a few CUDA and path variables, no secret.
    assert unscreened.verdict is Verdict.COMPILE_ERROR
    assert not leaked(token, unscreened)


@pytest.mark.parametrize("kind", ["absolute", "relative", "parent_proc_environ", "parent_proc_mem", "project_root"])
def test_foreign_files_do_not_open(canaries, unscreened, kind):
    token, secret_path = canaries
    path = {
        "absolute": secret_path,
        "relative": "../" * 12 + secret_path.lstrip("/"),
        "parent_proc_environ": f"/proc/{os.getpid()}/environ",
        "parent_proc_mem": f"/proc/{os.getpid()}/mem",
        "project_root": os.path.join(os.path.dirname(os.path.dirname(compiler.__file__)), "pyproject.toml"),
    }[kind]
    result = compile_including(path)
    assert result.verdict is Verdict.COMPILE_ERROR
    assert "cannot open source file" in result.log or "could not open" in result.log.lower(), result.log
    assert not leaked(token, result)
    assert "kernel-engineering" not in result.log  # pyproject.toml's first lines


def test_a_link_in_the_scratch_folder_leads_nowhere(canaries, in_child):
    token, secret_path = canaries
    answer = in_child(E + "include_through_a_link", secret_path)
    assert not answer["ok"]
    assert not leaked(token, answer)


def test_the_child_environment_holds_no_secret_of_the_worker(canaries, in_child):
    token, _ = canaries
    answer = in_child(E + "environment")
    assert not leaked(token, answer)
    assert set(answer["os_environ"]) <= {*confine.child_variables(), "PATH", "HOME", "TMPDIR", "LANG"}


def test_files_outside_the_paths_are_refused_to_code_in_the_child(canaries, in_child):
    token, secret_path = canaries
    for path in (secret_path, f"/proc/{os.getpid()}/environ", "/etc/shadow", "/root/.bash_history"):
        answer = in_child(E + "read_file", path)
        assert answer.startswith("refused"), (path, answer[:80])
        assert token not in answer


def test_the_childs_own_proc_entry_leads_nowhere_else(canaries, in_child, request):
    """A GPU child may write to its own /proc entry (CUDA's driver does); through it no path leads out, and the
    worker's entry stays closed."""
    token, secret_path = canaries
    answer = in_child(E + "through_own_proc", secret_path)
    assert answer["root_link"].startswith("refused") and answer["cwd_link"].startswith("refused"), answer
    assert answer["parent_comm"].startswith("refused"), answer
    expected_own = "written" if request.node.callspec.params["in_child"] == "gpu_child" else "refused"
    assert answer["own_comm"].startswith(expected_own), answer
    assert not leaked(token, answer)


def test_no_network(canaries, in_child):
    answer = in_child(E + "connect", ("127.0.0.1", 6379))  # the worker's own Redis, on this machine
    assert answer.startswith("refused"), answer


def test_no_new_processes_but_threads(canaries, in_child):
    answer = in_child(E + "fork_bomb")
    assert answer["fork"].startswith("refused")
    assert str(answer["exec"]).startswith("refused")
    assert answer["thread"] is True


def test_limits_capabilities_and_filters_hold(canaries, in_child):
    answer = in_child(E + "limits_and_capabilities")
    assert answer["core"] == (0, 0)
    assert answer["core_limit_raise"].startswith("refused")
    assert int(answer["cap_eff"], 16) == 0
    assert answer["no_new_privs"] == "1"
    assert answer["seccomp"] == "2"  # a filter is installed


def test_a_crash_leaves_no_core_file_and_a_clear_verdict(canaries):
    outcome = sandbox.run_once(E + "crash_for_a_core", None, 30, sandbox.Limits(), compile_child_access())
    assert outcome.status is sandbox.Status.CRASHED
    assert outcome.exit_code == -signal.SIGABRT


def test_huge_output_is_capped(canaries):
    outcome = sandbox.run_once(
        "tests.kernels.standins:flood", 4 << 20, 30, sandbox.Limits(output_bytes=1 << 20), compile_child_access()
    )
    assert outcome.output_bytes <= 1 << 20


def test_the_worker_itself_is_not_dumpable():
    sandbox.Worker(preload=(E + "environment",)).close()
    assert ctypes.CDLL(None).prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0


def test_a_node_without_the_mechanisms_refuses_unless_the_operator_opts_out(monkeypatch):
    missing = confine.Support(landlock_abi=0, seccomp=True, opted_out=False)
    monkeypatch.setattr(confine, "support", lambda: missing)
    result = compiler.compile_submission(KERNEL + PLAN, "vector_add")
    assert result.verdict is Verdict.INTERNAL_ERROR
    assert "cannot sandbox" in result.message
    monkeypatch.setattr(confine, "support", lambda: confine.Support(0, True, opted_out=True))
    assert compiler.compile_submission(KERNEL + PLAN, "vector_add").verdict is Verdict.COMPILED


@pytest.mark.gpu
def test_a_gpu_child_with_its_cuda_context_holds_the_same_limits(canaries):
    """On the GPU node: the child makes its CUDA context and runs a kernel, then tries the ways out."""
    token, secret_path = canaries
    outcome = sandbox.run_once(E + "cuda_then_escapes", secret_path, 120, sandbox.Limits(), gpu_child_access())
    assert outcome.status is sandbox.Status.OK, outcome.error or outcome.died_of
    answer = outcome.value
    assert answer["kernel_ran"] is True
    assert answer["secret"].startswith("refused") and answer["parent"].startswith("refused")
    assert answer["network"].startswith("refused") and answer["fork"]["fork"].startswith("refused")
    assert not leaked(token, answer)


def test_the_same_source_compiles_to_the_same_cubin_wherever_its_child_ran():
    """NVRTC writes the working folder into the line info: children work in "/", not their scratch folder, so a
    cubin names no temporary folder of ours and two compiles of one source agree."""
    source = KERNEL + PLAN
    first, second = (compiler.compile_submission(source, "vector_add") for _ in range(2))
    assert first.cubin == second.cubin
    assert b"kernels-child-" not in first.cubin


def test_sockets_stay_unix_only_and_a_profile_child_may_connect_on_them(canaries):
    """A GPU child may make a Unix socket (CUDA's driver does) but not connect on it; the profile child (issue 43:
    ncu and its target talk over one, and over TCP on ncu's ports) may connect too. Neither reaches anything else:
    no UDP socket, no TCP connection on another port (Redis's, or a loopback one of its own)."""
    from kernels import profile_child

    def run(access):
        outcome = sandbox.run_once(E + "sockets", None, 60, sandbox.Limits(), access)
        assert outcome.status is sandbox.Status.OK, outcome.error or outcome.died_of
        return outcome.value

    gpu_child = run(gpu_child_access())
    assert gpu_child["tcp"].startswith("refused") and gpu_child["udp"].startswith("refused")
    assert gpu_child["unix"].startswith("refused")
    ncu = shutil.which("sh")  # any executable stands for ncu here: what matters is the sockets' rule
    profiling = run(profile_child.profile_access(ncu, ("tests.kernels.escapes",)))
    assert profiling["tcp"].startswith("refused") and profiling["udp"].startswith("refused")
    assert profiling["unix"] == "connected"
    # TCP on ncu's own ports only (Landlock's network rules): its target connects to it there, nowhere else.
    assert gpu_child["tcp_loopback_ncu_port"].startswith("refused")
    if confine.support().landlock_abi >= confine.LANDLOCK_NET_ABI:
        assert profiling["tcp_loopback_ncu_port"] == "connected"
    assert profiling["tcp_loopback_other_port"].startswith("refused")
    assert profiling["tcp_fastopen"].startswith("refused") and gpu_child["tcp_fastopen"].startswith("refused")


def test_a_profile_childs_processes_get_their_own_proc_entry_and_narrow_it(canaries):
    """Issue 43: ncu's target needs its own /proc entry, which Landlock cannot name before it exists, so a profile
    child opens /proc to what it starts (Access.descendants_proc) and each process narrows it to its own entry. The
    worker's environment stays closed throughout (Landlock refuses ptrace-checked files outside the domain)."""
    from kernels import profile_child

    access = profile_child.profile_access(shutil.which("sh"), ("tests.kernels.escapes",))
    outcome = sandbox.run_once(E + "processes_and_proc", os.getpid(), 60, sandbox.Limits(), access)
    assert outcome.status is sandbox.Status.OK, outcome.error or outcome.died_of
    answer = outcome.value
    token, _secret_path = canaries
    assert answer["worker_environ"].startswith("refused") and not leaked(token, answer)
    started = answer["started"]
    assert started["before"]["own_comm"] == "written" and started["before"]["parent_status"] == "read", started
    assert started["before"]["parent_comm"].startswith("refused")  # procfs: another process's comm is not writable
    narrowed = started["narrowed"]
    assert narrowed["own_comm"] == "written", narrowed
    assert narrowed["parent_status"].startswith("refused") and narrowed["parent_comm"].startswith("refused")
    # The child narrowed itself: a process it starts now may open no /proc entry but the child's (its parent's),
    # not even its own. Layers only ever take away.
    after = answer["started_after_narrowing"]["before"]
    assert after["own_comm"].startswith("refused") and after["parent_status"] == "read", after

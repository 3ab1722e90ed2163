"""What the operating system enforces around a child that touches reader input (kernels/sandbox.py starts it).

A screen of the source is a courtesy; this is the boundary. A child is confined in its own process, before it
receives anything a reader wrote, by mechanisms of the Linux kernel that no later code of the child can undo:

- **An environment built from nothing**: the parent starts the child with only the variables named in
  `CHILD_ENVIRONMENT` (CUDA's device selection, the include folders, ...) and a private scratch folder as HOME
  and TMPDIR; no secret of the worker is in it, so /proc/self/environ holds none.
- **Landlock** (Linux 5.13+): the file system, for every access right the kernel knows, is reduced to what
  `Access` lists: read-only the interpreter, its libraries and the judge's own code (never the project root,
  where a `.env` may lie), the CUDA headers, the child's own /proc entry; read-write its scratch folder (and, for
  GPU children, the device nodes and the worker's lock files). /proc of any other process, the worker's
  included, does not open.
- **seccomp** (a libseccomp filter): no sockets (no network; a GPU child may create, bind and listen on a Unix
  socket, which CUDA's driver does, but never connect or send to one), no
  new processes (`clone` without CLONE_THREAD, `fork`, `execve`: a fork bomb gets EPERM), none of the calls that
  reach other processes or the kernel's wider state (ptrace, process_vm_*, mount, unshare, bpf, keyctl,
  io_uring, perf_event_open, userfaultfd).
- **Capabilities dropped** (when the worker runs as root): the child cannot raise its limits back, bypass file
  permissions or trace another process.
- **rlimits**: address space (where the child allows it: CUDA maps huge ranges), CPU seconds, file size (its
  output), open files, and no core dumps.
- **No new privileges, not dumpable**: the child cannot gain privileges by exec, and neither it nor the worker
  (`make_undumpable`, called by the parent) can be read through /proc/<pid>/mem or /proc/<pid>/environ by a
  process of the same user.

`support()` says which mechanisms this node's kernel offers. Where one is missing the worker refuses untrusted
jobs (`SandboxUnavailable`) unless the operator opts out with KERNELS_SANDBOX_OPT_OUT=1: then children run with
what the node has, every start logs a CRITICAL line, and the staff judge page says so. README's operator section
("Untrusted code") has the operator's side and what a confined job costs.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import logging
import os
import re
import resource
import signal
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

OPT_OUT_VARIABLE = "KERNELS_SANDBOX_OPT_OUT"
# An operator's (or a test's) additions, named explicitly: more variables for the children (comma-separated names;
# a name that looks like a secret's is refused) and more paths they may read and write (os.pathsep-separated).
EXTRA_VARIABLES_VARIABLE = "KERNELS_CHILD_VARIABLES"
EXTRA_PATHS_VARIABLE = "KERNELS_CHILD_PATHS"
_SECRET_NAME = re.compile(r"SECRET|PASSWORD|PASSWD|TOKEN|KEY|DSN|_URL$|CREDENTIAL|AUTH", re.IGNORECASE)

# The only variables a child inherits from its worker (when set there): none is a secret. HOME and TMPDIR are the
# child's scratch folder; PATH is fixed.
CHILD_ENVIRONMENT = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_PATH",
    "CUDA_HOME",
    "CUDA_MODULE_LOADING",
    "CUPY_CACHE_DIR",
    "KERNELS_CUDA_INCLUDE",
    "LD_LIBRARY_PATH",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    # A program that uses NVLink multicast can take a shared host's GPUs out of service: keep it off in children too.
    "NCCL_NVLS_ENABLE",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST",
    "NVSHMEM_DISABLE_NVLS",
)
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"

# System folders every child reads (shared libraries, the loader's cache): no secret lies there on a worker node.
_SYSTEM_READ = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache")
# Device files any process may open; the GPU's own are added by `Access.for_gpu`.
_COMMON_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
# What CUDA reads to find and describe the GPU: topology in /sys, the driver's parameters, CPU and memory facts.
_GPU_READ = ("/sys", "/proc/driver/nvidia", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/sys/vm")
_GPU_DEVICE_GLOBS = ("nvidia*", "nvidia-caps", "nvidia-uvm*")

# The system calls a child never needs; each returns EPERM (a clear error in the child, never a kill that reads
# like a crash of ours). Deny-listed rather than allow-listed: CUDA's driver and CPython use a wide and
# version-dependent set of calls, and these are the ones that cross the child's own boundary.
_DENIED_CALLS = (
    "fork",
    "vfork",
    "execve",
    "execveat",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_by_handle_at",
    "name_to_handle_at",
    "socket",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "sendto",
    "sendmmsg",
    "sendmsg",
)
# Of those, what CUDA's driver calls while it makes a context (the socket is checked to be a Unix one).
_CUDA_DRIVER_CALLS = ("socket", "bind", "listen")
# Of those, what a child that executes files (Access.execute) needs: a new process, and execve in it.
_PROCESS_CALLS = ("fork", "vfork", "execve")
# Of those, what a child with `Access.local_sockets` may also do on its (Unix-only) sockets.
_LOCAL_SOCKET_CALLS = ("connect", "accept", "accept4", "sendto", "sendmsg", "sendmmsg")
_CLONE_THREAD = 0x00010000
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
_SOCK_TYPE_MASK = 0xF
_MSG_FASTOPEN = 0x20000000
_SOCK_NOT_STREAM = (2, 3, 4, 5, 6, 10)  # DGRAM, RAW, RDM, SEQPACKET, DCCP, PACKET: every socket type but STREAM

_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_CAP_LAST = 63  # capability numbers above what the kernel knows are refused with EINVAL: harmless


class SandboxUnavailable(RuntimeError):
    """This node cannot confine a child and the operator has not opted out: no untrusted job runs here."""


@dataclass(frozen=True)
class Support:
    landlock_abi: int  # 0: the kernel has no Landlock
    seccomp: bool
    opted_out: bool

    @property
    def missing(self) -> list[str]:
        return [name for name, ok in (("Landlock", self.landlock_abi > 0), ("seccomp", self.seccomp)) if not ok]

    @property
    def confined(self) -> bool:
        return not self.missing

    def summary(self) -> str:
        if self.confined:
            return f"confined: Landlock ABI {self.landlock_abi}, seccomp, empty environment, rlimits"
        state = "RUNNING UNCONFINED (operator opt-out)" if self.opted_out else "refusing untrusted jobs"
        return f"{state}: this kernel lacks {', '.join(self.missing)}"


@cache
def support() -> Support:
    return Support(landlock_abi=_landlock_abi(), seccomp=_seccomp_available(), opted_out=opted_out())


def opted_out() -> bool:
    return os.environ.get(OPT_OUT_VARIABLE, "").strip().lower() in ("1", "true", "yes")


def require() -> Support:
    """The node's support, or SandboxUnavailable where a mechanism is missing and nobody opted out."""
    found = support()
    if not found.confined:
        if not found.opted_out:
            raise SandboxUnavailable(
                f"untrusted jobs refused: this node's kernel lacks {', '.join(found.missing)} "
                f"(set {OPT_OUT_VARIABLE}=1 to run them unconfined, at your own risk)"
            )
        log.critical("sandbox: %s", found.summary())
    return found


def _landlock_abi() -> int:
    try:
        from landlock import landlock_abi_version

        return max(0, int(landlock_abi_version()))
    except Exception:  # noqa: BLE001 (no binding, no syscall, disabled at boot: all mean "none")
        return 0


def _seccomp_available() -> bool:
    try:
        import pyseccomp  # noqa: F401  (libseccomp must load)
    except (ImportError, OSError, RuntimeError):
        return False
    try:
        with open("/proc/self/status") as status:
            return any(line.startswith("Seccomp:") for line in status)
    except OSError:
        return False


def child_variables() -> tuple[str, ...]:
    """The names of the variables a child inherits: CHILD_ENVIRONMENT and the operator's KERNELS_CHILD_VARIABLES."""
    extra = tuple(n.strip() for n in os.environ.get(EXTRA_VARIABLES_VARIABLE, "").split(",") if n.strip())
    secret = [name for name in extra if _SECRET_NAME.search(name)]
    if secret:
        raise ValueError(f"{EXTRA_VARIABLES_VARIABLE} names what looks like a secret: {', '.join(secret)}")
    return CHILD_ENVIRONMENT + extra


def extra_paths() -> tuple[str, ...]:
    return tuple(p for p in os.environ.get(EXTRA_PATHS_VARIABLE, "").split(os.pathsep) if p)


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a new process, before its execve: SIGKILL when the process that started it ends (it stays set across
    execve). The worker kills a child at its timeout; a process that child started (Triton's ptxas, the profile
    child's ncu) then ends too, instead of running on as an orphan until its CPU-time limit."""
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def make_undumpable() -> None:
    """Close this process (the worker) to /proc/<pid>/mem, /environ and ptrace from processes of its own user."""
    _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


@dataclass(frozen=True)
class Access:
    """What a child may open: `read` (files and folders beneath, read and execute), `write` (read-write, create
    and remove beneath: the scratch folder) and `devices` (read-write and ioctl: the GPU's nodes)."""

    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    # What CUDA's driver needs beyond files (found on the H200 and H100 nodes, kernels/BENCHMARKS.md "Issue 41":
    # without either, cudaGetDevice fails with cudaErrorOperatingSystem): opening its own /proc entries for writing
    # with truncation, and a Unix socket it creates, binds and listens on. Connecting or sending to any socket stays
    # refused, so no other process is reached through it.
    cuda_driver: bool = False
    # Files the child may execute (issue 46: Triton's ptxas, and the ELF interpreter that loads it). Empty, the
    # default: nothing executes (seccomp refuses fork and execve). Not empty: fork, vfork, clone and execve are
    # allowed, and Landlock's EXECUTE right is given to these files only (the folders of `read` lose it).
    execute: tuple[str, ...] = ()
    # The profile child (issue 43): ncu and the library it injects into its target talk over a local socket. With
    # `cuda_driver` a socket can only be a Unix one; this lets the child connect, accept and send on it as well.
    local_sockets: bool = False
    # ...and over TCP: ncu listens on a port of its range (`--port`, `--max-connections`) and the target connects to
    # it (on the H100, a sandboxed target without TCP failed to make its CUDA context: cudaErrorOperatingSystem).
    # (first port, count): TCP stream sockets are allowed, and Landlock's network rules (ABI 4, Linux 6.7) let them
    # bind and connect on these ports only; on a kernel without them no TCP socket is allowed at all.
    tcp_ports: tuple[int, int] = ()
    # ...and ncu starts the target, a process whose CUDA driver needs its own /proc entry as any GPU child's does
    # (without it: cudaErrorOperatingSystem, found on the H100 with bench/sandbox_cuda_probe.py --profile). Landlock
    # names only paths that exist, and the target's number is not known when the child is confined, so /proc is
    # open to this child and what it starts, to read and write (`_descendants_proc_rights`; procfs still checks its
    # own permissions: the worker is not dumpable, so its entry belongs to root, and Landlock refuses ptrace-checked
    # files such as environ and mem of any process outside the child's domain). Each process narrows it to its own
    # entry with `narrow_to_own_proc` before it touches the GPU (the target) or ncu's report (the child).
    descendants_proc: bool = False

    @classmethod
    def for_code(cls, modules: tuple[str, ...] = ()) -> Access:
        """The interpreter, its libraries, the system's, and the packages of `modules` ("pkg.mod:function" or
        "pkg.mod") and of the judge itself: every sys.path entry except folders that hold those packages (the
        project root, which may hold a .env), where only the package's own folder is opened."""
        packages = {package_dir(name.partition(":")[0].split(".")[0]) for name in ("kernels", *modules)}
        package_parents = {str(Path(p).parent) for p in packages}
        entries = [p for p in sys.path if p and os.path.isdir(p) and os.path.abspath(p) not in package_parents]
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        prefixes = {p for p in prefixes if p not in package_parents}
        library_path = os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
        interpreter = os.path.dirname(sys.executable)
        return cls(
            read=_existing(*_SYSTEM_READ, *prefixes, *entries, *packages, *library_path, interpreter),
            write=_existing(*extra_paths()),
            devices=_existing(*_COMMON_DEVICES),
        )

    def plus(
        self,
        read: tuple[str, ...] = (),
        write: tuple[str, ...] = (),
        devices: tuple[str, ...] = (),
        execute: tuple[str, ...] = (),
    ) -> Access:
        return dataclasses.replace(
            self,
            read=self.read + _existing(*read),
            write=self.write + _existing(*write),
            devices=self.devices + _existing(*devices),
            execute=self.execute + _existing(*execute),
        )

    def with_local_sockets(self, tcp_ports: tuple[int, int] = ()) -> Access:
        if not self.cuda_driver:
            raise ValueError("local sockets are given only beside the CUDA driver's Unix-only socket rule")
        return dataclasses.replace(self, local_sockets=True, tcp_ports=tuple(tcp_ports))

    def for_descendants(self) -> Access:
        if not self.cuda_driver:
            raise ValueError("/proc is opened to descendants only for a GPU child (their CUDA driver needs it)")
        return dataclasses.replace(self, descendants_proc=True)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Access:
        return cls(**{name: tuple(value) if isinstance(value, list) else value for name, value in data.items()})

    def for_gpu(self) -> Access:
        """Plus what CUDA's driver opens: /dev/nvidia*, the GPU's description in /sys and /proc/driver."""
        nodes = [str(p) for pattern in _GPU_DEVICE_GLOBS for p in sorted(Path("/dev").glob(pattern))]
        cuda = (os.environ.get("CUDA_PATH", ""), os.environ.get("CUDA_HOME", ""))
        cuda += ("/usr/local/cuda", "/usr/local/nvidia")
        return dataclasses.replace(self.plus(read=(*_GPU_READ, *cuda), devices=tuple(nodes)), cuda_driver=True)


def package_dir(package: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"{package!r} is not a package this worker can find")
    return os.path.abspath(next(iter(spec.submodule_search_locations)))


def _existing(*paths: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.abspath(p) for p in paths if p and os.path.exists(p)))


# What a child may print before writes start failing (the excess is dropped, not stored). A safety net only: the
# GPU job stops a printf flood at 64 KB (checks.PRINTED_OUTPUT_LIMIT_BYTES).
OUTPUT_LIMIT_BYTES = 16 << 20


@dataclass(frozen=True)
class Limits:
    """rlimits of a child. `address_space_bytes` None leaves RLIMIT_AS alone (CUDA maps huge ranges)."""

    output_bytes: int = OUTPUT_LIMIT_BYTES  # RLIMIT_FSIZE: what it may print to its log (kernels/sandbox.py)
    address_space_bytes: int | None = None
    cpu_seconds: int = 900  # a backstop: the parent kills at its wall-clock timeout first
    open_files: int = 1024


@dataclass(frozen=True)
class Confinement:
    """Everything a child applies to itself at its start (it travels to the child pickled)."""

    access: Access
    limits: Limits = field(default_factory=Limits)
    enforce: bool = True  # False only where the operator opted out on a node that lacks a mechanism


_confined_with: Access | None = None


def confined_with() -> Access | None:
    """The Access `apply` confined this process with (None where it was not confined)."""
    return _confined_with


def apply(confinement: Confinement) -> None:
    """Child side: confine this process for the rest of its life. Raises if a mechanism the node has fails."""
    global _confined_with
    _confined_with = confinement.access
    _set_limits(confinement.limits)
    libc = _libc()
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    found = support()
    if found.landlock_abi:
        _restrict_files(confinement.access, found.landlock_abi)
    access = confinement.access
    tcp = bool(access.tcp_ports) and found.landlock_abi >= LANDLOCK_NET_ABI
    if tcp:
        _restrict_tcp_ports(*access.tcp_ports)
    if found.seccomp:
        _filter_calls(access.cuda_driver, may_execute=bool(access.execute), local_sockets=access.local_sockets, tcp=tcp)
    _drop_capabilities()  # last: the filters above are installed with no_new_privs, which needs no capability
    if confinement.enforce and not found.confined:
        raise SandboxUnavailable(found.summary())


def _set_limits(limits: Limits) -> None:
    # A write past RLIMIT_FSIZE then fails with EFBIG instead of killing the child with SIGXFSZ.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    wanted = {
        resource.RLIMIT_FSIZE: limits.output_bytes,
        resource.RLIMIT_CORE: 0,  # a crash leaves no core file with the child's memory in it
        resource.RLIMIT_CPU: limits.cpu_seconds,
        resource.RLIMIT_NOFILE: limits.open_files,
    }
    if limits.address_space_bytes:
        wanted[resource.RLIMIT_AS] = limits.address_space_bytes
    for which, value in wanted.items():
        resource.setrlimit(which, (value, value))


def _restrict_files(access: Access, abi: int) -> None:
    from landlock import FSAccess, Ruleset

    handled = FSAccess.all()
    # The landlock package takes ctypes' saved errno, not the result, for a failure: a stale one (an earlier EINVAL
    # of the capability drops, before a later layer) would make a ruleset that was created look refused.
    ctypes.set_errno(0)
    ruleset = Ruleset(handled)
    # Where the child may execute files, only those named in `execute` may be (the rest are read without EXECUTE);
    # elsewhere seccomp refuses execve, and the read folders keep EXECUTE as they always had.
    read = FSAccess.READ_FILE | FSAccess.READ_DIR | (FSAccess(0) if access.execute else FSAccess.EXECUTE)
    file_rights = FSAccess.all_file()
    for path in access.read:
        ruleset.allow(path, rules=read if os.path.isdir(path) else read & file_rights)
    for path in access.execute:  # a folder (ncu's install folder): every file beneath it
        executing = FSAccess.READ_FILE | FSAccess.EXECUTE
        ruleset.allow(path, rules=executing | FSAccess.READ_DIR if os.path.isdir(path) else executing)
    # Nor anything the child writes (a program copied into its scratch folder), where it may execute at all.
    written = handled & ~FSAccess.EXECUTE if access.execute else handled
    for path in access.write:
        ruleset.allow(path, rules=written if os.path.isdir(path) else written & file_rights)
    device_rights = FSAccess.READ_FILE | FSAccess.WRITE_FILE | (FSAccess.IOCTL_DEV if abi >= 5 else 0)
    for path in access.devices:
        ruleset.allow(path, rules=(device_rights | FSAccess.READ_DIR) if os.path.isdir(path) else device_rights)
    # The child's own /proc entry (its maps, its fds, its threads), resolved now to this process's number.
    ruleset.allow(f"/proc/{os.getpid()}", rules=_own_proc_rights(access.cuda_driver))
    if access.descendants_proc:
        ruleset.allow("/proc", rules=_descendants_proc_rights())
    ruleset.apply()


def narrow_to_own_proc(access: Access) -> None:
    """A further Landlock layer on this process and what it starts from now on: `access` again, with /proc closed
    but for this process's own entry. Layers add up, so nothing the first allowed is widened. For the processes of
    a profile child (Access.descendants_proc), each as soon as it knows its own number. A node without Landlock has
    no first layer either: nothing to narrow."""
    abi = support().landlock_abi
    if abi:
        _restrict_files(dataclasses.replace(access, descendants_proc=False), abi)


def _descendants_proc_rights():
    from landlock import FSAccess

    return FSAccess.READ_FILE | FSAccess.READ_DIR | FSAccess.WRITE_FILE | FSAccess.TRUNCATE


def _own_proc_rights(cuda_driver: bool):
    """What a child may do in its own /proc entry. CUDA's driver opens files there for writing with truncation (a
    GPU context fails with cudaErrorOperatingSystem without WRITE_FILE or TRUNCATE: bench/sandbox_cuda_probe.py
    --find-rights), so a GPU child gets every right on it: procfs has nothing to make, remove or link, exec is
    refused by seccomp, and the worker's and every other process's entries stay closed."""
    from landlock import FSAccess

    if cuda_driver:
        return FSAccess.all()
    return FSAccess.READ_FILE | FSAccess.READ_DIR


# Landlock's network rules (Linux 6.7): a ruleset that handles TCP bind and connect, and a rule per allowed port.
# The `landlock` package binds the file-system half only, so these are the three system calls themselves
# (uapi/linux/landlock.h; the same numbers on x86-64 and arm64).
LANDLOCK_NET_ABI = 4
_SYS_LANDLOCK_CREATE_RULESET, _SYS_LANDLOCK_ADD_RULE, _SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LANDLOCK_RULE_NET_PORT = 2
_LANDLOCK_ACCESS_NET_BIND_TCP, _LANDLOCK_ACCESS_NET_CONNECT_TCP = 1, 2


class _NetRulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


def _restrict_tcp_ports(first: int, count: int) -> None:
    """This process may bind and connect TCP sockets on ports first .. first + count - 1 only (a Landlock layer of
    its own, beside the file-system one)."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    both = _LANDLOCK_ACCESS_NET_BIND_TCP | _LANDLOCK_ACCESS_NET_CONNECT_TCP
    attr = _NetRulesetAttr(0, both)
    fd = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset (network) failed")
    try:
        for port in range(first, first + count):
            rule = _NetPortAttr(both, port)
            if libc.syscall(_SYS_LANDLOCK_ADD_RULE, fd, _LANDLOCK_RULE_NET_PORT, ctypes.byref(rule), 0) != 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule (TCP port {port}) failed")
        if libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, fd, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self (network) failed")
    finally:
        os.close(fd)


def _filter_calls(cuda_driver: bool, may_execute: bool = False, local_sockets: bool = False, tcp: bool = False) -> None:
    """`may_execute`: a child whose Access names files to execute (Triton's ptxas child) may start processes and
    execve; Landlock then decides which files (only those), and everything else denied here stays denied (execveat
    too: no exec of a descriptor)."""
    import pyseccomp as seccomp

    denied = seccomp.ERRNO(errno.EPERM)
    calls = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in _DENIED_CALLS:
        if cuda_driver and name in _CUDA_DRIVER_CALLS:
            continue
        if may_execute and name in _PROCESS_CALLS:
            continue
        if local_sockets and name in _LOCAL_SOCKET_CALLS:
            continue
        calls.add_rule(denied, name)
    if cuda_driver and not tcp:  # a Unix socket only: no network
        calls.add_rule(denied, "socket", seccomp.Arg(0, seccomp.NE, _AF_UNIX, 0))
    elif cuda_driver:  # Unix sockets, and TCP ones (Landlock holds them to their ports): no UDP, raw or other family
        calls.add_rule(denied, "socket", seccomp.Arg(0, seccomp.GT, _AF_INET6, 0))
        for family in range(_AF_INET6 + 1):
            if family not in (_AF_UNIX, _AF_INET, _AF_INET6):
                calls.add_rule(denied, "socket", seccomp.Arg(0, seccomp.EQ, family, 0))
        # TCP Fast Open connects inside a send: refused, so that every TCP connection goes through connect().
        for call, flags_arg in (("sendto", 3), ("sendmsg", 2), ("sendmmsg", 3)):
            calls.add_rule(denied, call, seccomp.Arg(flags_arg, seccomp.MASKED_EQ, _MSG_FASTOPEN, _MSG_FASTOPEN))
        for family in (_AF_INET, _AF_INET6):  # the type's low bits name it; the high ones are flags (NONBLOCK, ...)
            for kind in _SOCK_NOT_STREAM:
                calls.add_rule(
                    denied,
                    "socket",
                    seccomp.Arg(0, seccomp.EQ, family, 0),
                    seccomp.Arg(1, seccomp.MASKED_EQ, _SOCK_TYPE_MASK, kind),
                )
    # A new thread is a clone with CLONE_THREAD; anything else is a new process.
    if not may_execute:
        calls.add_rule(denied, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD, 0))
    # clone3's flags sit behind a pointer a filter cannot read: ENOSYS makes glibc fall back to clone, checked above.
    calls.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    calls.load()


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities() -> None:
    """Empty the bounding set and the effective, permitted and inheritable sets (a no-op for an unprivileged
    worker, whose sets are empty already)."""
    libc = _libc()
    for capability in range(_CAP_LAST + 1):
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)  # EPERM without CAP_SETPCAP, EINVAL past the last: fine
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


@cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return libc

"""A profile of one accepted submission (issue 43): the schema the web app stores, the states a profile run can
end in, and the `ncu` command line the GPU worker's profile child will run. No CUDA, no Django.

The profile is its own document beside the JudgeResult (kernels/results.py), with its own PROFILE_SCHEMA_VERSION:
it is made after the timed job, by another child, may be asked for again, and never changes a verdict or a
timing. Stored with the submission (apps.submissions.models.Profile); a submission without one, or with a
document of a version this code does not know, shows the report without the profile section.

What is NOT here yet (the next GPU session; kernels/README.md, "Profiles"): the profile child itself (sandboxed
like the judged job, holding the device lock alone, after the timed job), the export of a real `.ncu-rep` into
this schema (`ncu --import <rep> --csv --page raw` for the metrics, `--page source --csv` for per-line samples),
and recorded H200 profiles to replace the hand-written fixtures under tests/kernels/profiles/.
"""

from __future__ import annotations

import enum
import os
import re
import shutil
from dataclasses import asdict, dataclass, field

PROFILE_SCHEMA_VERSION = 1

# The Nsight Compute sections a profile collects (`ncu --list-sections` names them; Profiling Guide, "Sections and
# Rules"): speed of light, launch statistics, occupancy, memory workload with its tables (bytes, hit rates, sectors
# per request, bank conflicts), compute workload (pipe utilisation), warp state statistics (stall reasons), and
# source counters (samples per SASS instruction, mapped to source lines through the line info NVRTC emits).
NCU_SECTIONS = (
    "SpeedOfLight",
    "LaunchStats",
    "Occupancy",
    "MemoryWorkloadAnalysis",
    "MemoryWorkloadAnalysis_Tables",
    "ComputeWorkloadAnalysis",
    "WarpStateStats",
    "SourceCounters",
)

# What `ncu` prints when the driver refuses performance counters to this user (NVIDIA's page
# "ERR_NVGPUCTRPERM: Permission issue with Performance Counters").
COUNTERS_REFUSED = "ERR_NVGPUCTRPERM"
# The driver's own answer to "who may read performance counters" (README, Operators: Profiles): 1 when only
# administrators (CAP_SYS_ADMIN) may. The profile child drops every capability, as every child does, so on such a node
# no profile can work, whoever the worker runs as: it is known before any GPU time is spent.
DRIVER_PARAMS = "/proc/driver/nvidia/params"
_ADMIN_ONLY = re.compile(r"^RmProfilingAdminOnly:\s*(\d+)", re.MULTILINE)


class Status(str, enum.Enum):
    PROFILED = "profiled"
    OFF = "off"  # profiling is off on this node (counters refused, or the operator turned it off)
    NO_NCU = "no_ncu"  # no ncu found on this node
    FAILED = "failed"  # the kernel crashed or hung under replay: the profile child ended, nothing else did
    SMALLER_SHAPE = "smaller_shape"  # profiled, at a smaller shape than the largest benchmark (budget)


PROFILED_STATES = (Status.PROFILED, Status.SMALLER_SHAPE)


@dataclass
class SourceLine:
    """One line of the reader's source with the samples taken on its SASS instructions."""

    line: int
    samples: int
    share: float  # percent of all samples of the kernel
    stall: str = ""  # the main stall reason on this line (smsp__pcsamp_warps_issue_stalled_<reason>)
    stalls: dict[str, int] = field(default_factory=dict)


@dataclass
class Profile:
    status: str
    reason: str = ""  # why profiling is off or failed, in words a reader can act on (or tell the operator)
    gpu_name: str = ""
    sizes: dict[str, int] = field(default_factory=dict)  # the shape profiled
    kernel: str = ""  # the kernel profiled (the plan's longest launch)
    metrics: dict[str, float] = field(default_factory=dict)  # Nsight Compute metric name -> value
    source_lines: list[SourceLine] = field(default_factory=list)
    sass_hot_loop: str = ""  # the SASS of the loop holding the most samples
    report_file: str = ""  # the .ncu-rep, relative to the web app's private PROFILE_ROOT
    ncu_version: str = ""
    gpu_seconds: float | None = None  # what the profile cost (README's capacity table)
    # When the web app copied this document from an identical kernel's recent profile (ISO time of that profile;
    # apps.submissions.services.submission_profile), "" for one made on the GPU. No version bump: from_dict drops
    # keys it does not know and a missing one defaults, so documents with and without it both load.
    reused_from_profile_at: str = ""
    schema_version: int = PROFILE_SCHEMA_VERSION

    @property
    def profiled(self) -> bool:
        return self.status in {s.value for s in PROFILED_STATES}

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Profile:
        """Raises ValueError for a document of another schema version (the page then leaves the section out)."""
        version = data.get("schema_version")
        if version != PROFILE_SCHEMA_VERSION:
            raise ValueError(f"profile schema_version {version!r} is not {PROFILE_SCHEMA_VERSION}")
        known = set(cls.__dataclass_fields__)
        values = {k: v for k, v in data.items() if k in known}
        values["source_lines"] = [SourceLine(**line) for line in values.get("source_lines") or []]
        return cls(**values)


def profile_off(reason: str, **fields) -> Profile:
    return Profile(status=Status.OFF.value, reason=reason, **fields)


def profile_no_ncu(searched: str = "", **fields) -> Profile:
    where = f" (looked for {searched})" if searched else ""
    return Profile(status=Status.NO_NCU.value, reason=f"no ncu found on this node{where}", **fields)


def find_ncu(setting: str = "") -> str | None:
    """The ncu executable: the setting (a path) if it names one that exists, else `ncu` on PATH; the CUDA toolkit's
    `bin/ncu` is a launcher that looks for an Nsight Compute install, which is found here instead (`installed_ncu`),
    so that the profile child needs to execute nothing of the toolkit's."""
    if setting:
        found = setting if os.path.isfile(setting) and os.access(setting, os.X_OK) else None
    else:
        found = shutil.which("ncu")
    return installed_ncu(found) if found else None


# The toolkit's launcher looks in these places, newest version first (its own comments: a .deb/.rpm install under
# /opt/nvidia/nsight-compute/<version>, a .run install beside the toolkit as nsight-compute-<version>).
_INSTALL_ROOTS = ("/opt/nvidia/nsight-compute/*", "{toolkit}/nsight-compute-*")
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def installed_ncu(ncu: str) -> str:
    """`ncu` itself where it is an install's own; for the toolkit's launcher script, the newest install's ncu."""
    real = os.path.realpath(ncu)
    with open(real, "rb") as file:
        head = file.read(4096)
    if not (head.startswith(b"#!") and b"nsight-compute directory is not found" in head):
        return ncu
    import glob

    toolkit = os.path.dirname(os.path.dirname(real))
    candidates = []
    for pattern in _INSTALL_ROOTS:
        for folder in glob.glob(pattern.format(toolkit=toolkit)):
            version = _VERSION.search(os.path.basename(folder))
            executable = os.path.join(folder, "ncu")
            if version and os.access(executable, os.X_OK):
                candidates.append((tuple(int(part) for part in version.groups()), executable))
    return max(candidates)[1] if candidates else ncu


# What ncu prints as it starts on each kernel it profiles: without it, the run ended before the reader's kernel.
PROFILING_STARTED = "==PROF== Profiling"


def counters_for_admins_only() -> bool:
    """Whether this node's driver keeps performance counters to administrators (False where it does not say)."""
    try:
        with open(DRIVER_PARAMS) as file:
            found = _ADMIN_ONLY.search(file.read())
    except OSError:
        return False
    return bool(found) and found.group(1) != "0"


def profile_counters_for_admins(**fields) -> Profile:
    return profile_off(
        "the GPU driver on this node lets only administrators read performance counters (RmProfilingAdminOnly=1), "
        "and a profile runs with no privilege at all; the operator can allow it (README, Operators: Profiles)",
        **fields,
    )


def worker_is_root() -> bool:
    return os.geteuid() == 0


def profile_as_root(**fields) -> Profile:
    return profile_off(
        "this GPU worker runs as root; a profile's processes may write to /proc while ncu starts its target, "
        "which root's files there (sysctls, sysrq-trigger) must not allow: run the worker as an unprivileged user "
        "(README, Operators: Profiles)",
        **fields,
    )


def last_words(output: str, *, own: bool = True) -> str:
    """The last line of an ncu run's output, whitespace squeezed, at most 300 characters; with `own`, the last line
    that is not ncu's (its lines start with "=="): the target's own, such as the exception that stopped it; failing
    that, ncu's last."""
    lines = [re.sub(r"\s+", " ", line.strip())[:300] for line in output.splitlines() if line.strip()]
    mine = [line for line in lines if not line.startswith("==")] if own else []
    return (mine or lines or [""])[-1]


def from_ncu_failure(returncode: int, output: str, **fields) -> Profile:
    """What an `ncu` run that produced no report says: counters refused, or the run ended before it reached the
    reader's kernel (both the node's doing: profiling is off on it, GpuJudge.profile stops trying), or the kernel
    failed under replay (that profile failed, nothing else)."""
    if COUNTERS_REFUSED in output:
        return profile_off(
            "the GPU driver on this node does not let the judge read performance counters (ERR_NVGPUCTRPERM); "
            "the operator can allow it (README, Operators: Profiles)",
            **fields,
        )
    last = last_words(output, own=False)
    if PROFILING_STARTED not in output:
        # The target loads the judged cubins and draws inputs before the first kernel: what stopped it is the
        # node's (its CUDA, ncu, the sandbox), never the kernel. Its own last words say what.
        return profile_off(
            f"the profiler could not start on this node ({last_words(output) or f'exit {returncode}'}); it is off "
            "here until the operator fixes the node and restarts its worker",
            **fields,
        )
    return Profile(
        status=Status.FAILED.value, reason=f"the profiler stopped (exit {returncode}): {last}".rstrip(": "), **fields
    )


# ncu talks to the library it injects into its target over TCP on a port of this range (its defaults, named so
# that the profile child's confinement opens exactly these: kernels/profile_child.py, confine.Access.tcp_ports).
NCU_PORTS = (49152, 64)  # (first port, count): ncu's --port and --max-connections


def ncu_command(
    ncu: str, *, report: str, kernel_regex: str, launch_count: int, metrics: list[str], program: list[str]
) -> list[str]:
    """The command line of one profile: each of the plan's `launch_count` launches of the reader's kernels (matched
    by their symbols, `kernel_regex`), the sections above plus the rules' metrics, the source imported into the
    report, written to `report` (.ncu-rep). The clocks are left as the GPU runs them (`--clock-control none`), as
    the judge's timings are."""
    command = [ncu, "--export", report, "--force-overwrite", "--target-processes", "all", "--clock-control", "none"]
    command += ["--port", str(NCU_PORTS[0]), "--max-connections", str(NCU_PORTS[1])]
    command += ["--kernel-name-base", "mangled", "--kernel-name", f"regex:{kernel_regex}"]
    command += ["--launch-count", str(launch_count), "--import-source", "yes"]
    for section in NCU_SECTIONS:
        command += ["--section", section]
    if metrics:
        command += ["--metrics", ",".join(metrics)]
    return command + list(program)

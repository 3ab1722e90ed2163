"""Fixtures for the judge's tests. GPU tests (marker `gpu`) are skipped where no NVIDIA GPU answers, and when the
suite runs in several processes: they run in one (GPU_TESTS_IN_ONE_PROCESS below)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernels import compiler, triton_compiler
from kernels.compiler import DEFAULT_ARCH
from kernels.judge import gpu_present
from kernels.results import CompileResult

HERE = Path(__file__).parent
BAD = HERE / "bad"
GOOD = HERE / "good"


GPU_TESTS_IN_ONE_PROCESS = "python -m pytest tests/kernels -m gpu -p no:django --confcutdir=tests/kernels"


def gpu_tests_skip_reason(gpu_here: bool, test_processes: int) -> str | None:
    """Why the GPU tests cannot run in this session, or None. A judge owns its GPU as a GPU worker does (its
    device lock keeps its spares' setups away from its own timed rounds, not from another judge's): several
    xdist processes each starting one on the same GPU measure each other (four at once ended in 135 errors)."""
    if not gpu_here:
        return "no NVIDIA GPU here; run on the H200"
    if test_processes > 1:
        return f"GPU tests run one judge at a time, in one process: {GPU_TESTS_IN_ONE_PROCESS}"
    return None


def pytest_collection_modifyitems(config, items):
    # gpu_present() asks nvidia-smi, not CUDA: a context in the test process would sit on the GPU all
    # session, and the judge's own children must be its only CUDA users.
    if not any("gpu" in item.keywords for item in items):
        return
    reason = gpu_tests_skip_reason(gpu_present(), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    if reason is not None:
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def gpu_judge():
    """One warm GPU worker for the whole session, as a GPU queue worker would hold it."""
    from kernels.judge import GpuJudge

    judge = GpuJudge(warm=True)
    error = judge.start()
    assert error is None, error
    yield judge
    judge.close()


# What a compile node built, for a GPU node whose Triton is not the pinned one (the GPU image carries its own):
# tests/kernels/precompile_triton.py writes it, and the device call carries this folder (it is not committed).
PRECOMPILED = HERE / "precompiled"


def precompiled_path(source: str, problem: str, arch: str) -> Path:
    sha = compiler.source_sha256(source)[:20]
    return PRECOMPILED / f"{problem}-{arch}-{sha}.json"


def compile_triton_source(source: str, problem: str, arch: str = DEFAULT_ARCH) -> CompileResult:
    """The Triton compile stage's result for a GPU test: compiled here where the pinned Triton is installed, else
    what a compile node wrote for this exact source, problem and architecture (skipped if it wrote none)."""
    if triton_compiler.compiles_here():
        return compiler.compile_submission(source, problem, arch, language="triton")
    path = precompiled_path(source, problem, arch)
    if not path.exists():
        pytest.skip(
            f"Triton {triton_compiler.triton_version()} is not {triton_compiler.PINNED_MINOR}: run "
            f"tests/kernels/precompile_triton.py on a compile node and carry {PRECOMPILED.name}/"
        )
    return CompileResult.from_json(path.read_text())


def read(path: Path) -> str:
    return path.read_text()


# The CPU stand-ins (tests/kernels/standins.py) read their settings from STANDIN_* variables and write their logs
# under the test's tmp_path: the sandbox passes a child nothing it was not told to (kernels/confine.py).
STANDIN_VARIABLES = (
    "STANDIN_IDENTITY_FILE,STANDIN_MEASURE_LOG,STANDIN_EVENT_LOG,STANDIN_SETUP_S,STANDIN_PAGEABLE_MEMORY_ACCESS"
)


@pytest.fixture(autouse=True)
def standins_reach_their_children(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELS_CHILD_VARIABLES", STANDIN_VARIABLES)
    monkeypatch.setenv("KERNELS_CHILD_PATHS", str(tmp_path))

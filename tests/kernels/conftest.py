"""Fixtures for the judge's tests. GPU tests (marker `gpu`) are skipped where no NVIDIA GPU answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernels.judge import gpu_present

HERE = Path(__file__).parent
BAD = HERE / "bad"
GOOD = HERE / "good"


def pytest_collection_modifyitems(config, items):
    # gpu_present() asks nvidia-smi, not CUDA: a context in the test process would sit on the GPU all
    # session, and the judge's own children must be its only CUDA users.
    if any("gpu" in item.keywords for item in items) and not gpu_present():
        skip = pytest.mark.skip(reason="no NVIDIA GPU here; run on the H200")
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


def read(path: Path) -> str:
    return path.read_text()

"""A GPU worker reports what its judge's setup found of the GPU's reach into host memory (HMM, README "Untrusted
code"): nothing before a setup has reported, then the device identity's answer, with each heartbeat. The judge is
the real one, its setup the CPU stand-in of tests/kernels/standins.py."""

import pytest

from apps.submissions import worker
from apps.submissions.models import GpuWorker
from kernels.judge import GpuJudge

pytestmark = pytest.mark.django_db(transaction=True)  # the heartbeat closes and reopens its connection


@pytest.mark.parametrize("hmm", [True, False], ids=["hmm-on", "hmm-off"])
def test_the_heartbeat_records_whether_the_gpu_reaches_host_memory(monkeypatch, tmp_path, hmm):
    monkeypatch.setenv("KERNELS_CHILD_VARIABLES", "STANDIN_MEASURE_LOG,STANDIN_PAGEABLE_MEMORY_ACCESS")
    monkeypatch.setenv("KERNELS_CHILD_PATHS", str(tmp_path))
    monkeypatch.setenv("STANDIN_MEASURE_LOG", str(tmp_path / "measured.log"))
    if hmm:
        monkeypatch.setenv("STANDIN_PAGEABLE_MEMORY_ACCESS", "1")
    monkeypatch.setattr("sys.argv", ["celery", "-A", "config", "worker", "-Q", "gpu.h200,gpu.h200.profile"])
    monkeypatch.setattr(worker, "_node_name", "gpu0@test")
    monkeypatch.setenv("GPU_NAME", "NVIDIA H200")  # not asked of nvidia-smi
    judge = GpuJudge(warm=True, job="tests.kernels.standins:timed_job", warm_up="tests.kernels.standins:ceilings_setup")
    monkeypatch.setattr(worker, "_judge", judge)
    with judge:
        worker.register()
        assert GpuWorker.objects.get(hostname="gpu0@test").host_memory_reachable is None  # no setup has reported yet
        assert judge.start() is None
        worker.heartbeat_once()
    assert GpuWorker.objects.get(hostname="gpu0@test").host_memory_reachable is hmm

"""When the GPU tests run: on a GPU, in one process (tests/kernels/conftest.py)."""

from .conftest import GPU_TESTS_IN_ONE_PROCESS, gpu_tests_skip_reason


def test_gpu_tests_run_on_a_gpu_in_one_process_only():
    assert gpu_tests_skip_reason(gpu_here=True, test_processes=1) is None
    assert "no NVIDIA GPU" in gpu_tests_skip_reason(gpu_here=False, test_processes=1)
    several = gpu_tests_skip_reason(gpu_here=True, test_processes=4)
    assert GPU_TESTS_IN_ONE_PROCESS in several and "one process" in several

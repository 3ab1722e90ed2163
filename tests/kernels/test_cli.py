"""python -m kernels check: exit codes, human and JSON output."""

import json
import subprocess
import sys

import pytest

from kernels import problems
from kernels.judge import gpu_present

from .conftest import BAD


def run(*args):
    return subprocess.run([sys.executable, "-m", "kernels", *args], capture_output=True, text=True, timeout=120)


def test_check_ok_json():
    proc = run("check", str(problems.PROBLEMS_DIR / "hgemm" / "example.cu"), "--problem", "hgemm", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["verdict"] == "compiled" and data["kernels"][0]["name"] == "hgemm_wmma"
    assert data["cubin"] == ""  # the binary stays out of terminal output


@pytest.mark.parametrize("name", ["prefix_sum", "fp8_quant"])
def test_check_a_problem_of_issue_14(name):
    proc = run("check", str(problems.PROBLEMS_DIR / name / "example.cu"), "--problem", name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("COMPILED: compiled for sm_90")
    assert f"  arguments: ({problems.load(name).signature()})" in proc.stdout
    if name == "prefix_sum":
        assert "  workspace workspace: 1048576 elements (4.0 MiB at most), garbage at every launch" in proc.stdout


def test_check_failure_is_readable_and_nonzero():
    proc = run("check", str(BAD / "compile_error.cu"), "--problem", "vector_add")
    assert proc.returncode == 1
    assert proc.stdout.startswith("COMPILE_ERROR: submission.cu(5): error")


@pytest.mark.skipif(gpu_present(), reason="a GPU is here")
def test_bench_without_a_gpu_says_so():
    proc = run("bench", str(problems.PROBLEMS_DIR / "vector_add" / "example.cu"), "--problem", "vector_add")
    assert proc.returncode == 2
    assert "needs an NVIDIA GPU" in proc.stderr

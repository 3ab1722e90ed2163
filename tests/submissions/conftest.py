"""Fixtures for the submissions tests: exercises on the mini book's capsules, kernels to submit, and
(tests/submissions/workers.py) real Celery workers with the CPU stand-in of the GPU job."""

from pathlib import Path

import pytest

from tests.submissions.workers import celery_workers  # noqa: F401  (a fixture: made available here)

KERNELS = Path(__file__).resolve().parents[2] / "kernels"
SGEMM_EXAMPLE = (KERNELS / "problems" / "sgemm" / "example.cu").read_text()
NAIVE = (KERNELS / "reference" / "01_naive.cu").read_text()

# A kernel that compiles and whose name tells the stand-in how to behave (standin_judge.py).
MARKED = """
__global__ void {name}(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {{
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {{
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
    }}
}}
/* @plan
[[launch]]
kernel = "{name}"
grid = ["cdiv(N, 16)", "cdiv(M, 16)"]
block = [16, 16]
*/
"""
BROKEN = NAIVE.replace("float acc = 0.0f;", "float acc = 0.0f\n")  # a missing semicolon


def marked(name: str) -> str:
    return MARKED.format(name=name)


def make_exercise(capsule, **fields):
    from apps.submissions.models import Exercise

    values = {
        "problem": "sgemm",
        "title": "Write an SGEMM",
        "statement": "Multiply.",
        "starter_source": NAIVE,
        "starter_name": "01_naive.cu",
        **fields,
    }
    return Exercise.objects.create(capsule=capsule, **values)


@pytest.fixture
def exercise(mini_book):
    """An open sgemm exercise on the mini book's free capsule."""
    return make_exercise(mini_book.capsules.get(number=1))


@pytest.fixture
def locked_exercise(mini_book):
    return make_exercise(mini_book.capsules.get(number=2))

"""On the GPU: paged_decode's check reference, one fused kernel in float64 (issue 45), agrees with float64 `_attend`.

The judge checks every timed round of paged_decode against `reference_and_element_scale`, which on CuPy inputs runs
the fused kernel of kernels/problems/paged_decode/reference.py. Here, at every test shape and the largest benchmark
shape, on inputs drawn and laid out as the judge's checks draw them (`inputs.prepare`: guarded buffers, at full
alignment and at exactly the promised 16 bytes; `checks.inputs_after` hands them over), the kernel's doubles agree
with the gather-and-matmul `_attend` in float64 to 1e-9 of the largest element scale, both outputs; and the float32
arrays the judge gets are those doubles rounded to nearest. Run in a child process of its own, as the judge's GPU
work is: no CUDA context in the test process.

Run on the H200:  python3 -m pytest tests/kernels/test_gpu_paged_decode_reference.py -m gpu -p no:django \
--confcutdir=tests/kernels
"""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]

AGREEMENT = r"""
import cupy as cp
import numpy as np
from kernels import problems
from kernels.checks import MISALIGNED_STREAM, inputs_after
from kernels.inputs import prepare

PROBLEM = problems.load("paged_decode")
MODULE = PROBLEM.module()
largest = max(PROBLEM.benchmarks, key=lambda shape: PROBLEM.bytes_moved(shape.sizes))
for shape in [*PROBLEM.tests, largest]:
    sizes = shape.sizes
    for offsets in ({}, PROBLEM.misaligned_offsets()):
        prepared = prepare(PROBLEM, sizes, [45, shape.seed, *([MISALIGNED_STREAM] if offsets else [])], offsets=offsets)
        inputs = inputs_after(prepared)
        fast, fast_scale = MODULE.reference_and_element_scale(inputs, sizes, PROBLEM.params)
        wide, wide_scale = MODULE._attend_gpu(inputs, sizes, PROBLEM.params, "float64")
        exact, exact_scale = MODULE._attend(inputs, sizes, PROBLEM.params, "float64")
        shape_of = (sizes["num_seqs"], sizes["heads"], MODULE.HEAD_DIM)
        assert fast.dtype == cp.float32 and fast_scale.dtype == cp.float32 and wide.dtype == cp.float64
        assert fast.shape == fast_scale.shape == wide.shape == exact.shape == shape_of
        for rounded, doubles in ((fast, wide), (fast_scale, wide_scale)):
            assert cp.array_equal(rounded, doubles.astype(cp.float32))
        top = float(exact_scale.max())
        errors = [float(cp.abs(a - b).max()) / top for a, b in ((wide, exact), (wide_scale, exact_scale))]
        assert top > 0 and all(e < 1e-9 for e in errors), (sizes, offsets, errors)
        print(sizes, bool(offsets), errors)
        del prepared, inputs
        cp.get_default_memory_pool().free_all_blocks()
print("agree")
"""


def test_the_fused_check_reference_agrees_with_float64_attend():
    run = subprocess.run([sys.executable, "-c", AGREEMENT], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0 and run.stdout.strip().endswith("agree"), run.stdout + run.stderr

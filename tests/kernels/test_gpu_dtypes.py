"""On the GPU: the one-pass CuPy conversions of kernels/problems/dtypes.py give the CPU path's bits (issue 45).

The judge draws every BF16 input (paged_decode's gigabytes of KV cache among them) through the GPU kernels, and the
CPU tests (tests/kernels/test_problem_format.py) check the NumPy path: these hold the two to the same bits, on values
made to be hard (ties at every rounding position, the largest finite values, infinities, NaNs, subnormals) and on a
uniform draw. Run in a child process of their own, as the judge's GPU work is: no CUDA context in the test process.

Run on the H200:  python3 -m pytest tests/kernels/test_gpu_dtypes.py -m gpu -p no:django --confcutdir=tests/kernels
"""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]

AGREEMENT = r"""
import numpy as np, cupy as cp
from kernels.problems import dtypes

rng = np.random.default_rng(7)
bits = rng.integers(0, 2**32, size=4_000_000, dtype=np.uint64).astype(np.uint32)
bits[:65536] = (np.arange(65536, dtype=np.uint32) << 16) | 0x8000          # exact ties at every kept pattern
bits[65536:131072] = (np.arange(65536, dtype=np.uint32) << 16) | 0x7FFF    # just under a tie
special = [0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x00000001, 0x807FFFFF]
bits[131072:131072 + len(special)] = special
x = bits.view(np.float32)
cpu = dtypes.bf16_from_f32(x)
gpu = cp.asnumpy(dtypes.bf16_from_f32(cp.asarray(x)))
assert gpu.dtype == np.uint16 and np.array_equal(cpu, gpu), int((cpu != gpu).sum())
back_cpu = dtypes.f32_from_bf16(cpu).view(np.uint32)
back_gpu = cp.asnumpy(dtypes.f32_from_bf16(cp.asarray(cpu))).view(np.uint32)
assert np.array_equal(back_cpu, back_gpu)

# A uniform draw straight to BF16 (the fused scale and round) against the same draw in float32, rounded on the CPU.
for low, high in ((-1.0, 1.0), (-3.0, 3.0), (0.5, 2.5)):
    draw = dtypes.uniform(cp.random.Generator(cp.random.Philox4x3210(11)), (3_000_000,), "bfloat16", low, high)
    f32 = cp.asnumpy(cp.random.Generator(cp.random.Philox4x3210(11)).random((3_000_000,), dtype=cp.float32))
    f32 *= np.float32(high - low)
    f32 += np.float32(low)
    assert np.array_equal(cp.asnumpy(draw), dtypes.bf16_from_f32(f32)), (low, high)
print("agree")
"""


def test_the_gpu_conversions_give_the_cpu_paths_bits():
    run = subprocess.run([sys.executable, "-c", AGREEMENT], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0 and run.stdout.strip() == "agree", run.stdout + run.stderr

"""sgemm: FP32 operands, FP32 accumulation; reference in float64; baseline the fastest of cuBLAS SGEMM, cuBLASLt's
top algorithms and PyTorch's addmm (no TF32), per shape (kernels/baselines.py)."""

import cupy as cp
from cupy.cuda import runtime

from kernels.problems import gemm_common


def make_inputs(sizes, rng, params):
    return gemm_common.make_inputs(sizes, rng, cp.float32)


def reference(inputs, sizes, params):
    return gemm_common.reference(inputs, params)


def magnitude(inputs, sizes, params):
    return gemm_common.magnitude(inputs, params)


def baseline(inputs, out, sizes, params, ctx):
    gemm_common.cublas_sgemm(inputs, out, sizes, params, ctx.cublas_handle)


def baseline_candidates(sizes):
    from kernels.baselines import Candidate

    return [
        Candidate("cuBLAS SGEMM", baseline),
        *gemm_common.lt_candidates(sizes, runtime.CUDA_R_32F, runtime.CUDA_R_32F),
        Candidate(
            "PyTorch addmm", lambda inputs, out, sizes, params, ctx: gemm_common.torch_addmm(inputs, out, sizes, params)
        ),
    ]

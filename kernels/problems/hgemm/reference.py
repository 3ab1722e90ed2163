"""hgemm: FP16 operands, FP32 accumulation and output; reference in float64 (FP16 products are exact
there); baseline the fastest of cuBLAS GemmEx (FP32 compute, tensor cores) and cuBLASLt's top algorithms, per
shape (kernels/baselines.py). PyTorch is not among them: its addmm takes one element type for A, B and C."""

import cupy as cp
from cupy.cuda import runtime

from kernels.problems import gemm_common


def make_inputs(sizes, rng, params):
    return gemm_common.make_inputs(sizes, rng, cp.float16)


def reference(inputs, sizes, params):
    return gemm_common.reference(inputs, params)


def magnitude(inputs, sizes, params):
    return gemm_common.magnitude(inputs, params)


def baseline(inputs, out, sizes, params, ctx):
    gemm_common.cublas_gemm(inputs, out, sizes, params, ctx.cublas_handle, runtime.CUDA_R_16F)


def baseline_candidates(sizes):
    from kernels.baselines import Candidate

    return [
        Candidate("cuBLAS GemmEx", baseline),
        *gemm_common.lt_candidates(sizes, runtime.CUDA_R_16F, runtime.CUDA_R_32F),
    ]

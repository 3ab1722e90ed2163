"""hgemm: FP16 operands, FP32 accumulation and output; reference in float64 (FP16 products are exact
there); baseline cuBLAS GemmEx with FP32 compute on tensor cores."""

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

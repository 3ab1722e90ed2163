"""sgemm: FP32 operands, FP32 accumulation; reference in float64; baseline cuBLAS SGEMM (no TF32)."""

import cupy as cp

from kernels.problems import gemm_common


def make_inputs(sizes, rng, params):
    return gemm_common.make_inputs(sizes, rng, cp.float32)


def reference(inputs, sizes, params):
    return gemm_common.reference(inputs, params)


def magnitude(inputs, sizes, params):
    return gemm_common.magnitude(inputs, params)


def baseline(inputs, out, sizes, params, ctx):
    gemm_common.cublas_sgemm(inputs, out, sizes, params, ctx.cublas_handle)

"""Shared by the sgemm, hgemm and bf16_gemm problems: random inputs, the float64 reference and cuBLAS calls.

All matrices are row-major. cuBLAS is column-major, and a row-major M x N matrix read column-major is its
transpose, so row-major C = A B is computed as column-major C^T = B^T A^T: gemm(m=N, n=M, k=K) with B first.
"""

from __future__ import annotations

import cupy as cp
import numpy as np
from cupy.cuda import runtime
from cupy_backends.cuda.libs import cublas


def uniform(rng: cp.random.Generator, shape: tuple[int, ...], dtype) -> cp.ndarray:
    """Uniform in [-1, 1): zero-mean, so sums grow like sqrt(K) and errors are relative to that."""
    values = rng.random(shape, dtype=cp.float32)
    values *= 2
    values -= 1
    return values.astype(dtype, copy=False)


def make_inputs(sizes: dict[str, int], rng: cp.random.Generator, operand_dtype) -> dict[str, cp.ndarray]:
    m, n, k = sizes["M"], sizes["N"], sizes["K"]
    return {
        "A": uniform(rng, (m, k), operand_dtype),
        "B": uniform(rng, (k, n), operand_dtype),
        "C": uniform(rng, (m, n), cp.float32),
    }


def reference(inputs: dict[str, cp.ndarray], params: dict[str, float]) -> cp.ndarray:
    """alpha * A B + beta * C in float64 (cuBLAS DGEMM: FP64 is exact enough to judge FP32 against)."""
    a = inputs["A"].astype(cp.float64)
    b = inputs["B"].astype(cp.float64)
    out = a @ b
    out *= params["alpha"]
    out += params["beta"] * inputs["C"].astype(cp.float64)
    return out


def magnitude(inputs: dict[str, cp.ndarray], params: dict[str, float]) -> cp.ndarray:
    """|alpha| |A| |B| + |beta| |C| in float64: how large each output's terms are, whatever cancels."""
    out = cp.abs(inputs["A"].astype(cp.float64)) @ cp.abs(inputs["B"].astype(cp.float64))
    out *= abs(params["alpha"])
    out += abs(params["beta"]) * cp.abs(inputs["C"].astype(cp.float64))
    return out


def cublas_gemm(
    inputs,
    out,
    sizes,
    params,
    handle: int,
    operand_type: int,
    out_type: int = runtime.CUDA_R_32F,
    algo: int = cublas.CUBLAS_GEMM_DEFAULT,
) -> None:
    """cublasGemmEx with FP32 compute (CUBLAS_COMPUTE_32F: no TF32 or FP16 shortcuts) into `out` (FP32 unless
    `out_type` says otherwise)."""
    m, n, k = sizes["M"], sizes["N"], sizes["K"]
    alpha = np.array(params["alpha"], dtype=np.float32)
    beta = np.array(params["beta"], dtype=np.float32)
    cublas.gemmEx(
        handle,
        cublas.CUBLAS_OP_N,
        cublas.CUBLAS_OP_N,
        n,
        m,
        k,
        alpha.ctypes.data,
        inputs["B"].data.ptr,
        operand_type,
        n,
        inputs["A"].data.ptr,
        operand_type,
        k,
        beta.ctypes.data,
        out.data.ptr,
        out_type,
        n,
        cublas.CUBLAS_COMPUTE_32F,
        algo,
    )


def cublas_sgemm(inputs, out, sizes, params, handle: int) -> None:
    """cublasSgemm: FP32 throughout; the handle's math mode (default) keeps TF32 off."""
    m, n, k = sizes["M"], sizes["N"], sizes["K"]
    alpha = np.array(params["alpha"], dtype=np.float32)
    beta = np.array(params["beta"], dtype=np.float32)
    cublas.sgemm(
        handle,
        cublas.CUBLAS_OP_N,
        cublas.CUBLAS_OP_N,
        n,
        m,
        k,
        alpha.ctypes.data,
        inputs["B"].data.ptr,
        n,
        inputs["A"].data.ptr,
        k,
        beta.ctypes.data,
        out.data.ptr,
        n,
    )


def lt_candidates(sizes, operand_type: int, out_type: int) -> list:
    """cuBLASLt's matmul with each of its heuristic's top algorithms for this shape (kernels/cublaslt.py), named
    by rank: "#1" is the one cuBLASLt (and PyTorch) would run."""
    from kernels import cublaslt
    from kernels.baselines import Candidate

    shape = cublaslt.GemmShape(sizes["M"], sizes["N"], sizes["K"], operand_type, out_type)
    matmul = cublaslt.matmul(shape, cublaslt.workspace_ptr())

    def run(index):
        def call(inputs, out, sizes, params, ctx):
            stream = cp.cuda.get_current_stream().ptr
            ptrs = (inputs["A"].data.ptr, inputs["B"].data.ptr, out.data.ptr)
            matmul.run(index, *ptrs, params["alpha"], params["beta"], stream)

        return call

    count = len(matmul.algorithms)
    return [Candidate(f"cuBLASLt matmul (heuristic's #{i + 1} of {count})", run(i)) for i in range(count)]


def torch_addmm(inputs, out, sizes, params, dtype: str | None = None) -> None:
    """PyTorch's C.addmm_(A, B, beta, alpha) in place on the judge's buffers: whichever of cuBLAS and cuBLASLt
    PyTorch calls for it (TF32 and reduced-precision reductions are off: torch_bridge)."""
    from kernels.problems import torch_bridge

    with torch_bridge.on_current_stream():
        a, b, c = (torch_bridge.as_tensor(array, dtype) for array in (inputs["A"], inputs["B"], out))
        c.addmm_(a, b, beta=params["beta"], alpha=params["alpha"])

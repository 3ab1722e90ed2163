"""How far lower-precision GEMMs land from the float64 reference, against each problem's tolerance.

    python -m kernels.tools.precision        (on a GPU)

Rows: cuBLAS in the problem's own precision (must pass), cuBLAS with TF32 operands (must fail sgemm), and
FP16 accumulation (must fail hgemm). The GPU tests assert the same; this prints the margins. Then the attention
check's own reference: computed in FP32 on the GPU (kernels/problems/attention/reference.py, CHECK_DTYPE), its
distance from the float64 reference at benchmark-length rows, in tolerances (must stay under 1/50: no TF32).
"""

from __future__ import annotations

import cupy as cp
import numpy as np
from cupy.cuda import runtime
from cupy_backends.cuda.libs import cublas

from kernels import gpu, problems
from kernels.checks import expected_of
from kernels.compare import compare_outputs
from kernels.inputs import input_generator
from kernels.problems import gemm_common

CUBLAS_TF32_TENSOR_OP_MATH = 3  # cublas_api.h; not exported by every CuPy build
SHAPES = [(127, 255, 129), (1000, 1000, 1000), (4096, 4096, 4096)]


def variant_outputs(problem_name: str, inputs: dict, sizes: dict, params: dict, handle: int) -> dict[str, cp.ndarray]:
    """The output of each precision variant of one GEMM (C starts from the same random values each time)."""
    outs = {}
    if problem_name == "sgemm":
        outs["cuBLAS FP32"] = _run(lambda out: gemm_common.cublas_sgemm(inputs, out, sizes, params, handle), inputs)
        cublas.setMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH)
        try:
            outs["cuBLAS TF32"] = _run(lambda out: gemm_common.cublas_sgemm(inputs, out, sizes, params, handle), inputs)
        finally:
            cublas.setMathMode(handle, cublas.CUBLAS_DEFAULT_MATH)
    else:
        outs["cuBLAS FP16 in, FP32 acc"] = _run(
            lambda out: gemm_common.cublas_gemm(inputs, out, sizes, params, handle, runtime.CUDA_R_16F), inputs
        )
        outs["FP16 accumulation"] = fp16_accumulated(inputs, sizes, params, handle)
    return outs


def _run(call, inputs: dict) -> cp.ndarray:
    out = inputs["C"].copy()
    call(out)
    cp.cuda.Device().synchronize()
    return out


def fp16_accumulated(inputs: dict, sizes: dict, params: dict, handle: int) -> cp.ndarray:
    """A . B with FP16 compute and FP16 output (CUBLAS_COMPUTE_16F), then the epilogue in FP32."""
    m, n, k = sizes["M"], sizes["N"], sizes["K"]
    product = cp.empty((m, n), dtype=cp.float16)
    one, zero = np.array(1.0, np.float16), np.array(0.0, np.float16)
    cublas.gemmEx(
        handle,
        cublas.CUBLAS_OP_N,
        cublas.CUBLAS_OP_N,
        n,
        m,
        k,
        one.ctypes.data,
        inputs["B"].data.ptr,
        runtime.CUDA_R_16F,
        n,
        inputs["A"].data.ptr,
        runtime.CUDA_R_16F,
        k,
        zero.ctypes.data,
        product.data.ptr,
        runtime.CUDA_R_16F,
        n,
        cublas.CUBLAS_COMPUTE_16F,
        cublas.CUBLAS_GEMM_DEFAULT,
    )
    return params["alpha"] * product.astype(cp.float32) + params["beta"] * inputs["C"]


def measure(shapes=SHAPES) -> list[dict]:
    """One row per (problem, shape, variant): rel_err, tolerance, passed."""
    ctx = gpu.context()
    rows = []
    for name in ("sgemm", "hgemm"):
        problem = problems.load(name)
        for m, n, k in shapes:
            sizes = {"M": m, "N": n, "K": k}
            inputs = problem.module().make_inputs(sizes, input_generator(7), problem.params)
            expected = expected_of(problem, inputs, sizes)
            tol = problem.tolerance(sizes)
            for variant, out in variant_outputs(name, inputs, sizes, problem.params, ctx.cublas_handle).items():
                check = compare_outputs(problem, {problem.output: out}, expected, sizes)
                rows.append(
                    {
                        "problem": name,
                        "sizes": sizes,
                        "variant": variant,
                        "rel_err": check.rel_err,
                        "tolerance": tol,
                        "passed": check.passed,
                    }
                )
    return rows


def measure_job(payload=None) -> list[dict]:
    """For a sandboxed worker (the GPU tests)."""
    return measure()


ATTENTION_SHAPES = [
    {"batch": 1, "heads": 2, "seq": 4096, "head_dim": 128, "causal": 1},
    {"batch": 1, "heads": 1, "seq": 16384, "head_dim": 128, "causal": 0},
]


def attention_check_reference(shapes=ATTENTION_SHAPES) -> list[dict]:
    """The FP32 reference the attention checks use against float64's on the GPU: the worst element's error in its
    own scale (as the element-wise check measures it) and the norm's, each over the tolerance."""
    gpu.context()
    problem = problems.load("attention")
    module = problem.module()
    rows = []
    for sizes in shapes:
        inputs = module.make_inputs(sizes, input_generator(11), problem.params)
        fast, _ = module.reference_and_element_scale(inputs, sizes, problem.params)
        exact, exact_scale = module._attend(inputs, sizes, "float64")
        floor = cp.sqrt(cp.mean(exact**2))
        worst = float((cp.abs(fast - exact) / cp.maximum(exact_scale, floor)).max())
        norm = float(cp.linalg.norm(fast - exact) / cp.linalg.norm(exact))
        tol = problem.tolerance(sizes)
        rows.append({"sizes": sizes, "worst_in_tolerances": worst / tol, "norm_in_tolerances": norm / tol})
        del fast, exact, exact_scale
    return rows


def attention_check_reference_job(payload=None) -> list[dict]:
    """For a sandboxed worker (the GPU tests)."""
    return attention_check_reference()


def main() -> None:
    print(f"{'problem':8} {'M x N x K':>16} {'variant':26} {'rel_err':>9} {'tolerance':>9}  verdict")
    for row in measure():
        shape = "x".join(str(v) for v in row["sizes"].values())
        print(
            f"{row['problem']:8} {shape:>16} {row['variant']:26} {row['rel_err']:9.2e} {row['tolerance']:9.2e}  "
            f"{'pass' if row['passed'] else 'FAIL'}"
        )
    for row in attention_check_reference():
        print(
            f"attention {row['sizes']}: FP32 check reference vs float64, worst element "
            f"{row['worst_in_tolerances']:.4f} tolerances, norm {row['norm_in_tolerances']:.5f}"
        )


if __name__ == "__main__":
    main()

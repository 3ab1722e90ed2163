"""bf16_gemm: BF16 A, B and C, FP32 accumulation, C rounded to BF16 once. Reference in float64 from the BF16 values
(their products are exact there); baseline the fastest of cuBLAS GemmEx (BF16 in and out, FP32 compute, tensor-op
algorithm), cuBLASLt's top algorithms and PyTorch's addmm, per shape (kernels/baselines.py). Array-module generic
(NumPy or CuPy, from the inputs) but for the baseline. A, B and C are uniform in [-1, 1), so sums grow like
sqrt(K); at every call about 1 in 8 elements of A and B is an exact zero and about 1 in 8 of their 16 x 16 tiles is
all zeros (a kernel that guesses a k-tile is zero from a few elements, and skips it, fails); C has exact zeros too."""

from kernels.problems import dtypes

# library_types.h and cublas_api.h values, for CuPy builds whose modules do not name them.
_CUDA_R_16BF = 14
_CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99


def make_inputs(sizes, rng, params):
    m, n, k = sizes["M"], sizes["N"], sizes["K"]
    return {
        "A": dtypes.bf16_from_f32(_with_zeros(rng, (m, k))),
        "B": dtypes.bf16_from_f32(_with_zeros(rng, (k, n))),
        "C": dtypes.bf16_from_f32(dtypes.sprinkle(rng, dtypes.uniform(rng, (m, n)), 0.05, 0.0)),
    }


def _with_zeros(rng, shape):
    return dtypes.zero_tiles(rng, dtypes.sprinkle(rng, dtypes.uniform(rng, shape), 0.125, 0.0), 16, 0.125)


def _operands(inputs):
    xp = dtypes.xp_of(inputs["A"])
    a, b, c = (dtypes.f32_from_bf16(inputs[name]).astype(xp.float64) for name in ("A", "B", "C"))
    return xp, a, b, c


def reference(inputs, sizes, params):
    """alpha A B + beta C in float64 (for CuPy, cuBLAS DGEMM)."""
    _, a, b, c = _operands(inputs)
    out = a @ b
    out *= params["alpha"]
    out += params["beta"] * c
    return out


def magnitude(inputs, sizes, params):
    """|alpha| |A| |B| + |beta| |C|: how large each output's terms are, whatever cancels."""
    xp, a, b, c = _operands(inputs)
    out = xp.abs(a) @ xp.abs(b)
    out *= abs(params["alpha"])
    out += abs(params["beta"]) * xp.abs(c)
    return out


def baseline(inputs, out, sizes, params, ctx):
    """cublasGemmEx into `out` (BF16), reading beta * C from it."""
    from cupy.cuda import runtime
    from cupy_backends.cuda.libs import cublas

    from kernels.problems import gemm_common

    bf16 = getattr(runtime, "CUDA_R_16BF", _CUDA_R_16BF)
    algo = getattr(cublas, "CUBLAS_GEMM_DEFAULT_TENSOR_OP", _CUBLAS_GEMM_DEFAULT_TENSOR_OP)
    gemm_common.cublas_gemm(inputs, out, sizes, params, ctx.cublas_handle, bf16, out_type=bf16, algo=algo)


def baseline_candidates(sizes):
    from kernels.baselines import Candidate
    from kernels.problems import gemm_common

    def torch_addmm(inputs, out, sizes, params, ctx):
        gemm_common.torch_addmm(inputs, out, sizes, params, "bfloat16")

    return [
        Candidate("cuBLAS GemmEx", baseline),
        *gemm_common.lt_candidates(sizes, _CUDA_R_16BF, _CUDA_R_16BF),
        Candidate("PyTorch addmm", torch_addmm),
    ]

"""transpose: out = in^T, checked bit for bit; baseline cuBLAS SGEAM (C = alpha op(A) + beta op(B)).

Array-module generic (NumPy or CuPy, from the inputs), so the CPU tests run the same code."""

from kernels.problems import dtypes


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    m, n = sizes["M"], sizes["N"]
    return {"in": dtypes.uniform(rng, (m, n)), "out": xp.empty((n, m), dtype=xp.float32)}


def reference(inputs, sizes, params):
    xp = dtypes.xp_of(inputs["in"])
    return xp.ascontiguousarray(inputs["in"].T)


def baseline(inputs, out, sizes, params, ctx):
    """cublasSgeam with alpha = 1, beta = 0. cuBLAS is column-major: row-major `in` (M x N) is a column-major
    N x M matrix (lda = N) and row-major `out` (N x M) a column-major M x N one (ldc = M), so out = in^T is
    C (M x N) = A^T. B is `out` itself, which cuBLAS allows in place (ldb = ldc, no transpose); with beta = 0
    it is not read."""
    import numpy as np
    from cupy_backends.cuda.libs import cublas

    m, n = sizes["M"], sizes["N"]
    one, zero = np.array(1.0, dtype=np.float32), np.array(0.0, dtype=np.float32)
    cublas.sgeam(
        ctx.cublas_handle,
        cublas.CUBLAS_OP_T,
        cublas.CUBLAS_OP_N,
        m,
        n,
        one.ctypes.data,
        inputs["in"].data.ptr,
        n,
        zero.ctypes.data,
        out.data.ptr,
        m,
        out.data.ptr,
        m,
    )

"""vector_add: C = A + B; reference in float64 (the FP32 sum is then off by at most half an ulp);
baseline CuPy's elementwise add (cuBLAS has no vector add)."""

import cupy as cp

from kernels.problems.gemm_common import uniform


def make_inputs(sizes, rng, params):
    n = sizes["N"]
    return {
        "A": uniform(rng, (n,), cp.float32),
        "B": uniform(rng, (n,), cp.float32),
        "C": cp.empty((n,), cp.float32),
    }


def reference(inputs, sizes, params):
    return inputs["A"].astype(cp.float64) + inputs["B"].astype(cp.float64)


def magnitude(inputs, sizes, params):
    return cp.abs(inputs["A"].astype(cp.float64)) + cp.abs(inputs["B"].astype(cp.float64))


def baseline(inputs, out, sizes, params, ctx):
    cp.add(inputs["A"], inputs["B"], out=out)

"""attention: scaled dot-product attention forward, BF16 Q, K, V and O of shape [batch, heads, seq, head_dim],
causal or not. Reference from the BF16 values, in float64 (`reference`) or, for the judge's checks, in FP32 with
its error measured against float64 (`reference_and_element_scale`), one (batch, head) at a time so that the scores
of a seq-16384 head (1 GiB in FP32) are the largest array alive; baseline PyTorch's scaled_dot_product_attention
(through the DLPack bridge) with the fastest backend this GPU offers, measured once per shape. Array-module
generic (NumPy or CuPy, from the inputs) but for the baseline.

Inputs are uniform in [-1, 1), except "hot" rows: about one row in 8, placed at random at every call (the same
rows of Q and K in every head), holds values near +-HOT (a random sign per query row), so a hot query meets a hot key
with a logit near +-HOT^2 * head_dim / sqrt(head_dim) = +-128 (head_dim 64) or +-181 (head_dim 128): exp of
that overflows FP32 (beyond 88.7), so a softmax without the shift by the running maximum gives inf / inf =
NaN. Ordinary queries see hot keys with logits of a few units (of either sign), which makes their softmax
uneven, and negative hot queries see every hot key at about -128 (exp underflows to 0: those keys drop out).
"""

import functools
import math

import numpy as np

from kernels.problems import dtypes

HOT = 4.0  # a hot element is HOT + uniform[-1/2, 1/2): exact in BF16 to 8 bits, well inside its range
HOT_EVERY = 8  # about one row in 8 is hot, at places drawn at every call
# The SDPA backends tried for the baseline (kernels/baselines.py keeps the fastest per shape).
BACKENDS = (("FLASH_ATTENTION", "flash"), ("CUDNN_ATTENTION", "cuDNN"), ("EFFICIENT_ATTENTION", "memory-efficient"))


def make_inputs(sizes, rng, params):
    xp = dtypes.xp_of(rng)
    shape = (sizes["batch"], sizes["heads"], sizes["seq"], sizes["head_dim"])
    q = dtypes.uniform(rng, shape)
    k = dtypes.uniform(rng, shape)
    v = dtypes.uniform(rng, shape, "bfloat16")
    # Hot rows fall anywhere, about one in HOT_EVERY, drawn anew at every call; a hot query's sign is its own
    # draw: positive ones overflow exp without the shift, negative ones push every hot key out of their softmax.
    hot_rows = rng.random(sizes["seq"], dtype=xp.float32) < 1.0 / HOT_EVERY
    sign = xp.where(rng.random(sizes["seq"], dtype=xp.float32) < 0.5, 1.0, -1.0).astype(xp.float32)[:, None]
    hot_q = sign * (HOT + dtypes.uniform(rng, shape, low=-0.5, high=0.5))
    hot_k = HOT + dtypes.uniform(rng, shape, low=-0.5, high=0.5)
    q = xp.where(hot_rows[:, None], hot_q, q)
    k = xp.where(hot_rows[:, None], hot_k, k)
    return {
        "Q": dtypes.bf16_from_f32(q),
        "K": dtypes.bf16_from_f32(k),
        "V": v,
        "O": xp.empty(shape, dtype=xp.uint16),
    }


def _heads(inputs, name, dtype):
    """An input's values in `dtype`, as (batch * heads, seq, head_dim)."""
    b, h, s, d = inputs[name].shape
    return dtypes.f32_from_bf16(inputs[name]).astype(dtype).reshape(b * h, s, d)


def reference(inputs, sizes, params):
    """softmax(Q K^T / sqrt(d) + mask) V in float64, head by head; the mask sets j > i to -inf when causal."""
    return _attend(inputs, sizes, "float64")[0]


def element_scale(inputs, sizes, params):
    """softmax(Q K^T / sqrt(d) + mask) |V|: the size of the terms each output averages, and so of its rounding
    errors (BF16 P times V, the output's own rounding). It stays near mean |V| = 0.5 on every row, where the
    outputs themselves range from single values of V (the first causal rows) to averages of thousands (near
    0.01): rms(O) would make the element-wise test fail a correctly rounded first row."""
    return _attend(inputs, sizes, "float64")[1]


# The judge's checks compute both in FP32 (FP32 products and sums, no TF32: CuPy's default), from one softmax per
# head. Its own error is under a fiftieth of the tolerance (2^-8 plus 16 u(FP32) sqrt(seq)) on the worst element,
# in that element's scale, and under a hundredth in norm: the FP32 rounding of logits that reach 180 moves a hot
# row's weights by about 1e-5 of themselves (tests/kernels/test_attention.py measures it against the float64
# reference). A benchmark shape's check costs about half of what float64 did: the seq x seq scores pass through
# memory a dozen times per head, and they were most of a timed round's check.
CHECK_DTYPE = "float32"


def reference_and_element_scale(inputs, sizes, params):
    """Both at once in CHECK_DTYPE (the judge's checks take this: the scores are most of the work)."""
    return _attend(inputs, sizes, CHECK_DTYPE)


def _attend(inputs, sizes, dtype):
    xp = dtypes.xp_of(inputs["Q"])
    q, k, v = (_heads(inputs, name, dtype) for name in ("Q", "K", "V"))
    seq, head_dim, causal = sizes["seq"], sizes["head_dim"], bool(sizes["causal"])
    q *= q.dtype.type(1.0 / math.sqrt(head_dim))  # the scale folded into Q: one pass over seq x head_dim, not seq^2
    if xp is not np and q.dtype == np.float32:
        softmax_rows = functools.partial(_softmax_rows_gpu, causal=causal)
    else:  # the causal mask made once: -inf above the diagonal, 0 elsewhere (tri: j <= i)
        penalty = xp.where(xp.tri(seq, seq, k=0, dtype=bool), 0.0, -xp.inf).astype(dtype) if causal else None
        softmax_rows = functools.partial(_softmax_rows, penalty=penalty)
    out = xp.empty(q.shape, dtype=dtype)
    scale_out = xp.empty(q.shape, dtype=dtype)
    for head in range(q.shape[0]):
        scores = q[head] @ k[head].T
        total = softmax_rows(scores)  # scores become exp(s - row max), masked to 0
        both = (scores @ xp.concatenate([v[head], xp.abs(v[head])], axis=1)) / total  # P V and P |V| in one product
        out[head], scale_out[head] = both[:, :head_dim], both[:, head_dim:]
    shape = inputs["Q"].shape
    return out.reshape(shape), scale_out.reshape(shape)


def _softmax_rows(scores, penalty):
    """In place: each row of `scores` becomes exp(s - its maximum), masked keys (j > i when causal) 0; returns
    the row sums as a column. The array-generic path (NumPy: the CPU tests; float64 on the GPU)."""
    xp = dtypes.xp_of(scores)
    if penalty is not None:  # added in place (a boolean-mask assignment would gather half the indices)
        scores += penalty
    scores -= scores.max(axis=1, keepdims=True)  # the diagonal is never masked: every row has a finite max
    xp.exp(scores, out=scores)
    return scores.sum(axis=1, keepdims=True)


# The same on the GPU in FP32, one block a row: the masked maximum in one read, then exp, the mask and the sum in
# one read and one write, where the generic path passes over seq^2 scores eight times (mask, max, subtract, exp,
# sum: 1 GiB each at seq 16384). expf as CuPy's exp; the sum in another order than CuPy's reduction, both FP32
# (tests/kernels/test_gpu.py holds the reference within 1/50 of the tolerance of float64's at seq 4096 and 16384).
_SOFTMAX_ROWS_THREADS = 256
_SOFTMAX_ROWS_SOURCE = r"""
extern "C" __global__ void softmax_rows(float* scores, float* total, long long seq, int causal) {
    __shared__ float partial[256];
    float* row = scores + (long long)blockIdx.x * seq;
    long long kept = causal ? (long long)blockIdx.x + 1 : seq;
    float m = -__int_as_float(0x7f800000);  // -inf (NVRTC has no math.h)
    for (long long j = threadIdx.x; j < kept; j += blockDim.x) m = fmaxf(m, row[j]);
    partial[threadIdx.x] = m;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + half]);
        __syncthreads();
    }
    m = partial[0];
    __syncthreads();
    float sum = 0.0f;
    for (long long j = threadIdx.x; j < seq; j += blockDim.x) {
        float p = j < kept ? expf(row[j] - m) : 0.0f;
        row[j] = p;
        sum += p;
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) total[blockIdx.x] = partial[0];
}
"""
_softmax_rows_kernel = None


def _softmax_rows_gpu(scores, causal: bool):
    import cupy

    global _softmax_rows_kernel
    if _softmax_rows_kernel is None:
        _softmax_rows_kernel = cupy.RawKernel(_SOFTMAX_ROWS_SOURCE, "softmax_rows")
    rows, seq = scores.shape
    total = cupy.empty((rows, 1), dtype=cupy.float32)
    scores = cupy.ascontiguousarray(scores)
    _softmax_rows_kernel((rows,), (_SOFTMAX_ROWS_THREADS,), (scores, total, cupy.int64(seq), cupy.int32(causal)))
    return total


def _sdpa(torch, q, k, v, sizes):
    return torch.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=bool(sizes["causal"]), scale=1.0 / math.sqrt(sizes["head_dim"])
    )


def _run_sdpa(inputs, sizes, backend_attr):
    """torch's SDPA on the judge's buffers, restricted to one backend (None: PyTorch's own dispatch); its own
    output array is returned (SDPA has no out=), and checked."""
    from kernels.problems import torch_bridge

    torch = torch_bridge.torch()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with torch_bridge.on_current_stream():
        q, k, v = (torch_bridge.as_tensor(inputs[name], "bfloat16") for name in ("Q", "K", "V"))
        if backend_attr is None:
            o = _sdpa(torch, q, k, v, sizes)
        else:
            with sdpa_kernel([getattr(SDPBackend, backend_attr)]):
                o = _sdpa(torch, q, k, v, sizes)
    return torch_bridge.as_cupy(o)


def baseline(inputs, out, sizes, params, ctx):
    """SDPA as PyTorch dispatches it (the rehearsal's call; the judge times the fastest backend per shape)."""
    return _run_sdpa(inputs, sizes, None)


def baseline_candidates(sizes):
    """Each SDPA backend this PyTorch has, restricted to it (kernels/baselines.py times them and keeps the
    fastest per shape; a backend that refuses the shape raises and is dropped)."""
    from kernels.baselines import Candidate
    from kernels.problems import torch_bridge

    torch_bridge.torch()  # imported with the judge's matmul settings before torch.nn.attention
    from torch.nn.attention import SDPBackend

    return [
        Candidate(
            f"PyTorch scaled_dot_product_attention ({name})",
            lambda inputs, out, sizes, params, ctx, attr=attr: _run_sdpa(inputs, sizes, attr),
        )
        for attr, name in BACKENDS
        if hasattr(SDPBackend, attr)
    ]

"""Fingerprints of input buffers, kept on the host.

A submitted kernel runs in the judge's CUDA context and can write to any device memory of the process, so
a device-side copy of an input, kept to check that the input comes back unchanged, is no evidence: a
kernel that rewrites the input can rewrite the copy too. The judge instead records, before the launch, one
64-bit number per input on the host, and recomputes it after the launch.

    fingerprint = sum over elements i of mix((i << 32 | bits_i) + key)   (mod 2^64)

bits_i are the element's raw bits (an unsigned word of the element's size, at most 32 bits) and mix is
the splitmix64 finaliser, a bijection of 64-bit words that spreads every input bit over the output.
Integer arithmetic makes the sum exact whatever order the GPU reduces in, so an untouched buffer always
gives the same number (float sums could differ with the reduction's order and raise a false alarm), and
the index in every term catches a permutation, which a sum and a sum of squares would not. The key is drawn
per input set from the run's secret seed and reaches the device only as an argument of the hash kernel.

`fingerprint` takes a NumPy or a CuPy array; the two paths give the same number (the GPU tests check it),
so the NumPy one lets the CPU tests exercise the definition. CuPy is imported only for CuPy arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_ELEMENTS = 1 << 32  # the element index fills the high 32 bits of each term
_MIX_1 = 0xBF58476D1CE4E5B9
_MIX_2 = 0x94D049BB133111EB
_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32}  # element size in bytes -> unsigned word of that size

_cupy_hash = None  # the CuPy elementwise kernel, made on first use (its compilation needs a GPU)


def fingerprint(array: Any, key: int) -> int:
    """The keyed 64-bit fingerprint of `array`'s bytes, element positions included."""
    if isinstance(array, np.ndarray):
        return _numpy_fingerprint(array, key)
    return _cupy_fingerprint(array, key)


def _words(array: Any, xp: Any) -> Any:
    if array.size >= MAX_ELEMENTS:
        raise ValueError(f"fingerprint: {array.size} elements; at most {MAX_ELEMENTS - 1}")
    if array.dtype.itemsize not in _WORDS:
        raise ValueError(f"fingerprint: {array.dtype} elements; only 1, 2 and 4-byte types")
    return xp.ascontiguousarray(array).reshape(-1).view(_WORDS[array.dtype.itemsize])


def _numpy_fingerprint(array: np.ndarray, key: int) -> int:
    words = _words(array, np)
    with np.errstate(over="ignore"):
        z = np.arange(words.size, dtype=np.uint64) << np.uint64(32)
        z |= words
        z += np.uint64(key)
        z ^= z >> np.uint64(30)
        z *= np.uint64(_MIX_1)
        z ^= z >> np.uint64(27)
        z *= np.uint64(_MIX_2)
        z ^= z >> np.uint64(31)
        return int(z.sum(dtype=np.uint64))


def _cupy_fingerprint(array: Any, key: int) -> int:
    import cupy as cp

    global _cupy_hash
    if _cupy_hash is None:
        _cupy_hash = cp.ElementwiseKernel(
            "T word, uint64 key",
            "uint64 h",
            f"""
            unsigned long long z = (((unsigned long long)i << 32) | (unsigned long long)word) + key;
            z = (z ^ (z >> 30)) * {_MIX_1:#x}ULL;
            z = (z ^ (z >> 27)) * {_MIX_2:#x}ULL;
            h = z ^ (z >> 31);
            """,
            "kernels_fingerprint_hash",
        )
    hashes = _cupy_hash(_words(array, cp), np.uint64(key))
    return int(hashes.sum(dtype=cp.uint64))


def agreement_job(payload: Any = None) -> list[dict]:
    """Worker side (GPU tests): the CuPy and NumPy paths on the same arrays, for the test to compare."""
    import cupy as cp

    rng = cp.random.default_rng(7)
    arrays = {
        "float32 1000x1000": rng.random((1000, 1000), dtype=cp.float32) * 2 - 1,
        "float16 129x263": (rng.random((129, 263), dtype=cp.float32) * 2 - 1).astype(cp.float16),
        "float32 1": cp.ones(1, dtype=cp.float32),
        "float32 2^20+3": rng.random(2**20 + 3, dtype=cp.float32),
    }
    rows = []
    for name, array in arrays.items():
        for key in (0, 2**63 + 12345):
            rows.append(
                {
                    "array": name,
                    "key": key,
                    "gpu": fingerprint(array, key),
                    "cpu": fingerprint(cp.asnumpy(array), key),
                    "gpu_again": fingerprint(array, key),
                }
            )
    return rows

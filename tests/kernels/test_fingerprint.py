"""The host-held fingerprint of input buffers (kernels/fingerprint.py), on NumPy arrays: the GPU tests check
that the CuPy path gives the same numbers."""

import numpy as np
import pytest

from kernels.fingerprint import MAX_ELEMENTS, fingerprint

KEY = 0x9E3779B97F4A7C15


def _inputs(dtype=np.float32, shape=(127, 129)):
    return (np.random.default_rng(3).random(shape, dtype=np.float32) * 2 - 1).astype(dtype)


def _by_definition(array, key):
    """sum over i of splitmix64((i << 32 | bits_i) + key) mod 2^64, in Python integers, last element first."""
    words = np.ascontiguousarray(array).reshape(-1).view({2: np.uint16, 4: np.uint32}[array.dtype.itemsize])
    mask, total = (1 << 64) - 1, 0
    for i in reversed(range(words.size)):
        z = ((i << 32 | int(words[i])) + key) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        total = (total + (z ^ (z >> 31))) & mask
    return total


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_matches_its_definition_in_any_summation_order(dtype):
    array = _inputs(dtype, (33, 17))
    assert fingerprint(array, KEY) == _by_definition(array, KEY)
    assert fingerprint(array, KEY) == fingerprint(array.copy(), KEY)  # the bytes decide, not the address


def test_a_view_gives_the_fingerprint_of_its_contiguous_copy():
    array = _inputs()
    view = array[:, ::2]
    assert fingerprint(view, KEY) == fingerprint(np.ascontiguousarray(view), KEY)


@pytest.mark.parametrize(
    "change",
    [
        lambda a: a.fill(0),  # a zeroed input
        lambda a: a.__setitem__((5, 7), np.nextafter(a[5, 7], np.float32(2))),  # one element, one ulp
        lambda a: a.__setitem__((0, 0), -a[0, 0]),  # one sign bit
        lambda a: a.reshape(-1).__setitem__(
            slice(None), a.reshape(-1)[::-1].copy()
        ),  # reversed: same sum and sum of squares
        lambda a: a.__setitem__((slice(0, 2),), a[[1, 0]]),  # two rows swapped
    ],
    ids=["zeroed", "one_ulp", "sign_bit", "reversed", "rows_swapped"],
)
def test_any_change_shows(change):
    array = _inputs()
    before = fingerprint(array, KEY)
    change(array)
    assert fingerprint(array, KEY) != before


def test_the_key_matters():
    array = _inputs()
    assert fingerprint(array, KEY) != fingerprint(array, KEY + 1)


def test_unsupported_arrays_are_refused():
    with pytest.raises(ValueError, match="1, 2 and 4-byte"):
        fingerprint(np.zeros(4, dtype=np.float64), KEY)
    assert MAX_ELEMENTS == 1 << 32

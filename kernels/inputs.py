"""Input sets for the GPU job: guarded buffers, fresh seeded inputs, kernel arguments, and the input checks.

Nothing the judge keeps in device memory while a submitted kernel runs can be trusted afterwards: the
kernel runs in this process's CUDA context and can write anywhere in it. So the reference is computed
only after the candidate has finished (`checks.expected_after`), and the inputs it was given are checked
against fingerprints held on the host (kernels/fingerprint.py), not against device copies: the reference is
computed from buffers that match them, or from the set drawn again from its seed where the kernel overwrote one.
The guard bands stay: they name a sloppy out-of-bounds write precisely.
"""

from __future__ import annotations

import functools
import inspect
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import cupy as cp
import numpy as np

from kernels.fingerprint import fingerprint
from kernels.problems import Problem, garbage, guard_pattern, poison_value
from kernels.results import ResolvedLaunch

if TYPE_CHECKING:
    from kernels.runner import LoadedKernel

GUARD_BYTES = 1 << 20  # per side; a tile written past a ragged edge of a 1000-wide matrix stays inside
# Where a buffer starts, at the most: CuPy's pool hands out 512-byte aligned blocks, and an array promised
# `a` bytes of alignment is placed at a multiple of a that is not one of 2a (see Guarded).
_BLOCK_ALIGN = 512
_FINGERPRINT_STREAM = 1  # fingerprint keys come from a child stream of each input set's seed words
_LAYOUT_STREAM = 2  # a shape's layout (`layout_rng`) from a child stream of the job's and the shape's seed words
_WORKSPACE_STREAM = 0x5A17  # workspace garbage is keyed by the set's seed plus this: unlike any input's bits


class Guarded:
    """Room for an array of `shape` and `dtype`, between two guard bands: writes out of bounds show up there,
    and reads out of bounds poison what they enter.

    The bands hold, from the array's edges outward, the repeating elements `problems.guard_pattern(dtype)`:
    for floating types the largest finite value, NaN, then the most negative finite value. A kernel that reads
    past either end and folds what it read into a sum, a maximum or a sum of squares gets a huge, infinite or
    NaN answer (a byte pattern such as 0xA5 reads as -2.9e-16 and would vanish in the sum).

    `offset` places the array `offset` bytes past a 512-byte boundary: with offset = a (a power of two, the
    alignment the problem promises) the address is a multiple of a and not of 2a, so a kernel that takes a
    wider vector path without checking the address faults instead of passing on lucky alignment."""

    def __init__(self, shape: tuple[int, ...], dtype, offset: int = 0):
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        self.base = cp.empty(GUARD_BYTES + _BLOCK_ALIGN + nbytes + GUARD_BYTES, dtype=cp.uint8)
        pad = -(self.base.data.ptr + GUARD_BYTES) % _BLOCK_ALIGN
        start = GUARD_BYTES + pad + offset
        self._head, self._tail = start, start + nbytes
        self._front = guard_band(dtype, start, toward_array=True)
        self._back = guard_band(dtype, self.base.size - self._tail, toward_array=False)
        self.base[:start] = self._front
        self.base[self._tail :] = self._back
        self.array = self.base[start : self._tail].view(dtype).reshape(shape)

    @classmethod
    def like(cls, array: cp.ndarray, offset: int = 0) -> Guarded:
        return cls(array.shape, array.dtype, offset)

    def guards_intact(self) -> bool:
        return bool((self.base[: self._head] == self._front).all() and (self.base[self._tail :] == self._back).all())


def guard_band(dtype: np.dtype, nbytes: int, toward_array: bool) -> cp.ndarray:
    """`nbytes` of guard band for an array of `dtype`, the pattern starting at the array's edge: the front band
    ends with the pattern's first element (it runs backward from the array), the back band begins with it."""
    return cp.asarray(_guard_band_host(np.dtype(dtype).str, nbytes, toward_array))


@functools.cache
def _guard_band_host(dtype_str: str, nbytes: int, toward_array: bool) -> np.ndarray:
    dtype = np.dtype(dtype_str)
    pattern = guard_pattern(dtype).view(np.uint8)
    reps = -(-nbytes // pattern.size)
    band = np.tile(pattern, reps)
    if toward_array:  # element k before the array is pattern[k]: reversed by elements, not bytes
        elements = band.view(dtype)[::-1].copy().view(np.uint8)
        return elements[elements.size - nbytes :]
    return band[:nbytes]


@dataclass
class Prepared:
    """One input set laid out for launching. Device side: the guarded buffers only. Host side: what it
    takes to check them and to regenerate the set (seed, fingerprint key, fingerprints)."""

    problem: Problem
    sizes: dict[str, int]
    seed: int
    layout_seed: int  # the same for every input set of this shape in this job (see `make_inputs`)
    key: int  # fingerprint key, secret like the seed it is drawn from
    buffers: dict[str, Guarded]
    args: tuple
    fingerprints: dict[str, int]  # every input as launched: the const ones, and the output where it is read
    tensor_maps: dict[str, bytes] = field(default_factory=dict)  # the plan's TMA descriptors over these buffers

    def generate(self) -> dict[str, cp.ndarray]:
        """The input set, drawn again from its seeds (fresh generators: no state survives a launch)."""
        return make_inputs(self.problem, self.sizes, self.seed, self.layout_seed)

    def reset_outputs(self, inputs: dict[str, cp.ndarray] | None = None) -> None:
        """Every output's starting value, before every launch: the input's values where it is read (GEMM's C;
        regenerated unless given), else its type's poison (NaN, 0xA5A5A5A5, FP8 0x7F), so an element left
        unwritten shows; and every workspace filled with garbage drawn from the set's seed
        (`problems.garbage`), so a kernel that needs it zeroed must zero it."""
        problem = self.problem
        if problem.output_is_input:
            inputs = inputs or self.generate()
        for name in problem.outputs:
            out = self.buffers[name].array
            if problem.output_is_input:
                out[...] = inputs[name]
            else:
                out.fill(poison_value(problem.arg(name).dtype))
        for spec in problem.workspaces:
            fill_garbage(self.buffers[spec.name].array.view(cp.uint8), self.seed + _WORKSPACE_STREAM)

    def arrays(self) -> dict[str, cp.ndarray]:
        """The buffers' arrays by name, as the baseline takes them (workspaces are the candidate's alone)."""
        workspaces = {w.name for w in self.problem.workspaces}
        return {name: buffer.array for name, buffer in self.buffers.items() if name not in workspaces}

    def outputs(self) -> dict[str, cp.ndarray]:
        """The output arrays by name, in the problem's order."""
        return {name: self.buffers[name].array for name in self.problem.outputs}


# problems.garbage in one pass: each 4-byte word the high half of splitmix64 of its index plus the key. The
# array-module version makes a uint64 temporary per step, ten passes over twice the bytes: for attention's 8 GiB
# score workspace, refilled twice a timed round, that was most of a round (README, "Capacity of the GPU pool").
_GARBAGE_WORDS = cp.ElementwiseKernel(
    "uint64 key",
    "uint32 word",
    """
    unsigned long long z = (unsigned long long)i + key;
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    word = (unsigned int)(z >> 32);
    """,
    "kernels_garbage_words",
)


def fill_garbage(raw: cp.ndarray, key: int) -> None:
    """Fill a uint8 device array with `problems.garbage(raw.size, key)`, the same bytes, in one pass."""
    whole = raw.size // 4 * 4
    if whole:
        _GARBAGE_WORDS(np.uint64(key & (2**64 - 1)), raw[:whole].view(cp.uint32))
    if whole < raw.size:  # a last, partial word
        raw[whole:] = garbage(raw.size, key, cp)[whole:]


def garbage_agreement_job(_payload=None) -> list[dict]:
    """On the GPU: fill_garbage against problems.garbage computed by NumPy, for sizes with and without a partial
    last word and keys near the top of the range (tests/kernels/test_gpu.py)."""
    rows = []
    for nbytes, key in ((4096, 7), (4 * 65536 + 3, 2**64 - 5), (1 << 20, 123456789)):
        raw = cp.zeros(nbytes, dtype=cp.uint8)
        fill_garbage(raw, key)
        rows.append({"nbytes": nbytes, "key": key, "same": bool(np.array_equal(raw.get(), garbage(nbytes, key)))})
    return rows


def input_generator(seed: int) -> cp.random.Generator:
    """The generator every input set is drawn from: Philox4x32-10, counter-based, so seeding it costs nothing on
    the device. CuPy's default (XORWOW) runs curand_init over 256,000 states at each seeding, 0.6 ms of GPU time
    measured on the H200 (bench/setup_cost.py), and a job seeds one generator per input set drawn or redrawn."""
    return cp.random.Generator(cp.random.Philox4x3210(seed))


def make_inputs(problem: Problem, sizes: dict[str, int], seed: int, layout_seed: int) -> dict[str, cp.ndarray]:
    """The problem's input set. A `make_inputs` that takes `layout_rng` draws its structure from it (paged_decode:
    the contexts' lengths and the block table): the same in every round at a shape, where the values are fresh.
    Drawn from each round's own seed, the structure made the kernel's time differ by a few percent from round to
    round (a longer longest context, a worse last wave), and the median took twenty rounds to settle where three
    agree with a fixed one; every timed round still computes on values of its own."""
    module = problem.module()
    extra = {"layout_rng": input_generator(layout_seed)} if _takes_layout(module.make_inputs) else {}
    return module.make_inputs(sizes, input_generator(seed), problem.params, **extra)


@functools.cache
def _takes_layout(make) -> bool:
    return "layout_rng" in inspect.signature(make).parameters


def _const_inputs(problem: Problem) -> list[str]:
    return [a.name for a in problem.args if a.is_pointer and a.is_const]


def read_inputs(problem: Problem) -> list[str]:
    """Every array the kernel reads: the const inputs, and the outputs where they are also inputs."""
    return _const_inputs(problem) + (list(problem.outputs) if problem.output_is_input else [])


def prepare(
    problem: Problem,
    sizes: dict[str, int],
    seed_words: list[int],
    reuse: Prepared | None = None,
    offsets: dict[str, int] | None = None,
) -> Prepared:
    """Draw an input set into the buffers, outputs reset, workspaces filled, and fingerprint it. With `reuse`,
    refill its buffers in place: the timed rounds keep the same addresses from round to round, so a kernel that
    skips work when handed the same pointers is caught. `offsets` (Problem.misaligned_offsets) places each
    array at exactly its promised alignment. No reference yet: see `checks.expected_after`."""
    seed = int(np.random.SeedSequence(seed_words).generate_state(1)[0])
    key = int(np.random.SeedSequence(seed_words, spawn_key=(_FINGERPRINT_STREAM,)).generate_state(1, np.uint64)[0])
    # The job's and the shape's words only: the round's (or the misaligned stream's) word is left out.
    layout_seed = int(np.random.SeedSequence(seed_words[:2], spawn_key=(_LAYOUT_STREAM,)).generate_state(1)[0])
    inputs = make_inputs(problem, sizes, seed, layout_seed)
    _check_made(problem, inputs)
    if reuse is not None:
        buffers, args = reuse.buffers, reuse.args
    else:
        offsets = offsets or {}
        buffers = {name: Guarded.like(array, offsets.get(name, 0)) for name, array in inputs.items()}
        for spec in problem.workspaces:
            buffers[spec.name] = Guarded((problem.workspace_count(spec.name, sizes),), spec.storage_dtype)
        args = tuple(_argument(spec, buffers, sizes) for spec in problem.args)
    prepared = Prepared(problem, sizes, seed, layout_seed, key, buffers, args, {})
    for name in _const_inputs(problem):
        buffers[name].array[...] = inputs[name]
    prepared.reset_outputs(inputs)
    prepared.fingerprints = {name: fingerprint(buffers[name].array, key) for name in read_inputs(problem)}
    return prepared


def _check_made(problem: Problem, inputs: dict[str, cp.ndarray]) -> None:
    """make_inputs must give every pointer but the workspaces, each in its stored dtype: a mismatch is the
    problem's bug (the kernel would read other bits than the reference), not the reader's."""
    for spec in problem.args:
        if not spec.is_pointer or spec.is_workspace:
            continue
        if spec.name not in inputs:
            raise ValueError(f"{problem.name}: make_inputs gave no array for {spec.name!r}")
        if inputs[spec.name].dtype != np.dtype(spec.storage_dtype):
            raise ValueError(
                f"{problem.name}: make_inputs gave {spec.name!r} as {inputs[spec.name].dtype}, "
                f"but {spec.type} is stored as {spec.storage_dtype}"
            )


def _argument(spec, buffers: dict[str, Guarded], sizes: dict[str, int]):
    if spec.is_pointer:
        return buffers[spec.name].array
    if spec.value is not None:
        return np.float32(spec.value) if spec.dtype == "float32" else np.int32(spec.value)
    return np.int32(sizes[spec.name])


def build_tensor_maps(prepared: Prepared, resolved: list[ResolvedLaunch]) -> None:
    """Encode the plan's tensor maps over this input set's buffers (each set has its own), before and outside
    any timed region. Each covers its array exactly: the guard bands stay outside every descriptor."""
    from kernels import hopper

    prepared.tensor_maps = {
        spec.name: hopper.encode(spec, prepared.buffers[spec.array].array)
        for launch in resolved
        for spec in launch.tensor_maps
    }


def run_plan(
    resolved: list[ResolvedLaunch],
    kernels: dict[str, LoadedKernel],
    args: tuple,
    tensor_maps: dict[str, bytes] | None = None,
) -> None:
    """Launch the plan's kernels in order, all with the same arguments (and each its tensor maps after them).
    Clusters and tensor maps go through the driver's cuLaunchKernelEx, the rest through CuPy; a Triton build
    through CuPy too, with Triton's calling convention (kernels/triton_launch.py: its scratch pointers appended)."""
    for launch in resolved:
        triton = getattr(kernels[launch.kernel], "triton", None)
        if triton is not None:
            triton.launch(kernels[launch.kernel].function, launch, args)
        elif launch.needs_driver:
            from kernels import hopper

            stream = cp.cuda.get_current_stream().ptr
            hopper.launch(kernels[launch.kernel].function.ptr, launch, args, tensor_maps or {}, stream)
        else:
            kernels[launch.kernel].function(launch.grid, launch.block, args, shared_mem=launch.shared_bytes)


def input_faults(prepared: Prepared) -> str:
    """After a launch: writes outside any buffer, workspaces included (guard bands changed), or into const
    inputs (fingerprint changed); empty when there were none."""
    spoiled = [n for n, b in prepared.buffers.items() if not b.guards_intact()]
    if spoiled:
        return f"wrote out of bounds, next to {', '.join(spoiled)}"
    changed = [
        n
        for n in _const_inputs(prepared.problem)
        if fingerprint(prepared.buffers[n].array, prepared.key) != prepared.fingerprints[n]
    ]
    if changed:
        return (
            f"the kernel modified its input{'s' if len(changed) > 1 else ''} {', '.join(changed)} "
            "(declared const: it must come back unchanged)"
        )
    return ""

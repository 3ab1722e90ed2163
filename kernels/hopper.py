"""Launches CuPy cannot make: thread-block clusters and TMA tensor maps, through the CUDA driver's own calls in
NVIDIA's Python bindings (`cuda-bindings`, GPU nodes only: imported on first use, never by the CPU side).

    encode(spec, array) -> bytes        the 128-byte CUtensorMap of a ResolvedTensorMap over one array
    launch(function, launch, args, maps) one launch with cuLaunchKernelEx: grid, block, dynamic shared memory,
                                         the cluster dimension as a launch attribute, the problem's arguments
                                         then the tensor maps (by value), on CuPy's current stream

The function is the one CuPy loaded (`cupy.cuda.function.Function.ptr` is the CUfunction handle), so the
launch runs in the same (primary) context, on the same stream and with the same attributes (the raised
dynamic shared memory limit) as the ordinary ones. A descriptor covers exactly the array it names, whole: the
judge's guard bands around it stay outside, and TMA fills reads past its edges with zeros (or NaN) and drops
writes past them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from kernels.results import ResolvedLaunch, ResolvedTensorMap

TENSOR_MAP_BYTES = 128  # sizeof(CUtensorMap), 64-byte aligned in the kernel's parameter space
_ALIGN_BYTES = 16  # global address alignment cuTensorMapEncodeTiled requires (no interleave)


class DriverError(RuntimeError):
    """A CUDA driver call through cuda-bindings failed (the job answers it as a runtime error)."""


class BindingsMissing(RuntimeError):
    """cuda-bindings is not installed on this GPU node (the judge's fault, not the submission's)."""


@functools.cache
def driver() -> Any:
    try:
        from cuda.bindings import driver as bindings
    except ImportError as exc:
        raise BindingsMissing(
            "cuda-bindings is not installed on this GPU node: plans with clusters or tensor maps need it "
            "(pip install '.[gpu]')"
        ) from exc
    _check(bindings, bindings.cuInit(0), "cuInit")  # no-op once CuPy has initialised the driver
    return bindings


def _check(bindings: Any, returned: Any, call: str) -> tuple:
    """cuda-bindings returns (CUresult, *values); raise on anything but CUDA_SUCCESS."""
    result = returned[0] if isinstance(returned, tuple) else returned
    if result != bindings.CUresult.CUDA_SUCCESS:
        _, text = bindings.cuGetErrorString(result)
        detail = text.decode() if isinstance(text, bytes) else str(text)
        raise DriverError(f"{call} failed: {getattr(result, 'name', result)}: {detail}")
    return returned[1:] if isinstance(returned, tuple) else ()


# ---- tensor maps ----------------------------------------------------------------------------------------------

_DATA_TYPES = {
    "float32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
    "float16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
    "bfloat16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
    "int32": "CU_TENSOR_MAP_DATA_TYPE_INT32",
    "float8_e4m3": "CU_TENSOR_MAP_DATA_TYPE_UINT8",  # TMA moves FP8 codes as bytes
}
_SWIZZLES = {
    "none": "CU_TENSOR_MAP_SWIZZLE_NONE",
    "32B": "CU_TENSOR_MAP_SWIZZLE_32B",
    "64B": "CU_TENSOR_MAP_SWIZZLE_64B",
    "128B": "CU_TENSOR_MAP_SWIZZLE_128B",
}
_L2_PROMOTIONS = {
    "none": "CU_TENSOR_MAP_L2_PROMOTION_NONE",
    "64B": "CU_TENSOR_MAP_L2_PROMOTION_L2_64B",
    "128B": "CU_TENSOR_MAP_L2_PROMOTION_L2_128B",
    "256B": "CU_TENSOR_MAP_L2_PROMOTION_L2_256B",
}
_OOB_FILLS = {"zero": "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE", "nan": "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"}


def encode(spec: ResolvedTensorMap, array: Any) -> bytes:
    """cuTensorMapEncodeTiled over `array` (a CuPy array, C-contiguous) as the plan resolved it at this shape.
    The array's own shape and dtype must be what the plan was checked against on the CPU."""
    d = driver()
    if tuple(reversed(array.shape)) != spec.dims:
        raise ValueError(
            f"tensor map {spec.name!r}: array {spec.array} is {array.shape}, the plan resolved {spec.dims}"
        )
    if not array.flags.c_contiguous:
        raise ValueError(f"tensor map {spec.name!r}: array {spec.array} is not contiguous")
    address = array.data.ptr
    if address % _ALIGN_BYTES:
        # The plan was refused on the CPU unless the array is promised 16 bytes, and Guarded keeps that promise:
        # this is the judge's bug, never the submission's.
        raise ValueError(f"tensor map {spec.name!r}: {spec.array} at {address:#x} is not {_ALIGN_BYTES}-byte aligned")
    rank = len(spec.dims)
    (tensor_map,) = _check(
        d,
        d.cuTensorMapEncodeTiled(
            getattr(d.CUtensorMapDataType, _DATA_TYPES[spec.dtype]),
            rank,
            address,
            # The bindings take these arrays as their cuuint64_t / cuuint32_t objects only, not as ints.
            [d.cuuint64_t(v) for v in spec.dims],
            [d.cuuint64_t(v) for v in spec.strides_bytes],
            [d.cuuint32_t(v) for v in spec.box],
            [d.cuuint32_t(1)] * rank,  # element strides: every element of the box
            d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(d.CUtensorMapSwizzle, _SWIZZLES[spec.swizzle]),
            getattr(d.CUtensorMapL2promotion, _L2_PROMOTIONS[spec.l2_promotion]),
            getattr(d.CUtensorMapFloatOOBfill, _OOB_FILLS[spec.oob_fill]),
        ),
        f"cuTensorMapEncodeTiled ({spec.name} over {spec.array})",
    )
    words = np.array([int(w) for w in tensor_map.opaque], dtype=np.uint64)
    if words.nbytes != TENSOR_MAP_BYTES:
        raise DriverError(f"a CUtensorMap of {words.nbytes} bytes; expected {TENSOR_MAP_BYTES}")
    return words.tobytes()


# ---- launches -------------------------------------------------------------------------------------------------


def _parameter(value: Any) -> np.ndarray:
    """One kernel parameter as host bytes the driver copies at launch: a device pointer (CuPy array) as 8
    bytes, a NumPy scalar as itself, a tensor map's 128 bytes as they are."""
    if isinstance(value, bytes):
        return np.frombuffer(value, dtype=np.uint64).copy()
    if hasattr(value, "data") and hasattr(value.data, "ptr"):
        return np.array([value.data.ptr], dtype=np.uint64)
    if isinstance(value, np.generic):
        return np.array([value])
    raise TypeError(f"cannot pass {type(value).__name__} as a kernel parameter")


def launch(function_ptr: int, resolved: ResolvedLaunch, args: tuple, maps: dict[str, bytes], stream_ptr: int) -> None:
    """cuLaunchKernelEx of the CUfunction `function_ptr`: the problem's arguments, then the launch's tensor maps
    (by value), with the cluster dimension as a launch attribute where the plan has one."""
    d = driver()
    values = [*args, *(maps[m.name] for m in resolved.tensor_maps)]
    holders = [_parameter(v) for v in values]  # alive until the call returns: the driver copies them then
    pointers = np.array([h.ctypes.data for h in holders], dtype=np.uintp)
    config = _config(d, resolved, stream_ptr)
    kernel_params = int(pointers.ctypes.data) if holders else 0
    _check(d, d.cuLaunchKernelEx(config, d.CUfunction(function_ptr), kernel_params, 0), f"launch of {resolved.kernel}")
    del holders, pointers


def _config(d: Any, resolved: ResolvedLaunch, stream_ptr: int) -> Any:
    config = d.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = resolved.grid
    config.blockDimX, config.blockDimY, config.blockDimZ = resolved.block
    config.sharedMemBytes = resolved.shared_bytes
    config.hStream = d.CUstream(stream_ptr)
    if resolved.cluster is not None:
        attribute = d.CUlaunchAttribute()
        attribute.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        dim = attribute.value.clusterDim
        dim.x, dim.y, dim.z = resolved.cluster
        config.attrs = [attribute]
        config.numAttrs = 1
    else:
        config.numAttrs = 0
    return config


# ---- fitting, once the module is loaded -----------------------------------------------------------------------


def allow_non_portable_clusters(function_ptr: int) -> None:
    """Clusters of 9 to 16 blocks need the kernel's opt-in attribute (Hopper allows 16)."""
    d = driver()
    _check(
        d,
        d.cuFuncSetAttribute(
            d.CUfunction(function_ptr), d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1
        ),
        "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)",
    )


def max_cluster_blocks(function_ptr: int, resolved: ResolvedLaunch, stream_ptr: int) -> int | None:
    """The largest cluster this GPU can co-schedule for the kernel at this block size and shared memory
    (cuOccupancyMaxPotentialClusterSize), or None where the driver cannot say."""
    d = driver()
    try:
        (blocks,) = _check(
            d,
            d.cuOccupancyMaxPotentialClusterSize(d.CUfunction(function_ptr), _config(d, resolved, stream_ptr)),
            "cuOccupancyMaxPotentialClusterSize",
        )
    except DriverError:
        return None
    return int(blocks)


def parameter_sizes(function_ptr: int) -> list[int] | None:
    """The byte size of each of the kernel's parameters, in order (cuFuncGetParamInfo, CUDA 12.4 and later),
    or None where the driver or the bindings cannot say."""
    d = driver()
    if not hasattr(d, "cuFuncGetParamInfo"):
        return None
    sizes = []
    for index in range(1024):  # far more than any problem's arguments; the driver refuses past the last one
        returned = d.cuFuncGetParamInfo(d.CUfunction(function_ptr), index)
        if returned[0] != d.CUresult.CUDA_SUCCESS:
            break
        sizes.append(int(returned[2]))
    return sizes or None

"""kernels/hopper.py on the CPU, against a stand-in for cuda-bindings' driver module (the real one needs a GPU
and is not installed here): what cuTensorMapEncodeTiled and cuLaunchKernelEx are given, byte for byte. The
bindings' own acceptance of these argument types is exercised on the GPU (tests/kernels/test_gpu_hopper.py)."""

import ctypes
import enum
import importlib.util
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from kernels import hopper
from kernels.results import ResolvedLaunch, ResolvedTensorMap


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1


def _enum(name, *members):
    return enum.IntEnum(name, {m: i for i, m in enumerate(members)})


class _Dim:
    x = y = z = 0


class _Value:
    def __init__(self):
        self.clusterDim = _Dim()


class CUlaunchAttribute:
    def __init__(self):
        self.id, self.value = None, _Value()


class CUlaunchConfig:
    attrs: list = []
    numAttrs = 0


class StandInDriver:
    """The calls and types hopper.py uses, recording what they were given."""

    CUresult = CUresult
    CUtensorMapDataType = _enum(
        "CUtensorMapDataType",
        *[f"CU_TENSOR_MAP_DATA_TYPE_{t}" for t in ("UINT8", "INT32", "FLOAT16", "FLOAT32", "BFLOAT16")],
    )
    CUtensorMapInterleave = _enum("CUtensorMapInterleave", "CU_TENSOR_MAP_INTERLEAVE_NONE")
    CUtensorMapSwizzle = _enum(
        "CUtensorMapSwizzle", *[f"CU_TENSOR_MAP_SWIZZLE_{s}" for s in ("NONE", "32B", "64B", "128B")]
    )
    CUtensorMapL2promotion = _enum(
        "CUtensorMapL2promotion", *[f"CU_TENSOR_MAP_L2_PROMOTION_{p}" for p in ("NONE", "L2_64B", "L2_128B", "L2_256B")]
    )
    CUtensorMapFloatOOBfill = _enum(
        "CUtensorMapFloatOOBfill",
        "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE",
        "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA",
    )
    CUlaunchAttributeID = SimpleNamespace(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION=4)
    CUfunction_attribute = SimpleNamespace(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED=16)
    CUlaunchConfig = CUlaunchConfig
    CUlaunchAttribute = CUlaunchAttribute

    def __init__(self, fail=None):
        self.calls, self.fail = [], fail

    cuuint64_t = staticmethod(lambda v: ("u64", v))
    cuuint32_t = staticmethod(lambda v: ("u32", v))
    CUfunction = staticmethod(lambda handle: ("CUfunction", handle))
    CUstream = staticmethod(lambda handle: ("CUstream", handle))

    def _result(self, name):
        return CUresult.CUDA_ERROR_INVALID_VALUE if self.fail == name else CUresult.CUDA_SUCCESS

    def cuGetErrorString(self, result):
        return CUresult.CUDA_SUCCESS, b"invalid argument"

    def cuTensorMapEncodeTiled(self, *args):
        self.calls.append(("encode", args))
        return self._result("encode"), SimpleNamespace(opaque=list(range(100, 116)))

    def cuLaunchKernelEx(self, config, function, kernel_params, extra):
        # Read the parameters now, as the driver does: a void** array of pointers to each parameter's bytes.
        pointers = (ctypes.c_uint64 * self.param_count).from_address(kernel_params)
        params = [ctypes.string_at(p, size) for p, size in zip(pointers, self.param_sizes, strict=True)]
        self.calls.append(("launch", config, function, params, extra))
        return (self._result("launch"),)

    def cuFuncSetAttribute(self, function, attribute, value):
        self.calls.append(("attribute", function, attribute, value))
        return (self._result("attribute"),)


@pytest.fixture
def stand_in(monkeypatch):
    d = StandInDriver()
    monkeypatch.setattr(hopper, "driver", lambda: d)
    return d


class FakeArray:
    """What encode reads of a CuPy array."""

    def __init__(self, shape, address=1 << 30, contiguous=True):
        self.shape, self.data, self.flags = (
            shape,
            SimpleNamespace(ptr=address),
            SimpleNamespace(c_contiguous=contiguous),
        )


SPEC = ResolvedTensorMap("tmA", "A", "bfloat16", (136, 127), (272,), (64, 128), "128B", "256B", "nan")


def test_encode_passes_the_resolved_descriptor_and_returns_its_128_bytes(stand_in):
    words = hopper.encode(SPEC, FakeArray((127, 136)))
    assert words == np.arange(100, 116, dtype=np.uint64).tobytes() and len(words) == hopper.TENSOR_MAP_BYTES
    ((_, args),) = stand_in.calls
    dtype, rank, address, dims, strides, box, element_strides, interleave, swizzle, l2, oob = args
    assert dtype.name == "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" and rank == 2 and address == 1 << 30
    assert dims == [("u64", 136), ("u64", 127)] and strides == [("u64", 272)]
    assert box == [("u32", 64), ("u32", 128)] and element_strides == [("u32", 1), ("u32", 1)]
    assert interleave.name == "CU_TENSOR_MAP_INTERLEAVE_NONE" and swizzle.name == "CU_TENSOR_MAP_SWIZZLE_128B"
    assert (
        l2.name == "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"
        and oob.name == "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"
    )


@pytest.mark.parametrize(
    "array, fragment",
    [
        (FakeArray((136, 127)), r"the plan resolved \(136, 127\)"),
        (FakeArray((127, 136), contiguous=False), "is not contiguous"),
        (FakeArray((127, 136), address=(1 << 30) + 8), "is not 16-byte aligned"),
    ],
)
def test_encode_refuses_an_array_other_than_the_plan_was_checked_against(stand_in, array, fragment):
    with pytest.raises(ValueError, match=fragment):
        hopper.encode(SPEC, array)
    assert stand_in.calls == []


def test_a_driver_error_names_the_call(stand_in):
    stand_in.fail = "encode"
    with pytest.raises(hopper.DriverError, match=r"cuTensorMapEncodeTiled \(tmA over A\) failed: .*invalid argument"):
        hopper.encode(SPEC, FakeArray((127, 136)))


def test_launch_passes_the_arguments_then_the_maps_with_the_cluster_attribute(stand_in):
    args = (np.int32(127), np.int32(264), np.float32(1.25), FakeArray((127, 136), address=0x7F0012345600))
    resolved = ResolvedLaunch("k<2>", (132, 1, 1), (384, 1, 1), 200_000, (2, 1, 1), False, [SPEC])
    stand_in.param_count, stand_in.param_sizes = 5, [4, 4, 4, 8, 128]
    tensor_map = bytes(range(128))
    hopper.launch(0xABC, resolved, args, {"tmA": tensor_map}, stream_ptr=0x55)
    ((_, config, function, params, extra),) = stand_in.calls
    assert function == ("CUfunction", 0xABC) and extra == 0
    assert params[0] == np.int32(127).tobytes() and params[1] == np.int32(264).tobytes()
    assert params[2] == np.float32(1.25).tobytes() and params[3] == (0x7F0012345600).to_bytes(8, "little")
    assert params[4] == tensor_map
    assert (config.gridDimX, config.gridDimY, config.gridDimZ) == (132, 1, 1)
    assert (config.blockDimX, config.blockDimY, config.blockDimZ) == (384, 1, 1)
    assert config.sharedMemBytes == 200_000 and config.hStream == ("CUstream", 0x55) and config.numAttrs == 1
    (attribute,) = config.attrs
    assert attribute.id == 4 and (attribute.value.clusterDim.x, attribute.value.clusterDim.y) == (2, 1)


def test_a_launch_without_a_cluster_has_no_attribute_and_a_failed_one_raises(stand_in):
    resolved = ResolvedLaunch("k", (4, 2, 1), (128, 1, 1), 0, None, False, [SPEC])
    stand_in.param_count, stand_in.param_sizes = 2, [4, 128]
    hopper.launch(1, resolved, (np.int32(7),), {"tmA": bytes(128)}, 0)
    assert stand_in.calls[0][1].numAttrs == 0 and stand_in.calls[0][1].attrs == []
    stand_in.fail = "launch"
    with pytest.raises(hopper.DriverError, match="launch of k failed"):
        hopper.launch(1, resolved, (np.int32(7),), {"tmA": bytes(128)}, 0)


def test_non_portable_clusters_set_the_kernels_attribute(stand_in):
    hopper.allow_non_portable_clusters(0x99)
    assert stand_in.calls == [("attribute", ("CUfunction", 0x99), 16, 1)]


def test_the_bindings_are_imported_only_on_the_gpu_path():
    """The CPU side (plans, compiler, even hopper.py itself) imports no cuda-bindings; without them the GPU path
    says what is missing."""
    code = "import sys, kernels.compiler, kernels.plan, kernels.hopper; print('cuda.bindings' in sys.modules)"
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert imported.strip() == "False"
    if importlib.util.find_spec("cuda") is None or importlib.util.find_spec("cuda.bindings") is None:
        hopper.driver.cache_clear()
        with pytest.raises(hopper.BindingsMissing, match="cuda-bindings is not installed"):
            hopper.driver()

"""PyTorch as a baseline: CuPy arrays seen as torch tensors and back, without copies, on the judge's stream.

The judge holds every buffer as a CuPy array (BF16 as uint16 bits, FP8 E4M3 as uint8 codes). DLPack hands the
same device memory to torch (`torch.from_dlpack`), and a view of the same bits gives the element type CuPy
lacks (`.view(torch.bfloat16)`, `.view(torch.float8_e4m3fn)`); results come back the same way
(`cupy.from_dlpack`). torch's work is issued on CuPy's current stream, so the judge's CUDA events time it and
no synchronisation is needed between the two.

torch is imported here, lazily, and only here: only the GPU nodes have it (CI and `make run` do not), and only
the problems whose baseline is PyTorch call this module.

    with on_current_stream():
        y = torch().softmax(as_tensor(inputs["x"]), dim=1)
    return {"y": as_cupy(y)}
"""

from __future__ import annotations

import contextlib
import functools

# Element types CuPy lacks: the integer type DLPack carries their bits as, and the torch type they are.
_VIEWS = {"bfloat16": ("int16", "bfloat16"), "float8_e4m3": ("uint8", "float8_e4m3fn")}


@functools.cache
def torch():
    """The torch module, imported on first use. Reduced-precision reductions inside cuBLAS's BF16/FP16 GEMMs
    are switched off: the problems ask for FP32 accumulation, and the baseline must meet the contract it is
    compared under (the judge checks its output too)."""
    import torch as torch_module

    torch_module.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch_module.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch_module.backends.cuda.matmul.allow_tf32 = False
    return torch_module


@contextlib.contextmanager
def on_current_stream():
    """torch's current device and stream set to CuPy's for the block."""
    import cupy

    t = torch()
    ptr = cupy.cuda.get_current_stream().ptr
    with t.cuda.device(cupy.cuda.Device().id):
        # ptr 0 is CUDA's legacy default stream, which is also torch's default stream.
        stream = t.cuda.ExternalStream(ptr) if ptr else t.cuda.default_stream()
        with t.cuda.stream(stream):
            yield


def as_tensor(array, dtype: str | None = None):
    """A torch tensor on the same memory as the CuPy array. `dtype` names the element type where the stored
    one differs: "bfloat16" for uint16 bits, "float8_e4m3" for uint8 codes."""
    t = torch()
    if dtype is None:
        return t.from_dlpack(array)
    carrier, element = _VIEWS[dtype]
    # DLPack carries the bits as a plain integer type of the same width; the view reinterprets them.
    return t.from_dlpack(array.view(carrier)).view(getattr(t, element))


def as_cupy(tensor):
    """A CuPy array on the same memory as the tensor: BF16 comes back as uint16 bits, FP8 as uint8 codes."""
    import cupy

    t = torch()
    if tensor.dtype == t.bfloat16:
        return cupy.from_dlpack(tensor.view(t.int16)).view(cupy.uint16)
    if tensor.dtype == t.float8_e4m3fn:
        return cupy.from_dlpack(tensor.view(t.uint8))
    return cupy.from_dlpack(tensor)

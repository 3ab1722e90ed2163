"""The judge library: compile, check and time reader kernels against the vendor library.

Plain Python + CuPy, no Django. Compilation (`compile_submission`; Triton files with `language="triton"`) runs
anywhere NVRTC (or Triton) loads; judging (`GpuJudge`, `judge_submission`) needs an NVIDIA GPU and runs every
submission in a sandboxed child.
See kernels/README.md for the submission format, the API and the result schema.
"""

from kernels.compiler import compile_submission
from kernels.judge import GpuJudge, JudgeOptions, judge_submission
from kernels.problems import Problem
from kernels.problems import available as available_problems
from kernels.problems import load as load_problem
from kernels.results import (
    SCHEMA_VERSION,
    BenchResult,
    Ceilings,
    CompileResult,
    JudgeResult,
    KernelResources,
    ShapeCheck,
    Telemetry,
    TimingStats,
    TritonKernel,
    Verdict,
)

__all__ = [
    "SCHEMA_VERSION",
    "BenchResult",
    "Ceilings",
    "CompileResult",
    "GpuJudge",
    "JudgeOptions",
    "JudgeResult",
    "KernelResources",
    "Problem",
    "ShapeCheck",
    "Telemetry",
    "TimingStats",
    "TritonKernel",
    "Verdict",
    "available_problems",
    "compile_submission",
    "judge_submission",
    "load_problem",
]

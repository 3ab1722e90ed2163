"""What the compile stage costs a Triton submission on this CPU (issue 46), beside NVRTC's for the CUDA starter.

    python3 bench/triton_compile_time.py [--runs 5] [--arch sm_90]

For each workload it compiles `--runs` times through the whole compile stage (kernels/triton_compiler.py: parse
check, plan, the PTX child running the reader's file and Triton's lowering, the ptxas child) and prints the median
and maximum of: the stage end to end (what a compile worker spends, child starts included), the PTX child's job and
the ptxas child's job (`compile_time_ms`, their sum). The CUDA starter of vector_add goes through
kernels/compiler.py for comparison (its compile_time_ms is NVRTC's job in its child). No GPU needed.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import time
from pathlib import Path

from kernels import compiler, triton_compiler
from kernels.results import Verdict

ROOT = Path(__file__).resolve().parents[1]

# A tiled GEMM for the hgemm problem (FP16 in, FP32 out, tensor cores through tl.dot): a bigger kernel than the
# starters, for the compile time of a real submission. Not a starter: it assumes M, N and K are multiples of 128.
MATMUL = '''
import triton
import triton.language as tl


@triton.jit
def hgemm(M, N, K, alpha, A, B, beta, C, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(1) * BM + tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(B + (k0 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    c = C + rm[:, None] * N + rn[None, :]
    tl.store(c, alpha * acc + beta * tl.load(c))


PLAN = """
[[launch]]
kernel = "hgemm"
grid = ["cdiv(N, 128)", "cdiv(M, 128)"]
num_warps = 8
num_stages = 3
constexprs = { BM = 128, BN = 128, BK = 64 }
"""
'''

WORKLOADS = [
    ("vector_add (Triton starter)", "triton", "vector_add", ROOT / "kernels/problems/vector_add/example_triton.py"),
    ("softmax (Triton starter)", "triton", "softmax", ROOT / "kernels/problems/softmax/example_triton.py"),
    ("hgemm (Triton tl.dot, 128x128x64)", "triton", "hgemm", MATMUL),
    ("vector_add (CUDA starter, NVRTC)", "cuda", "vector_add", ROOT / "kernels/problems/vector_add/example.cu"),
]


def measure(language: str, problem: str, source: str, runs: int, arch: str) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {"stage_ms": [], "children_jobs_ms": []}
    for _ in range(runs):
        begin = time.perf_counter()
        result = compiler.compile_submission(source, problem, arch, language=language)
        figures["stage_ms"].append((time.perf_counter() - begin) * 1e3)
        assert result.verdict is Verdict.COMPILED, (result.message, result.log[-2000:])
        figures["children_jobs_ms"].append(result.compile_time_ms)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    print(
        f"{datetime.date.today()}, {platform.processor() or platform.machine()}, Triton "
        f"{triton_compiler.triton_version()}, ptxas {triton_compiler.ptxas_release(triton_compiler.ptxas_path(90))}, "
        f"NVRTC {compiler.nvrtc_version()}, arch {args.arch}, {args.runs} runs each (after one warm-up)"
    )
    print("| workload | compile stage end to end, ms (median / max) | jobs in the children, ms (median / max) |")
    print("| --- | --- | --- |")
    for name, language, problem, source in WORKLOADS:
        text = source.read_text() if isinstance(source, Path) else source
        measure(language, problem, text, 1, args.arch)  # warm-up: the page cache, the first import
        figures = measure(language, problem, text, args.runs, args.arch)
        cells = [f"{statistics.median(v):.0f} / {max(v):.0f}" for v in figures.values()]
        print(f"| {name} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()

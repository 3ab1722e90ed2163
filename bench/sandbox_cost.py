"""What the OS sandbox (kernels/confine.py) costs a child: the time it spends confining itself, beside the whole
start of a child and, for the compile child, a whole compile.

    python3 bench/sandbox_cost.py [--children 10]

For each kind of child (compile: NVRTC's paths; gpu: CUDA's paths and the GPU job's imports) it starts
`--children` children one after the other and prints the median and maximum of: the child's own time in
`confine.apply` (rlimits, Landlock rules, the seccomp filter, capabilities), its start up to its "imported" notice,
and, for the compile child, a compile of vector_add's example in it. No Django, no GPU needed (a GPU node also
shows the GPU child's imports of CuPy). The cost per judged job is the gpu row's confine time (one child a job).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from kernels import compiler, confine, judge, sandbox
from kernels.payloads import CompileJob

EXAMPLE = Path(__file__).resolve().parents[1] / "kernels" / "problems" / "vector_add" / "example.cu"


def measure(kind: str, children: int) -> dict[str, list[float]]:
    if kind == "compile":
        access, code = compiler.compile_access(), ("kernels.compiler:compile_job",)
    else:
        access, code = judge.gpu_access((judge.JOB, judge.WARM_UP), None), (judge.JOB, judge.WARM_UP)
    figures: dict[str, list[float]] = {"confine_ms": [], "start_ms": [], "compile_ms": []}
    job = CompileJob(
        source=EXAMPLE.read_text(),
        names=("vector_add",),
        arch=compiler.DEFAULT_ARCH,
        include_dirs=tuple(compiler.include_dirs()),
    )
    for _ in range(children):
        with sandbox.Worker(preload=code, access=access) as worker:
            begin = time.perf_counter()
            outcome = worker.start()
            figures["start_ms"].append((time.perf_counter() - begin) * 1e3)
            assert outcome.status is sandbox.Status.OK, outcome.error
            figures["confine_ms"].append(worker._child.confine_ms)
            if kind == "compile":
                done = worker.call("kernels.compiler:compile_job", job, 60)
                assert done.status is sandbox.Status.OK and done.value.ok, done.error or done.value.log
                figures["compile_ms"].append(done.wall_time_ms)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--children", type=int, default=10)
    args = parser.parse_args()
    print(f"sandbox: {confine.support().summary()}")
    for kind in ("compile", "gpu") if judge.gpu_present() else ("compile",):
        for name, values in measure(kind, args.children).items():
            if values:
                print(f"{kind:8s} {name:11s} median {statistics.median(values):8.1f}  max {max(values):8.1f}")


if __name__ == "__main__":
    main()

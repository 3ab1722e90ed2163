"""The program Nsight Compute profiles (issue 43): one run of a compiled submission's plan at one shape.

The profile child (kernels/profile_child.py) starts it under `ncu`, inside the child's confinement, which it
inherits and first narrows to its own /proc entry (confine.narrow_to_own_proc): it runs no reader Python (a Triton
submission's cubins were built on the compile node), loads the cubins as the judged job does (runner.load_kernels),
draws one input set, launches the plan once and waits for the GPU. ncu replays each launch of the reader's kernels
as many times as its sections need; the library work of drawing the inputs launches kernels too, which ncu's kernel
filter leaves out. Nothing is checked here: the submission was judged already, and a profile never changes a
verdict.

    python -I -m kernels.profile_target JOB.json
    (JOB: {"compiled": CompileResult, "sizes": {...}, "seed": n, "layer": the child's confine.Access or null})
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# The input stream of a profile run: other draws than any judged round's (kernels/inputs.py seed words).
PROFILE_STREAM = 0x50524F46


def main(argv: list[str] | None = None) -> int:
    from kernels import confine

    job = json.loads(Path((argv or sys.argv[1:])[0]).read_text())
    if job.get("layer"):  # first, before CuPy and CUDA: of /proc, only this process's own entry
        confine.narrow_to_own_proc(confine.Access.from_dict(job["layer"]))

    import cupy as cp

    from kernels import gpu, inputs, judge, problems, runner
    from kernels import plan as plan_mod
    from kernels.payloads import JobOptions
    from kernels.results import CompileResult, JudgeResult, Verdict

    compiled = CompileResult.from_dict(job["compiled"])
    sizes = {name: int(value) for name, value in job["sizes"].items()}
    problem = problems.load(compiled.problem)
    gpu_job = judge.gpu_job(compiled, JobOptions(seed=int(job["seed"]), bench=False))
    ctx = gpu.context()
    launches = [plan_mod.Launch.from_dict(data) for data in gpu_job.plan]
    loaded = JudgeResult(verdict=Verdict.ACCEPTED, message="", problem=problem.name, seed=gpu_job.options.seed)
    kernels = runner.load_kernels(gpu_job, problem, launches, ctx, loaded)
    prepared = inputs.prepare(problem, sizes, [gpu_job.options.seed, PROFILE_STREAM])
    resolved = [plan_mod.resolve(launch, sizes, gpu_job.arch, problem, ctx.sm_count) for launch in launches]
    inputs.build_tensor_maps(prepared, resolved)
    cp.cuda.Device().synchronize()  # the inputs' own kernels end before the reader's start
    inputs.run_plan(resolved, kernels, prepared.args, prepared.tensor_maps)
    cp.cuda.Device().synchronize()
    print(json.dumps({"launched": [launch.kernel for launch in resolved]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

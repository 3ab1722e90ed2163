"""Compile, on a compile node, every Triton file the GPU tests judge, for a GPU node whose Triton is not the pinned
one (the GPU image carries its own). Writes tests/kernels/precompiled/ (not committed), which the device call
carries; conftest.compile_triton_source reads it there.

    python tests/kernels/precompile_triton.py
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from kernels import compiler, problems, triton_compiler  # noqa: E402
from kernels.tools.ladder import REFERENCE_DIR  # noqa: E402

RUNG_ARCH = "sm_90a"


def jobs() -> list[tuple[str, str, str]]:
    """(source, problem, arch) for each Triton compile the GPU tests ask for."""
    from tests.kernels.test_triton_gpu import TWO_BUILDS

    found = [(TWO_BUILDS, "vector_add", compiler.DEFAULT_ARCH)]
    found += [
        (p.read_text(), p.parent.name, compiler.DEFAULT_ARCH) for p in problems.PROBLEMS_DIR.glob("*/example_triton.py")
    ]
    found += [(p.read_text(), p.parent.name, RUNG_ARCH) for p in REFERENCE_DIR.glob("*/triton_[0-9][0-9]_*.py")]
    bad = HERE / "bad" / "triton"
    for entry in tomllib.loads((bad / "manifest.toml").read_text())["bad"]:
        if entry["stage"] == "gpu":
            found.append(((bad / entry["file"]).read_text(), entry["problem"], compiler.DEFAULT_ARCH))
    return found


def main() -> int:
    from tests.kernels.conftest import PRECOMPILED, precompiled_path

    if not triton_compiler.compiles_here():
        print(
            f"Triton {triton_compiler.triton_version()!r} here is not {triton_compiler.PINNED_MINOR}", file=sys.stderr
        )
        return 2
    PRECOMPILED.mkdir(exist_ok=True)
    failed = 0
    for source, problem, arch in jobs():
        result = compiler.compile_submission(source, problem, arch, language="triton")
        path = precompiled_path(source, problem, arch)
        path.write_text(result.to_json())
        failed += not result.ok
        print(f"{path.name}: {result.verdict.value} in {result.compile_time_ms:.0f} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

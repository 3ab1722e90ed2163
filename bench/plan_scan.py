"""Time of the launch-plan scan on hostile sources (issue 28): the lazy pattern it replaced against
kernels.plan.plan_blocks, at growing sizes of repeated "/* @plan" (no block ever closed).

    .venv/bin/python bench/plan_scan.py            # old pattern up to 32 KB (it takes seconds beyond)
"""

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

import contextlib

from kernels.plan import PlanError, extract_plan  # noqa: E402

OLD_PATTERN = re.compile(r"/\*\s*@plan\b(.*?)\*/", re.DOTALL)  # what kernels/plan.py used before issue 28
UNIT = "/* @plan"


def best_ms(function, source: str, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        with contextlib.suppress(PlanError):
            function(source)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    old_limit_kb = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    print(f"{'size':>8} {'old pattern ms':>15} {'extract_plan ms':>16}")
    for kb in (8, 16, 32, 64, 128, 256):
        source = (UNIT * (kb * 1024 // len(UNIT) + 1))[: kb * 1024]
        old = f"{best_ms(OLD_PATTERN.findall, source, runs=1):15.1f}" if kb <= old_limit_kb else f"{'-':>15}"
        print(f"{kb:>6}KB {old} {best_ms(extract_plan, source):16.2f}")


if __name__ == "__main__":
    main()

"""Ceilings kept by the GPU worker: measured by one child, handed to every later one (no CuPy here).

Measuring the ceilings (a 1 GiB copy, an FMA kernel, two 8192^3 cuBLAS GEMMs) costs a child about a second
of GPU time, and their figures do not change from one job to the next on the same GPU. So the parent
(`kernels.judge.GpuJudge`) keeps the answer of the child that measured them (a `SetupAnswer`) and sends its
ceilings in the setup request of each later child (`payload_for`: a `SetupRequest`, kernels/payloads.py); the
child measures again only when it finds no ceilings, or finds itself on a different device than the one they
were measured on (`setup_answer`: UUID, driver, clocks, power limit, read at its setup). The parent stops
handing them on once they are older than `max_age_s`, so a slow drift (a GPU that clocks down as it ages in a
warm rack) is caught on a schedule.

A child measures only in its setup, which runs after the previous job returned and before its own job: never
while a job is timed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kernels.payloads import SetupAnswer, SetupRequest

CEILINGS_MAX_AGE_S = 30 * 60


def payload_for(
    kept: SetupAnswer | None,
    max_age_s: float,
    rehearse: list[str] | tuple[str, ...] | None,
    now: float | None = None,
    device_lock: str | None = None,
) -> SetupRequest:
    """The setup request of the next child: the kept ceilings while they are fresh, the device identity they
    were measured on, the baselines chosen on it (kernels/baselines.py: kept past the ceilings' age, since
    which library way is fastest depends on the device and the library, which the identity covers, not on the
    clocks), the problems whose first use the child should rehearse (None: all of them), and the worker's lock
    file (kernels/devicelock.py)."""
    now = time.time() if now is None else now
    ceilings = kept.ceilings if kept is not None else None
    fresh = bool(ceilings) and now - (ceilings.get("measured_at") or 0.0) < max_age_s
    return SetupRequest(
        ceilings=ceilings if fresh else None,
        identity=kept.identity if kept is not None else None,
        baselines=kept.baselines if kept is not None else None,
        rehearse=tuple(rehearse) if rehearse is not None else None,
        device_lock=device_lock,
    )


def setup_answer(
    request: SetupRequest | None, identity: dict[str, Any], measure: Callable[[], dict[str, Any]]
) -> SetupAnswer:
    """In the child, at setup: the handed ceilings when they were measured on this very device, else a fresh
    measurement (`measure()`, which must stamp `measured_at`; the answer says why: `measured`, `why_measured`)."""
    request = request or SetupRequest()
    handed = request.ceilings
    if handed and request.identity == identity:
        return SetupAnswer(identity=identity, ceilings=handed, measured=False)
    why = why_measured(handed, request.identity, identity)
    return SetupAnswer(identity=identity, ceilings=measure(), measured=True, why_measured=why)


def why_measured(handed: dict[str, Any] | None, was: dict[str, Any] | None, now: dict[str, Any]) -> str:
    """Why a child measured (a measurement holds the device for seconds, so a worker that measures again says why):
    nothing handed (the first child, or ceilings past their age), or the identity fields that differ."""
    if not handed:
        return "no ceilings handed on"
    was = was or {}
    changes = [
        f"{key}: {was.get(key)!r} -> {now.get(key)!r}" for key in sorted({*was, *now}) if was.get(key) != now.get(key)
    ]
    return "device identity changed: " + "; ".join(changes)


def uuid_text(raw: bytes | str) -> str:
    """The device UUID as nvidia-smi -L and NVIDIA_VISIBLE_DEVICES write it (GPU-8-4-4-4-12 hex digits), so that
    an operator finds the GPU that ran a job in the node's listing. CUDA gives the 16 raw bytes."""
    if not isinstance(raw, bytes | bytearray) or len(raw) != 16:
        return str(raw or "")
    h = bytes(raw).hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

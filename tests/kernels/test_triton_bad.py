"""The known-bad Triton files (tests/kernels/bad/triton/manifest.toml, issue 46): those whose verdict is the compile
stage's get it here, on the CPU, with their reason; those whose verdict needs the GPU compile cleanly here."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kernels import confine
from kernels import triton_compiler as tc
from kernels.results import Verdict

BAD = Path(__file__).parent / "bad" / "triton"
MANIFEST = tomllib.loads((BAD / "manifest.toml").read_text())["bad"]
# The compile-time bomb's limit here; the node's is COMPILE_TIMEOUT_S.
BOMB_TIMEOUT_S = 3
REQUIRED = {"file", "problem", "verdict", "stage", "what"}
KEYS = REQUIRED | {"bench", "message"}  # as in the CUDA set's manifest: timed rounds needed, the message's fragment


def test_every_file_is_listed_once_and_every_listed_file_exists():
    listed = [entry["file"] for entry in MANIFEST]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(p.name for p in BAD.glob("*.py"))
    assert {entry["stage"] for entry in MANIFEST} <= {"cpu", "gpu"}
    assert all(Verdict(entry["verdict"]) for entry in MANIFEST)
    for entry in MANIFEST:
        assert set(entry) <= KEYS, (entry["file"], sorted(set(entry) - KEYS))
        assert set(entry) >= REQUIRED, (entry["file"], sorted(REQUIRED - set(entry)))
        # Only the GPU stage has timed rounds to check.
        assert not entry.get("bench") or entry["stage"] == "gpu", entry["file"]


@pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())
@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["file"])
def test_each_file_meets_its_verdict_or_compiles_for_the_gpu(entry):
    source = (BAD / entry["file"]).read_text()
    result = tc.compile_triton(source, entry["problem"], timeout_s=BOMB_TIMEOUT_S if entry["stage"] == "cpu" else 30)
    if entry["stage"] == "cpu":
        assert result.verdict is Verdict(entry["verdict"]), (result.verdict, result.message)
        if result.verdict is Verdict.SOURCE_REJECTED:
            assert result.message.startswith("line ") or "limit" in result.message, result.message
    else:
        assert result.verdict is Verdict.COMPILED, (result.message, result.log[-2000:])

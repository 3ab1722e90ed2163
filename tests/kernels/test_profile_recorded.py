"""The rules of kernels/profile_rules.toml on metrics RECORDED by Nsight Compute from the reference ladders
(tests/kernels/profiles/<gpu>_ladders.json, written by `bench/profile_ladders.py --read RUN --record FILE` from a
GPU run; the README there says which GPU and when).

What a rule must show on real profiles: on a step k -> k+1 of a ladder whose change attacks it
(bench/profile_ladders.py, STEP_FIXES), it fires on rung k and is weaker on rung k+1. Every rule is shown so by some
recorded step, or is named in HANDWRITTEN_ONLY with the reason no ladder step shows it (the hand-written fixture of
test_profile_findings.py stays its only test)."""

import importlib.util
import json
from pathlib import Path

import pytest

from kernels import problems, profile_findings

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = sorted((Path(__file__).parent / "profiles").glob("*_ladders.json"))
_spec = importlib.util.spec_from_file_location("profile_ladders", ROOT / "bench" / "profile_ladders.py")
profile_ladders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(profile_ladders)

# Rules that no recorded ladder step shows, with why: filled from the first recordings (none yet).
HANDWRITTEN_ONLY: dict[str, str] = {}

needs_recordings = pytest.mark.skipif(not RECORDINGS, reason="no recorded ladder profiles yet (profile_ladders.py)")


def severities(case: dict) -> dict[str, float]:
    found = profile_findings.findings(case["metrics"], problem=problems.load(case["problem"]), sizes=case["sizes"])
    return {finding.rule: finding.severity for finding in found}


def recorded_steps() -> list[tuple[str, str, str, dict, dict]]:
    """(recording, rung k, rung k+1, k's case, k+1's case) for each step of a ladder with both rungs recorded."""
    steps = []
    for recording in RECORDINGS:
        cases = json.loads(recording.read_text())["cases"]
        for ladder in profile_ladders.LADDERS:
            names = [profile_ladders.step_of(path) for path in profile_ladders.rungs_of(ladder)]
            for before, after in zip(names, names[1:], strict=False):
                if before in cases and after in cases and profile_ladders.STEP_FIXES.get(after):
                    steps.append((recording.name, before, after, cases[before], cases[after]))
    return steps


def shown_by(rule: str, before: dict, after: dict) -> bool:
    """The rule fires on rung k and is weaker on rung k+1 (absent counts as 0)."""
    was, now = severities(before), severities(after)
    return rule in was and was[rule] > now.get(rule, 0.0)


def test_each_step_names_a_rung_of_its_ladder_and_rules_that_exist():
    rules = {rule.id for rule in profile_findings.load().rules}
    ladders = [profile_ladders.rungs_of(ladder) for ladder in profile_ladders.LADDERS]
    rungs = {profile_ladders.step_of(path) for paths in ladders for path in paths}
    assert set(profile_ladders.STEP_FIXES) <= rungs, sorted(set(profile_ladders.STEP_FIXES) - rungs)
    for step, fixes in profile_ladders.STEP_FIXES.items():
        assert fixes <= rules, (step, sorted(fixes - rules))
    firsts = {profile_ladders.step_of(paths[0]) for paths in ladders}
    assert rungs - firsts <= set(profile_ladders.STEP_FIXES), sorted(rungs - firsts - set(profile_ladders.STEP_FIXES))


@needs_recordings
def test_each_recording_holds_every_metric_the_rules_read():
    names = set(profile_findings.load().metrics.values())  # Nsight Compute's names (their aliases are the keys)
    for recording in RECORDINGS:
        for step, case in json.loads(recording.read_text())["cases"].items():
            assert names <= set(case["metrics"]), (recording.name, step, sorted(names - set(case["metrics"])))


@needs_recordings
def test_every_rule_is_shown_by_a_recorded_ladder_step():
    shown = {
        rule
        for _, _, after, before_case, after_case in recorded_steps()
        for rule in profile_ladders.STEP_FIXES[after]
        if shown_by(rule, before_case, after_case)
    }
    rules = {rule.id for rule in profile_findings.load().rules}
    assert rules - set(HANDWRITTEN_ONLY) <= shown, sorted(rules - set(HANDWRITTEN_ONLY) - shown)
    assert not (shown & set(HANDWRITTEN_ONLY)), "a rule a recording shows is no longer hand-written only"


def test_the_ladder_table_reads_each_step_against_what_the_next_rung_changes():
    """bench/profile_ladders.py's table (the one BENCHMARKS gets): a step whose next rung fixes the top finding is
    "yes", one that fixes something else is "no" with what it fixes, and a step whose change does not run at the
    profiled shape says so instead of "no"."""

    def row(step, problem, top):
        return {
            "step": step,
            "problem": problem,
            "status": "profiled",
            "sizes": {"rows": 4096, "cols": 4096} if problem == "softmax" else {"M": 4096, "N": 4096, "K": 4096},
            "gpu_seconds": 1.0,
            "findings": [{"rule": top, "severity": 0.9, "sentence": ""}],
            "stalls": [],
        }

    table = profile_ladders.steps_table(
        [
            row("01_naive", "sgemm", "shared_bank_conflicts"),
            row("02_coalesced", "sgemm", "long_scoreboard_stalls"),
            row("03_smem_tiling", "sgemm", "shared_memory_throttle"),
            row("softmax/02_online_cached", "softmax", "long_scoreboard_stalls"),
            row("softmax/03_cluster_split", "softmax", "long_scoreboard_stalls"),
        ]
    )
    by_step = {line.split(" | ")[0].removeprefix("| "): line for line in table[2:]}
    assert "| no (it fixes uncoalesced_global_loads, uncoalesced_global_stores) |" in by_step["01_naive"]
    assert "| yes |" in by_step["02_coalesced"] and "| (last rung) |" in by_step["03_smem_tiling"]
    assert "n/a: at 4096x4096, the shape profiled" in by_step["softmax/02_online_cached"]
    assert set(profile_ladders.NOT_AT_PROFILED_SHAPE) <= set(profile_ladders.STEP_FIXES)

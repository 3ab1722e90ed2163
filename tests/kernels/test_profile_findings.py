"""The profile rules (kernels/profile_rules.toml) and their engine (kernels/profile_findings.py), on the
HAND-WRITTEN metric fixtures of tests/kernels/profiles/ (README there: not measured; real H200 profiles replace
them in the next GPU session), and the profile schema (kernels/profile.py)."""

import json
import re
from pathlib import Path

import pytest

from kernels import problems, profile_findings
from kernels import profile as profile_mod

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = json.loads((Path(__file__).parent / "profiles" / "handwritten_metrics.json").read_text())["cases"]
CAPSULES = ROOT / "content" / "kernel-engineering" / "capsules"
# Nsight Compute metric names: <unit>__<counter>[.<rollup>][.<submetric>] (Profiling Guide, "Metrics Structure").
METRIC_NAME = re.compile(r"^(sm|smsp|l1tex|lts|dram|gpu|launch)__[a-z0-9_]+(\.[a-z_]+)*$")


def run_case(name):
    case = FIXTURES[name]
    return profile_findings.findings(case["metrics"], problem=problems.load(case["problem"]), sizes=case["sizes"])


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_each_fixture_raises_its_expected_top_finding(name):
    found = run_case(name)
    expected = FIXTURES[name]["expect_top"]
    assert (found[0].rule if found else None) == expected, [f.rule for f in found]


def test_every_rule_is_exercised_by_a_fixture():
    expected = {case["expect_top"] for case in FIXTURES.values()}
    assert {rule.id for rule in profile_findings.load().rules} <= expected


def test_every_rule_names_an_existing_capsule_by_number_and_slug():
    for rule in profile_findings.load().rules:
        assert (CAPSULES / f"{rule.capsule:02d}-{rule.capsule_slug}.md").is_file(), rule.id


def test_metric_names_are_nsight_compute_names_and_aliases_are_used():
    rules = profile_findings.load()
    for alias, name in rules.metrics.items():
        assert METRIC_NAME.match(name), (alias, name)
    text = " ".join([*rules.derived.values(), *(r.value + " " + r.when for r in rules.rules)])
    for rule in rules.rules:
        text += " " + " ".join(rule.requires)
    unused = [alias for alias in rules.metrics if not re.search(rf"\b{alias}\b", text)]
    assert set(unused) <= {
        "mem_sol",
        "l1_sol",
        "l2_sol",
        "duration_ns",
        "ld_requests",
        "grid_size",
        "block_size",
        "fma_pipe",
        "alu_pipe",
    }  # shown on the page or kept for the next rules


def test_warpgroup_mmas_counted_by_either_tensor_metric_keep_the_tensor_rule_quiet():
    """A Hopper kernel whose MMAs are warpgroup MMAs: if only the every-type metric counts them, it still counts."""
    assert "tensor_pipes_idle" in [f.rule for f in run_case("tensor_idle_hgemm_fp32_pipes")]
    case = FIXTURES["tensor_idle_hgemm_fp32_pipes"]
    every_type = profile_findings.load().metrics["tensor_pipe_all"]
    metrics = {**case["metrics"], every_type: 71.0}
    found = profile_findings.findings(metrics, problem=problems.load(case["problem"]), sizes=case["sizes"])
    assert "tensor_pipes_idle" not in [f.rule for f in found]


def test_sentence_fills_in_the_measured_values():
    (finding,) = [f for f in run_case("uncoalesced_loads_sgemm_naive") if f.rule == "uncoalesced_global_loads"]
    assert finding.sentence.startswith("Global loads use 4.0 of the 32 bytes of each sector")
    assert finding.capsule == 19 and finding.level == "high"


def test_findings_are_ordered_worst_first():
    found = run_case("long_scoreboard_gemv")
    assert [f.severity for f in found] == sorted((f.severity for f in found), reverse=True)


def test_a_clean_kernel_raises_nothing_and_missing_sections_silence_their_rules():
    assert run_case("clean_sgemm_warptiled") == []
    assert run_case("partial_sections_no_warp_state") == []
    assert profile_findings.findings({}) == []


def test_bytes_against_the_problems_minimum():
    case = FIXTURES["redundant_dram_sgemm_no_reuse"]
    sgemm = problems.load("sgemm")
    result = profile_findings.bytes_vs_minimum(case["metrics"], problem=sgemm, sizes=case["sizes"])
    assert result.minimum == sgemm.bytes_moved(case["sizes"]) == 4 * 4 * 4096 * 4096
    assert result.sentence == "This kernel moves 12.0 times the bytes it must through DRAM."
    assert profile_findings.bytes_vs_minimum({}, problem=sgemm, sizes=case["sizes"]) is None


def test_top_stalls_in_plain_words():
    stalls = profile_findings.top_stalls(FIXTURES["barrier_stalls_reduce"]["metrics"])
    assert [s["reason"] for s in stalls][0] == "barrier"
    assert stalls[0]["words"] == "waiting at __syncthreads()" and len(stalls) == 3


@pytest.mark.parametrize("expr", ["__import__('os')", "a.b", "x[0]", "lambda: 1", "'s'"])
def test_expressions_allow_arithmetic_only(expr):
    with pytest.raises((profile_findings.RuleError, profile_findings.Missing)):
        profile_findings.evaluate(expr, {"a": 1.0, "x": 2.0})


def test_expression_arithmetic():
    assert profile_findings.evaluate("max(a, 2) * 3 - a / 2", {"a": 4.0}) == 10.0
    assert profile_findings.evaluate("a < 5 and not a > 9", {"a": 4.0}) == 1.0


def test_profile_schema_round_trips_and_refuses_other_versions():
    document = profile_mod.Profile(
        status="profiled",
        metrics={"gpu__time_duration.sum": 1.0},
        source_lines=[profile_mod.SourceLine(line=3, samples=10, share=50.0, stall="long_scoreboard")],
        sizes={"M": 64},
    )
    again = profile_mod.Profile.from_dict(json.loads(json.dumps(document.to_dict())))
    assert again == document and again.profiled
    with pytest.raises(ValueError):
        profile_mod.Profile.from_dict({**document.to_dict(), "schema_version": 99})


def test_states_for_nodes_without_ncu_or_counters():
    assert profile_mod.find_ncu("/nonexistent/ncu") is None
    no_ncu = profile_mod.profile_no_ncu("PATH")
    assert no_ncu.status == "no_ncu" and not no_ncu.profiled and "no ncu found" in no_ncu.reason
    refused = profile_mod.from_ncu_failure(1, "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
    assert refused.status == "off" and "performance counters" in refused.reason
    crashed = profile_mod.from_ncu_failure(139, "==PROF== Profiling\n==ERROR== The application returned an error")
    assert crashed.status == "failed" and "exit 139" in crashed.reason


def test_ncu_command_collects_the_sections_and_the_rules_metrics():
    metrics = list(profile_findings.load().metrics.values())
    command = profile_mod.ncu_command(
        "ncu", report="/tmp/r", kernel_regex="sgemm", launch_count=1, metrics=metrics, program=["py"]
    )
    for section in ("SpeedOfLight", "Occupancy", "WarpStateStats", "SourceCounters", "MemoryWorkloadAnalysis_Tables"):
        assert section in command
    assert command[-1] == "py" and ",".join(metrics) in command

"""A real Nsight Compute export read into the profile document (issue 43, kernels/profile_report.py).

The recorded files are from the first profile run on a GPU (2026-12-07, an H100 80GB HBM3, driver 580.159.04, Nsight
Compute 2025.3.1): SGEMM rung 05 (kernels/reference/05_blocktile_2d.cu) at 4096^3, profiled by
kernels.profile_child.profile_job (ncu with the sections of kernels/profile.py and the rules' metrics) outside the
sandbox, exported with `--page raw --csv` and `--page source --csv --print-source sass,cuda`, gzipped as they came."""

from __future__ import annotations

import gzip
import os
import stat
from pathlib import Path

from kernels import problems, profile_findings, profile_report
from kernels import profile as profile_mod

RECORDED = Path(__file__).parent / "profiles"
SIZES = {"M": 4096, "N": 4096, "K": 4096}


def recorded(name: str) -> str:
    return gzip.decompress((RECORDED / name).read_bytes()).decode()


def sgemm_05() -> profile_mod.Profile:
    answer = {
        "ok": True,
        "raw_csv": recorded("h100_sgemm_05_raw.csv.gz"),
        "source_csv": recorded("h100_sgemm_05_source.csv.gz"),
        "version": "Version 2025.3.1.0 (build 36398880) (public-release)",
    }
    return profile_report.document_of(answer, gpu_name="NVIDIA H100 80GB HBM3", sizes=SIZES)


def test_the_raw_export_is_read_in_bytes_and_nanoseconds_whatever_unit_ncu_printed():
    (launch,) = profile_report.launch_rows(recorded("h100_sgemm_05_raw.csv.gz"))
    metrics = launch["metrics"]
    assert launch["kernel"].startswith("void sgemm_blocktile_2d<128, 128, 8, 8, 8>")
    assert metrics["gpu__time_duration.sum"] == 8_307_072.0  # printed as 8.307072 ms
    assert metrics["dram__bytes_read.sum"] == 685_889_792.0  # printed as 685.889792 Mbyte
    assert metrics["launch__grid_size"] == 1024 and metrics["launch__registers_per_thread"] == 162  # "1,024"
    assert len(metrics) > 1000


def test_every_rule_metric_is_in_the_recorded_export():
    document = sgemm_05()
    assert set(profile_findings.load().metrics.values()) <= set(document.metrics)


def test_rung_05s_findings_name_what_rung_06_changes():
    """Rung 06 (vectorized) stores C with 16-byte writes and loads A transposed into shared memory: rung 05's top
    finding is its scattered global stores (4 of each sector's 32 bytes), then the register-limited occupancy."""
    document = sgemm_05()
    found = profile_findings.findings(document.metrics, problem=problems.load("sgemm"), sizes=SIZES)
    assert [f.rule for f in found][:2] == ["uncoalesced_global_stores", "occupancy_limited_by_registers"]
    assert "4.0 of the 32 bytes" in found[0].sentence
    ratio = profile_findings.bytes_vs_minimum(document.metrics, problem=problems.load("sgemm"), sizes=SIZES)
    assert 2.7 < ratio.ratio < 2.9  # 749 MB through DRAM against the problem's 268 MB


def test_the_source_view_marks_the_hottest_lines_with_their_main_stall():
    document = sgemm_05()
    lines = document.source_lines
    assert [line.line for line in lines[:3]] == [42, 30, 25]  # the inner product, then the two tile loads
    assert lines[0].stall == "short_scoreboard" and 37 < lines[0].share < 38
    assert lines[1].stall == "long_scoreboard" and lines[2].stall == "long_scoreboard"
    assert abs(sum(line.share for line in lines) - 100) < 0.1
    assert profile_findings.stall_words(lines[0].stall) == "waiting for shared memory or a special function result"


def test_the_hot_loop_is_sass_with_offsets_not_load_addresses():
    loop = sgemm_05().sass_hot_loop.splitlines()
    assert loop[0].startswith("+") and "0x7f" not in "\n".join(loop)
    assert any("FFMA" in line for line in loop) and any("BRA +" in line for line in loop)
    assert len(loop) <= profile_report.MAX_HOT_LOOP_INSTRUCTIONS + 1


def test_an_export_of_another_form_leaves_the_source_view_empty_not_broken():
    assert profile_report.source_view("") == ([], "")
    assert profile_report.source_view('"File Path","x"\n"a","b"\n') == ([], "")


def test_the_toolkits_ncu_launcher_is_resolved_to_the_newest_install(tmp_path, monkeypatch):
    toolkit = tmp_path / "cuda"
    (toolkit / "bin").mkdir(parents=True)
    launcher = toolkit / "bin" / "ncu"
    launcher.write_text('#!/bin/sh\necho "ERROR : nsight-compute directory is not found under ..."\n')
    for version in ("2024.1.0", "2025.3.1"):
        install = toolkit / f"nsight-compute-{version}"
        install.mkdir()
        (install / "ncu").write_text("#!/bin/sh\n")
    for path in [launcher, *toolkit.glob("nsight-compute-*/ncu")]:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(profile_mod, "_INSTALL_ROOTS", ("{toolkit}/nsight-compute-*",))
    assert profile_mod.find_ncu(str(launcher)) == str(toolkit / "nsight-compute-2025.3.1" / "ncu")
    plain = tmp_path / "ncu"
    plain.write_text("#!/bin/sh\nexec real-ncu\n")
    plain.chmod(0o755)
    assert profile_mod.find_ncu(str(plain)) == str(plain)
    assert os.access(profile_mod.find_ncu(str(launcher)), os.X_OK)

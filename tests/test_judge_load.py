"""The GPU pool's load tool (bench/judge_load.py) on the CPU: it refuses to pretend without a GPU, and with
the CPU stand-in it drives the real pipeline end to end (SQLite and the file-system broker in a folder of its
own, a Celery compile worker, a GPU worker whose judge runs the stand-in in its sandboxed children) and
reports every figure and check. The figures themselves mean something only on a GPU (README, Operators)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernels.judge import gpu_present

ROOT = Path(__file__).resolve().parents[1]
TOOL = [sys.executable, "bench/judge_load.py"]


@pytest.mark.skipif(gpu_present(), reason="a GPU is here: the tool would run for real")
def test_without_a_gpu_the_tool_refuses_unless_asked_for_the_cpu_standin():
    run = subprocess.run(TOOL, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "no NVIDIA GPU" in run.stderr and "--cpu-standin" in run.stderr


@pytest.mark.slow
def test_the_tool_drives_the_pipeline_with_the_cpu_standin(tmp_path):
    summary_path = tmp_path / "summary.json"
    command = [*TOOL, "--cpu-standin", "--submissions", "10", "--readers", "3", "--heavy", "6", "--alone", "2"]
    command += ["--idle-s", "0.2", "--hidden-check", "1", "--compile-concurrency", "2", "--timeout", "240"]
    command += ["--standin-job-s", "2.5"]  # compiles come faster than jobs: the GPU queue fills up
    command += ["--logs", str(tmp_path / "logs")]
    run = subprocess.run([*command, "--json", str(summary_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)

    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-12000:]
    summary = json.loads(summary_path.read_text())
    assert summary["checks"] and all(summary["checks"].values()), summary["checks"]
    burst, alone = summary["burst"], summary["alone"]
    assert burst["statuses"] == {"passed": 10} and alone["statuses"] == {"passed": 2}
    for key in ("submit_to_result_s", "compile_stage_s", "gpu_queue_wait_s", "gpu_stage_s", "gpu_job_ms"):
        assert burst[key]["n"] == 10 and burst[key]["p50"] <= burst[key]["p95"]
    assert burst["per_minute_per_gpu"] > 0 and burst["fairness"]["fifo_position"] == 7
    assert burst["setup_wait_ms"]["n"] == 10 and burst["between_jobs_s"]["n"] == 9
    # The lone reader's one ran at most one job after it was compiled (the tool's check, above). Whether the heavy
    # reader's backlog was still waiting then depends on how fast this machine compiles against the 2.5 s jobs: on
    # a loaded CI machine the GPU can drain it first. tests/submissions/test_fair_order.py checks the order itself.
    fair = burst["fairness"]
    assert fair["jobs_waited"] <= 1
    assert summary["hidden"]["verdicts"] == ["accepted"] and summary["hidden"]["diff_pct"] == 0.0
    assert "submissions per minute per GPU" in output and "fairness: the lone reader" in output
    assert "PASS  hidden" in output
    # The pool's spares between jobs: the default size, set up in the gaps; most jobs of a burst wait for none.
    assert summary["hidden"]["spares"]["size"] == 4 and summary["hidden"]["spares"]["set_up"] >= 1
    assert summary["hidden"]["spares"]["rss_mib_set_up"] > 0
    assert burst["jobs_waiting_for_setup"] < 10 and "setup wait: mean ms / jobs > 1 ms" in output
    # Profiling is on, as the site's default: passed judgements queue profiles, which this node (no ncu) records as
    # such, never as copies (only profiles made on a GPU are copied), and the rate above is with them.
    profiles = burst["profiles"]
    assert set(profiles["statuses"]) <= {"no_ncu"} and profiles["copied"] == 0 and profiles["made_gpu_seconds"] == 0
    assert "profiles recorded (issue 43)" in output
    # The workers' logs outlive the tool's folder (--logs): the GPU worker's names the jobs it judged.
    logs = {path.name: path.read_text() for path in (tmp_path / "logs").rglob("*.log")}
    assert any("succeeded" in text for name, text in logs.items() if "gpu" in name), sorted(logs)


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode",
    [
        ["--scaling", "1,2", "--submissions", "3", "--standin-job-s", "1.5"],
        # The burst is compiled before the GPUs start, however slowly this machine compiles: short jobs suffice.
        ["--gpus", "2", "--interference", "2", "--submissions", "0", "--standin-job-s", "2"],
    ],
    ids=["scaling", "interference"],
)
def test_several_standin_gpu_workers_each_with_its_own_gpu(tmp_path, mode):
    """Stand-in GPU workers with CUDA_VISIBLE_DEVICES 0 and 1 (none of them real): the jobs record the GPU
    that ran them, both share the work, and no GPU ever runs two jobs at once."""
    summary_path = tmp_path / "summary.json"
    command = [*TOOL, "--cpu-standin", *mode, "--readers", "3", "--heavy", "2", "--alone", "0", "--hidden-check", "0"]
    command += ["--idle-s", "0.2", "--compile-concurrency", "2", "--timeout", "240"]
    run = subprocess.run([*command, "--json", str(summary_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)

    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-12000:]
    summary = json.loads(summary_path.read_text())
    assert summary["checks"] and all(summary["checks"].values()), summary["checks"]
    bursts = [row["burst"] for row in summary.get("scaling", [])] or [summary["interference"]["burst"]]
    two = bursts[-1]
    assert two["overlapping_jobs"] == [] and set(two["per_gpu"]) == {"0", "1"}
    assert {gpu: row["uuids"] for gpu, row in two["per_gpu"].items()} == {
        "0": ["GPU-standin-0"],
        "1": ["GPU-standin-1"],
    }
    assert sum(row["jobs"] for row in two["per_gpu"].values()) == two["submissions"]
    if "scaling" in summary:
        assert [row["gpus"] for row in summary["scaling"]] == [1, 2] and summary["scaling"][0]["efficiency"] == 1
        assert "x linear" in output
    else:
        interference = summary["interference"]
        assert interference["jobs_with_others_busy"] >= 1 and interference["diff_pct"] == 0.0
        assert "interference on GPU 0" in output

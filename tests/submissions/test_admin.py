"""Admin for exercises, submissions, GPU workers and the reference ladder; the operators' commands."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from apps.submissions import services
from apps.submissions.models import GpuWorker, Submission
from apps.submissions.services import submission_create
from tests.submissions.conftest import BROKEN, NAIVE
from tests.submissions.test_services import flagged_result

Status = Submission.Status
FIXTURE = "apps/submissions/fixtures/reference_ladder_h200.json"


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


def judged(user, exercise, result):
    submission = submission_create(user=user, exercise=exercise, source=NAIVE)
    services.submission_compile(submission_id=submission.pk)
    attempt = services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu0@node")
    services.submission_gpu_record(submission_id=submission.pk, attempt=attempt, result=result)
    return Submission.objects.get(pk=submission.pk)


def test_submissions_list_filters_and_shows_source_logs_and_results(admin_client, exercise, reader):
    failed = submission_create(user=reader, exercise=exercise, source=BROKEN + "\n// <script>alert(1)</script>\n")
    services.submission_compile(submission_id=failed.pk)
    flagged = judged(reader, exercise, flagged_result(140.0))

    listing = admin_client.get(reverse("admin:submissions_submission_changelist"), {"status__exact": "failed"})
    assert listing.status_code == 200
    assert str(failed.public_id) in listing.content.decode() and str(flagged.public_id) not in listing.content.decode()
    pending = admin_client.get(reverse("admin:submissions_submission_changelist"), {"review__exact": "pending"})
    assert str(flagged.public_id) in pending.content.decode()

    page = admin_client.get(reverse("admin:submissions_submission_change", args=[failed.pk])).content.decode()
    assert "  15  " in page and "expected a &quot;;&quot;" in page  # numbered source, compile log
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    result_page = admin_client.get(reverse("admin:submissions_submission_change", args=[flagged.pk])).content.decode()
    assert "faster than cuBLAS" in result_page and "base64 characters" in result_page  # the cubin is not dumped


def test_admin_actions_rerun_and_review_through_the_services(admin_client, exercise, reader):
    flagged = judged(reader, exercise, flagged_result(140.0))
    in_progress = submission_create(user=reader, exercise=exercise, source=NAIVE)
    url = reverse("admin:submissions_submission_changelist")

    admin_client.post(url, {"action": "mark_valid", "_selected_action": [flagged.pk]})
    flagged.refresh_from_db()
    assert flagged.review == Submission.Review.VALID

    response = admin_client.post(
        url, {"action": "rerun", "_selected_action": [flagged.pk, in_progress.pk]}, follow=True
    )
    flagged.refresh_from_db()
    assert flagged.status == Status.QUEUED and flagged.result is None and flagged.review == ""
    assert "still in progress" in response.content.decode()  # refused for the other, and said so

    admin_client.post(url, {"action": "mark_invalid", "_selected_action": [flagged.pk]})
    flagged.refresh_from_db()
    assert flagged.review == ""  # no longer flagged: nothing to review


def test_exercise_gpu_worker_and_reference_pages(admin_client, exercise):
    now = timezone.now()
    GpuWorker.objects.create(
        hostname="gpu0@node", gpu_kind="h200", gpu_name="NVIDIA H200", started_at=now, last_seen_at=now
    )
    call_command("reference_ladder", "--load", FIXTURE)
    for name in ("exercise", "gpuworker", "referenceresult"):
        response = admin_client.get(reverse(f"admin:submissions_{name}_changelist"))
        assert response.status_code == 200
    assert "NVIDIA H200" in admin_client.get(reverse("admin:submissions_gpuworker_changelist")).content.decode()
    edited = admin_client.post(
        reverse("admin:submissions_exercise_change", args=[exercise.pk]),
        {
            "capsule": exercise.capsule_id,
            "problem": "sgemm",
            "title": "T",
            "statement": "*new*",
            "starter_source": NAIVE,
            "starter_name": "01_naive.cu",
            "arch": "sm_90",
            "gpu_time_limit_s": 60,
            "is_open": "on",
        },
    )
    assert edited.status_code == 302
    exercise.refresh_from_db()
    assert exercise.statement_html.strip() == "<p><em>new</em></p>"


def test_the_reference_ladder_exports_what_it_loaded(db, tmp_path):
    call_command("reference_ladder", "--load", FIXTURE)
    out = tmp_path / "ladder.json"
    call_command("reference_ladder", "--no-measure", "--export", str(out))
    assert json.loads(out.read_text())["results"] == json.loads(Path(FIXTURE).read_text())["results"]


def test_a_ladder_measured_on_a_gpu_node_is_stored_under_its_rung_files_problems_and_titles(db, tmp_path):
    """`python -m kernels.tools.ladder --out` runs where no Django is; the site stores its file afterwards."""
    from apps.submissions.models import ReferenceResult

    fixture = json.loads(Path(FIXTURE).read_text())["results"]
    sgemm_result = next(r["result"] for r in fixture if r["step"] == "08_warptiling.cu")
    ladder = tmp_path / "ladder.json"
    ladder.write_text(
        json.dumps(
            {
                "measured_at": "2026-12-03T01:02:03+00:00",
                "rungs": {
                    "08_warptiling": sgemm_result,
                    "softmax/02_online_cached": {**sgemm_result, "problem": "softmax"},
                },
            }
        )
    )
    call_command("reference_ladder", "--load-ladder", str(ladder), "--gpu-kind", "h200")
    stored = {(r.problem, r.step): r for r in ReferenceResult.objects.filter(gpu_kind="h200")}
    assert set(stored) == {("sgemm", "08_warptiling.cu"), ("softmax", "02_online_cached.cu")}
    softmax = stored["softmax", "02_online_cached.cu"]
    assert softmax.title.startswith("Step 02 - one pass over global memory")  # the rung file's first line
    assert softmax.measured_at.isoformat() == "2026-12-03T01:02:03+00:00"
    benchmark = sgemm_result["benchmarks"][0]
    assert stored["sgemm", "08_warptiling.cu"].pct_of_baseline == pytest.approx(benchmark["pct_of_baseline"])


def test_the_gpu_worker_command_is_the_documented_one(capsys):
    call_command("gpu_worker", "--gpu", "3", "--print")
    assert capsys.readouterr().out.strip() == (
        "CUDA_VISIBLE_DEVICES=3 CUDA_DEVICE_ORDER=PCI_BUS_ID GPU_ID=3 GPU_KIND=h200 "
        "celery -A config worker -Q gpu.h200,gpu.h200.profile -c 1 -n gpu3@%h "
        "--prefetch-multiplier 1 -l INFO"
    )


@pytest.mark.parametrize("root", [True, False])
def test_a_gpu_worker_started_as_root_warns_that_it_will_not_profile(capsys, monkeypatch, settings, root):
    from kernels import profile

    settings.PROFILES_ENABLED = True
    monkeypatch.setattr(profile, "worker_is_root", lambda: root)
    call_command("gpu_worker", "--gpu", "3", "--print")
    assert ("do not profile" in capsys.readouterr().err) is root


@pytest.mark.parametrize(
    "argv, kind",
    [
        (["celery", "-A", "config", "worker", "-Q", "gpu.h200", "-c", "1"], "h200"),
        (["celery", "-A", "config", "worker", "--queues=default,gpu.b200"], "b200"),
        (["celery", "-A", "config", "worker", "-Q", "gpu.h200,gpu.h200.profile", "-c", "1"], "h200"),
        (["celery", "-A", "config", "worker", "-Q", "gpu.b200.profile"], "b200"),  # profiles alone: still a b200
        (["celery", "-A", "config", "worker", "-Q", "default,compile"], ""),  # even where .env sets GPU_KIND
    ],
)
def test_a_worker_is_a_gpu_worker_by_the_queues_it_consumes(monkeypatch, argv, kind):
    from apps.submissions import worker

    monkeypatch.setattr("sys.argv", argv)
    monkeypatch.setenv("GPU_KIND", "h200")
    assert worker.gpu_kind() == kind


@pytest.mark.parametrize(
    "argv, untrusted",
    [
        (["celery", "-A", "config", "worker", "-Q", "compile", "-c", "2"], True),
        (["celery", "-A", "config", "worker", "-Q", "gpu.h200", "-c", "1"], True),
        (["celery", "-A", "config", "worker", "-Q", "default"], False),
    ],
)
def test_a_judge_worker_on_a_node_that_cannot_sandbox_refuses_to_start_unless_opted_out(monkeypatch, argv, untrusted):
    """Issue 41: no worker that compiles or judges readers' kernels starts unconfined without the operator's say."""
    from apps.submissions import worker
    from kernels import confine

    monkeypatch.setattr("sys.argv", argv)
    assert worker.takes_untrusted_jobs() is untrusted
    monkeypatch.setattr(confine, "support", lambda: confine.Support(landlock_abi=0, seccomp=True, opted_out=False))
    with pytest.raises(SystemExit, match="lacks Landlock"):
        worker.refuse_unconfined()
    monkeypatch.setattr(confine, "support", lambda: confine.Support(landlock_abi=0, seccomp=True, opted_out=True))
    worker.refuse_unconfined()  # the operator's opt-out: it starts, and says so
    assert worker.sandbox_summary().startswith("RUNNING UNCONFINED (operator opt-out)")

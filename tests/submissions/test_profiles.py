"""The profile section of a submission's report (issue 43): who sees it and the download, the states of a node
without ncu or without counter permission, an old result without a profile, and the capsule page's counts.

Profiles are recorded through the real service (`profile_record`) from the HAND-WRITTEN metric fixtures of
tests/kernels/profiles/ (not measured: see the README there)."""

import hashlib
import json
from pathlib import Path

import pytest
from django.test import Client

from apps.submissions import services
from apps.submissions.models import Profile, Submission
from kernels import profile as profile_mod
from tests.factories import UserFactory

FIXTURES = json.loads(
    (Path(__file__).resolve().parents[1] / "kernels" / "profiles" / "handwritten_metrics.json").read_text()
)["cases"]
SOURCE = "__global__ void k(float* a) {\n    float x = a[threadIdx.x * 32];\n    a[0] = x;\n}\n"


def client_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def passed_submission(user, exercise, **fields) -> Submission:
    return Submission.objects.create(
        user=user,
        exercise=exercise,
        source=SOURCE,
        source_sha256=hashlib.sha256(SOURCE.encode()).hexdigest(),
        gpu_kind="h200",
        arch="sm_90",
        status=Submission.Status.PASSED,
        verdict="accepted",
        result={"schema_version": 1, "verdict": "accepted"},
        **fields,
    )


def profiled(case="uncoalesced_loads_sgemm_naive", **fields) -> profile_mod.Profile:
    fixture = FIXTURES[case]
    return profile_mod.Profile(
        status="profiled",
        gpu_name="NVIDIA H200",
        sizes=fixture["sizes"],
        kernel="k",
        metrics=fixture["metrics"],
        source_lines=[profile_mod.SourceLine(line=2, samples=90, share=90.0, stall="long_scoreboard")],
        sass_hot_loop="LDG.E R4, [R2.64]\nFFMA R6, R4, R5, R6",
        **fields,
    )


@pytest.fixture
def report_root(settings, tmp_path):
    settings.PROFILE_ROOT = tmp_path
    (tmp_path / "ab").mkdir()
    (tmp_path / "ab" / "one.ncu-rep").write_bytes(b"NCU-REP")
    return tmp_path


@pytest.fixture
def owned(reader, exercise, report_root):
    submission = passed_submission(reader, exercise)
    services.profile_record(submission_id=submission.pk, document=profiled(report_file="ab/one.ncu-rep"))
    return submission


def detail_url(submission):
    return f"/submissions/{submission.public_id}/"


def report_url(submission):
    return f"/submissions/{submission.public_id}/profile.ncu-rep"


def test_owner_sees_the_profile_with_findings_source_and_download(reader, owned):
    page = client_for(reader).get(detail_url(owned)).content.decode()
    assert "Why is it slow" in page
    assert "Global loads use 4.0 of the 32 bytes of each sector" in page
    assert 'href="/capsules/memory-coalescing/"' in page and "See capsule 19" in page
    assert "profile-source__hot" in page and "90% of samples, mostly waiting for global or local memory" in page
    assert "LDG.E R4" in page and "<meter" in page
    assert "Achieved 24% of the SMs' warp slots, of 25% possible" in page
    pipes = page[page.index("Compute pipes") : page.index("Occupancy")]
    assert "FMA (FP32 multiply-add)" in pipes and "82% busy" in pipes and "9% busy" in pipes
    assert report_url(owned) in page
    response = client_for(reader).get(report_url(owned))
    assert response.status_code == 200 and b"".join(response.streaming_content) == b"NCU-REP"
    assert "attachment" in response["Content-Disposition"] and "private" in response["Cache-Control"]


def test_staff_see_the_profile_and_download_it(staff, owned):
    assert "Global loads use" in client_for(staff).get(detail_url(owned)).content.decode()
    assert client_for(staff).get(report_url(owned)).status_code == 200


def test_another_reader_gets_404_for_page_and_report(owned, db):
    other = UserFactory(email="other@example.org")
    assert client_for(other).get(detail_url(owned)).status_code == 404
    assert client_for(other).get(report_url(owned)).status_code == 404


def test_anonymous_is_sent_to_log_in_for_page_and_report(owned):
    for url in (detail_url(owned), report_url(owned)):
        response = Client().get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_report_path_outside_the_root_is_refused(reader, exercise, report_root):
    submission = passed_submission(reader, exercise)
    services.profile_record(submission_id=submission.pk, document=profiled(report_file="../../etc/passwd"))
    assert client_for(reader).get(report_url(submission)).status_code == 404


@pytest.mark.parametrize(
    ("document", "words"),
    [
        (profile_mod.profile_no_ncu("PATH"), "Profiling is off on this node: no ncu found on this node"),
        (
            profile_mod.from_ncu_failure(1, "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission"),
            "Profiling is off on this node: the GPU driver on this node does not let the judge read performance",
        ),
    ],
)
def test_node_without_ncu_or_counters_keeps_the_verdict_and_says_why(reader, exercise, document, words):
    submission = passed_submission(reader, exercise, pct_of_baseline=31.0)
    services.profile_record(submission_id=submission.pk, document=document)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.PASSED and submission.pct_of_baseline == 31.0
    page = client_for(reader).get(detail_url(submission)).content.decode()
    assert words in page and "Download the Nsight Compute report" not in page
    assert submission.profile.findings == []


def test_an_old_result_without_a_profile_renders(reader, exercise):
    submission = passed_submission(reader, exercise)
    response = client_for(reader).get(detail_url(submission))
    # Only the owner's "No profile yet" and its request form (tests/submissions/test_profile_runs.py): no findings.
    page = response.content.decode()
    assert response.status_code == 200 and "No profile yet" in page and "Findings" not in page
    assert client_for(reader).get(report_url(submission)).status_code == 404


def test_a_profile_of_another_schema_version_is_left_out(reader, exercise):
    submission = passed_submission(reader, exercise)
    Profile.objects.create(submission=submission, schema_version=99, status="profiled", data={"schema_version": 99})
    response = client_for(reader).get(detail_url(submission))
    # Drawn as none at all, so that its owner may ask for one this code reads.
    page = response.content.decode()
    assert response.status_code == 200 and "No profile yet" in page and "Nsight Compute" not in page


def test_only_passed_submissions_get_a_profile(reader, exercise):
    submission = passed_submission(reader, exercise)
    Submission.objects.filter(pk=submission.pk).update(status=Submission.Status.FAILED)
    assert services.profile_record(submission_id=submission.pk, document=profiled()) is None


def test_recording_again_replaces_the_findings(reader, exercise):
    submission = passed_submission(reader, exercise)
    services.profile_record(submission_id=submission.pk, document=profiled())
    profile = services.profile_record(submission_id=submission.pk, document=profiled("clean_sgemm_warptiled"))
    assert profile.findings == [] and profile.finding_rows.count() == 0


def test_capsule_progress_counts_findings_pointing_to_it_without_names(reader, exercise, mini_book):
    capsule = exercise.capsule
    others = [UserFactory(email=f"r{i}@example.org", name=f"Secret Name {i}") for i in range(3)]
    for user in others:
        submission = passed_submission(user, exercise)
        services.profile_record(submission_id=submission.pk, document=profiled())
    # Point the rule's capsule at this mini-book capsule for the count (the mini book has no capsule 19).
    from apps.submissions.models import ProfileFinding

    ProfileFinding.objects.filter(rule="uncoalesced_global_loads").update(capsule_slug=capsule.slug)
    page = client_for(reader).get(f"/capsules/{capsule.slug}/progress/").content.decode()
    assert "What readers' kernels hit" in page and "Uncoalesced global loads: 3 kernels" in page
    assert "Secret Name" not in page


def test_the_readers_data_export_carries_the_profile(reader, owned, exercise):
    from apps.submissions.personal_data import submissions_export

    plain = passed_submission(reader, exercise)
    exported = {row["id"]: row for row in submissions_export(reader)}
    assert exported[str(owned.public_id)]["profile"]["findings"][0]["rule"] == "uncoalesced_global_loads"
    assert exported[str(plain.public_id)]["profile"] is None


def test_the_readers_data_export_carries_their_profile_requests(
    reader, owned, exercise, settings, django_assert_num_queries
):
    """Issue 43: each "Profile again" the reader made, with its submission, when, and whether it was made."""
    from django.utils import timezone

    from apps.accounts.export import account_export_chunks
    from apps.submissions.models import ProfileRequest
    from apps.submissions.personal_data import submissions_export

    settings.PROFILE_REQUESTS_PER_DAY = 5
    plain = passed_submission(reader, exercise)
    made = services.profile_request_create(user=reader, submission=owned)
    done_at = timezone.now()
    ProfileRequest.objects.filter(pk=made.pk).update(done_at=done_at)
    waiting = services.profile_request_create(user=reader, submission=owned)
    # One query for the submissions and one for their requests, however many submissions (per chunk of 20).
    with django_assert_num_queries(2):
        exported = {row["id"]: row for row in submissions_export(reader)}
    assert exported[str(owned.public_id)]["profile_requests"] == [
        {"submission": str(owned.public_id), "requested_at": made.created_at, "done": True, "done_at": done_at},
        {"submission": str(owned.public_id), "requested_at": waiting.created_at, "done": False, "done_at": None},
    ]
    assert exported[str(plain.public_id)]["profile_requests"] == []
    # In the document the reader downloads, as JSON.
    document = json.loads("".join(account_export_chunks(reader)))
    [row] = [row for row in document["submissions"] if row["id"] == str(owned.public_id)]
    assert [(r["done"], r["done_at"] is None) for r in row["profile_requests"]] == [(True, False), (False, True)]

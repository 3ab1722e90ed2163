"""The reader-facing submission pages: who sees what, the submit form's errors (the reader's text
kept), live status, the detail report, the diff, the leaderboard, "my progress" and the staff page.

Submissions are made through the real services: `submission_create`, NVRTC through
`submission_compile`, and, for a GPU result, `submission_gpu_start` + `submission_gpu_record` with a
JudgeResult in the judge's own schema (the GPU itself is what these tests do not have).
"""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from apps.accounts.selectors import anonymous_handle
from apps.catalog.models import Capsule
from apps.submissions import services
from apps.submissions.models import Exercise, GpuWorker, ReferenceResult, Submission
from kernels.results import BenchResult, JudgeResult, KernelResources, ShapeCheck, Telemetry, TimingStats, Verdict
from tests.factories import UserFactory
from tests.subscriptions.visitors import make_visitor

NAIVE = (Path(__file__).resolve().parents[2] / "kernels" / "reference" / "01_naive.cu").read_text()
STATEMENT_SENTINEL = "SENTINEL-EXERCISE-STATEMENT"
STARTER_SENTINEL = "SENTINEL-EXERCISE-STARTER"
LOCKED_PROGRESS = "/capsules/locked-two/progress/"
LOCKED_SUBMIT = "/capsules/locked-two/submit/"


@pytest.fixture
def locked_exercise(mini_book):
    return Exercise.objects.create(
        capsule=Capsule.objects.get(slug="locked-two"),
        problem="sgemm",
        title="Naive SGEMM",
        statement=f"Write C = alpha A B + beta C. {STATEMENT_SENTINEL}",
        statement_html=f"<p>Write C = alpha A B + beta C. {STATEMENT_SENTINEL}</p>",
        starter_source=f"// {STARTER_SENTINEL}\n" + NAIVE,
        starter_name="01_naive.cu",
    )


@pytest.fixture
def subscriber(db):
    return make_visitor("active", name="Sub Scriber")


def client_for(user) -> Client:
    client = Client()
    if user is not None and user.is_authenticated:
        client.force_login(user)
    return client


def make_submission(user, exercise, source=NAIVE, **kwargs) -> Submission:
    return services.submission_create(user=user, exercise=exercise, source=source, **kwargs)


def judge_result(pct: float, *, passed: bool = True, flags=()) -> JudgeResult:
    """What a GPU run returns, in the judge's schema: two checked shapes, one timed shape, one kernel."""
    median = 100.0 / pct
    timing = TimingStats(
        samples=12,
        median_ms=median,
        q25_ms=median * 0.98,
        q75_ms=median * 1.03,
        min_ms=median * 0.97,
        mean_ms=median,
        rel_std_err=0.002,
    )
    base = TimingStats(samples=12, median_ms=1.0, q25_ms=0.99, q75_ms=1.01, min_ms=0.98, mean_ms=1.0, rel_std_err=0.002)
    checks = [
        ShapeCheck(sizes={"M": 128, "N": 128, "K": 128}, passed=True, rel_err=1.1e-7, tolerance=1.8e-5),
        ShapeCheck(
            sizes={"M": 129, "N": 67, "K": 33},
            passed=passed,
            rel_err=1.3e-7 if passed else 0.42,
            tolerance=1.1e-5,
            bad_count=0 if passed else 17,
            first_bad_index=None if passed else [128, 3],
            first_bad_value=None if passed else 0.0,
            first_bad_expected=None if passed else 1.25,
        ),
    ]
    benchmarks = (
        []
        if not passed
        else [
            BenchResult(
                sizes={"M": 4096, "N": 4096, "K": 4096},
                candidate=timing,
                baseline=base,
                baseline_name="cuBLAS SGEMM",
                pct_of_baseline=pct,
                tflops=50.0 * pct / 100,
                gbps=10.0,
                baseline_tflops=50.0,
                roofline_tflops=60.0,
                pct_of_roofline=pct * 50 / 60,
                rounds_checked=12,
                max_rel_err=2e-7,
                flops=2 * 4096**3,
                bytes_moved=4 * 4096 * 4096 * 4,
                flags=list(flags),
                baseline_tried_ms={"cuBLAS SGEMM": 1.0, "cuBLASLt matmul (heuristic's #1 of 7)": 1.002},
            )
        ]
    )
    return JudgeResult(
        verdict=Verdict.ACCEPTED if passed else Verdict.WRONG_ANSWER,
        message="Correct at every shape; timed." if passed else "Wrong answer at M=129 N=67 K=33.",
        problem="sgemm",
        checks=checks,
        benchmarks=benchmarks,
        kernels=[
            KernelResources(
                name="sgemm_naive",
                lowered_name="_Z11sgemm_naive",
                registers=32,
                static_shared_bytes=0,
                local_bytes=0,
                spill_store_bytes=0,
                spill_load_bytes=0,
                max_threads_per_block=1024,
            )
        ],
        telemetry=Telemetry(
            gpu_name="NVIDIA H200",
            compute_capability="9.0",
            sm_count=132,
            sm_clock_mhz=1980,
            max_sm_clock_mhz=1980,
            temperature_c=41,
            driver_version="580.65",
            cuda_driver_version=13000,
            cuda_runtime_version=13000,
            cupy_version="14.2",
            nvrtc_version="12.9",
        ),
    )


def judged(user, exercise, pct: float = 1.2, *, passed: bool = True, flags=(), source=NAIVE) -> Submission:
    """A submission taken through the real compile and GPU-stage services, with a judge's result."""
    submission = make_submission(user, exercise, source=source)
    services.submission_compile(submission_id=submission.pk)
    attempt = services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu0@test")
    assert attempt is not None
    assert services.submission_gpu_record(
        submission_id=submission.pk, attempt=attempt, result=judge_result(pct, passed=passed, flags=flags)
    )
    submission.refresh_from_db()
    return submission


def finished_row(user, exercise, pct: float | None, *, status="passed", review="", created_at=None) -> Submission:
    """A finished submission stored as `submission_gpu_record` stores one (headline figures copied from
    the result), without the compile: for the pages that rank and chart many of them."""
    result = judge_result(pct or 1.0, passed=status == "passed").to_dict()
    row = Submission.objects.create(
        user=user,
        exercise=exercise,
        source=NAIVE,
        source_sha256="0" * 64,
        gpu_kind="h200",
        arch="sm_90",
        status=status,
        verdict="accepted" if status == "passed" else "wrong_answer",
        result=result,
        pct_of_baseline=pct if status == "passed" else None,
        tflops=(pct or 0) / 2,
        time_ms=100 / (pct or 1),
        gpu_name="NVIDIA H200",
        review=review,
        finished_at=timezone.now(),
    )
    if created_at is not None:  # auto_now_add: set afterwards
        Submission.objects.filter(pk=row.pk).update(created_at=created_at)
    return row


# --- Who sees the exercise ---------------------------------------------------------------------


def test_anonymous_is_sent_to_sign_in_and_submits_nothing(locked_exercise):
    client = Client()
    for response in (client.get(LOCKED_PROGRESS), client.post(LOCKED_SUBMIT, {"source": NAIVE})):
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Submission.objects.exists()


@pytest.mark.parametrize("kind", ["free", "past_due_expired", "canceled"])
def test_a_reader_without_access_sees_the_paywall_and_no_statement_or_starter(locked_exercise, kind):
    reader = make_visitor(kind)
    client = client_for(reader)
    body = client.get(LOCKED_PROGRESS).content.decode()
    assert "Naive SGEMM" in body and "This capsule is for subscribers" in body
    assert STATEMENT_SENTINEL not in body and STARTER_SENTINEL not in body
    assert 'name="source"' not in body and "/submit/" not in body
    # Nor through the other routes of the exercise.
    assert client.post(LOCKED_SUBMIT, {"source": NAIVE}).status_code == 404
    polled = client.get("/capsules/locked-two/submissions/", HTTP_HX_REQUEST="true")
    assert polled.status_code == 286 and "no longer open to you" in polled.content.decode()  # stops any polling
    assert STATEMENT_SENTINEL not in polled.content.decode() and STARTER_SENTINEL not in polled.content.decode()
    assert not Submission.objects.exists()


@pytest.mark.parametrize("kind", ["active", "complimentary", "staff"])
def test_a_reader_with_access_gets_statement_starter_editor_and_quota(locked_exercise, kind, settings):
    settings.SUBMISSIONS_PER_HOUR = 5
    settings.SUBMISSION_MAX_SOURCE_BYTES = 64 * 1024  # the form states the model's limit
    body = client_for(make_visitor(kind)).get(LOCKED_PROGRESS).content.decode()
    assert STATEMENT_SENTINEL in body
    textarea = re.search(r'<textarea name="source"[^>]*>(.*?)</textarea>', body, re.S)
    assert textarea and STARTER_SENTINEL in textarea.group(1)  # the plain textarea, before Ace takes over
    assert "django-ace-widget" in body and "mode-c_cpp.js" in body and 'data-tabsize="4"' in body
    assert 'type="file" name="upload"' in body and 'name="plan"' in body
    assert "<strong>5</strong> submissions left" in body and "launch plan, up to 64 KB" in body


def test_the_editor_starts_from_the_readers_latest_submission(locked_exercise, subscriber):
    make_submission(subscriber, locked_exercise, source=NAIVE + "\n// my second try\n")
    body = client_for(subscriber).get(LOCKED_PROGRESS).content.decode()
    assert "// my second try" in body and STARTER_SENTINEL not in body


def test_a_capsule_without_an_exercise_shows_no_exercise_panel(mini_book, subscriber):
    body = client_for(subscriber).get("/capsules/locked-three/progress/").content.decode()
    assert 'id="exercise"' not in body and 'name="source"' not in body


# --- Submitting ---------------------------------------------------------------------------------


def test_submitting_stores_the_source_and_shows_it_live(locked_exercise, subscriber):
    client = client_for(subscriber)
    response = client.post(LOCKED_SUBMIT, {"source": NAIVE.replace("\n", "\r\n"), "plan": ""})
    submission = Submission.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{LOCKED_PROGRESS}#submission-{submission.public_id}"
    assert submission.source == NAIVE and submission.user == subscriber and submission.status == "queued"
    body = client.get(LOCKED_PROGRESS).content.decode()
    assert f'id="submission-{submission.public_id}"' in body
    assert 'hx-trigger="every 1500ms"' in body  # polling while it is not finished
    assert "Queued" in body and "waiting for the compiler: position 1 in the compile queue" in body


def test_uploading_a_cu_file_submits_its_text_with_its_name(locked_exercise, subscriber):
    upload = SimpleUploadedFile("my_kernel.cu", NAIVE.encode(), content_type="text/plain")
    response = client_for(subscriber).post(LOCKED_SUBMIT, {"source": "ignored", "upload": upload})
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.source == NAIVE and submission.filename == "my_kernel.cu"


def test_a_plan_typed_beside_the_editor_goes_into_the_source(locked_exercise, subscriber):
    without_plan = NAIVE.split("/* @plan")[0]
    plan = '[[launch]]\nkernel = "sgemm_naive"\ngrid = ["cdiv(M, 16)", "cdiv(N, 16)"]\nblock = [16, 16]\n'
    assert client_for(subscriber).post(LOCKED_SUBMIT, {"source": without_plan, "plan": plan}).status_code == 302
    assert 'grid = ["cdiv(M, 16)", "cdiv(N, 16)"]' in Submission.objects.get().source


def _editor_text(body: str) -> str:
    from html import unescape

    match = re.search(r'<textarea name="source"[^>]*>\n?(.*?)</textarea>', body, re.S)
    return unescape(match.group(1)) if match else ""


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"source": "  \n\t\n"}, "source", "The source is empty"),
        ({"source": "// " + "x" * (1024 * 1024) + "\n" + NAIVE}, "source", "the limit is"),
        ({"source": NAIVE, "plan": "[[launch]\nkernel = "}, "plan", "The launch plan does not parse"),
        (
            {"source": NAIVE.replace('grid = ["cdiv(M, 32)", "cdiv(N, 32)"]', "grid = oops")},
            "source",
            "The launch plan does not parse",
        ),
    ],
    ids=["empty", "one-megabyte", "bad-plan-field", "bad-plan-in-file"],
)
def test_a_refused_submission_says_why_and_keeps_the_readers_text(locked_exercise, subscriber, data, field, message):
    response = client_for(subscriber).post(LOCKED_SUBMIT, data)
    assert response.status_code == 400
    body = response.content.decode()
    assert message in body
    assert 'aria-invalid="true"' in body
    assert _editor_text(body) == data["source"].replace("\r\n", "\n")  # not a character lost
    if data.get("plan"):
        assert "[[launch]\nkernel = " in body
    assert not Submission.objects.exists()


def test_over_htmx_a_refused_submission_answers_with_its_form_alone_and_the_text_kept(locked_exercise, subscriber):
    data = {"source": NAIVE, "plan": "[[launch]\nkernel = "}
    response = client_for(subscriber).post(LOCKED_SUBMIT, data, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    body = response.content.decode()
    assert "<html" not in body and "<script" not in body  # the form alone; the page's scripts stay put
    assert 'class="form submission-form"' in body and 'hx-post="/capsules/locked-two/submit/"' in body
    assert "The launch plan does not parse" in body and 'aria-invalid="true"' in body
    assert _editor_text(body) == NAIVE and "[[launch]\nkernel = " in body
    assert not Submission.objects.exists()


def test_over_htmx_an_accepted_submission_answers_with_a_fresh_form_and_the_live_list(locked_exercise, subscriber):
    response = client_for(subscriber).post(LOCKED_SUBMIT, {"source": NAIVE + "// htmx\n"}, HTTP_HX_REQUEST="true")
    submission = Submission.objects.get()
    assert response.status_code == 200
    assert response["HX-Replace-Url"] == f"{LOCKED_PROGRESS}#submission-{submission.public_id}"
    body = response.content.decode()
    assert "<html" not in body and _editor_text(body) == NAIVE + "// htmx\n"  # what was just submitted
    assert 'id="submissions-live" hx-swap-oob="outerHTML"' in body and 'hx-trigger="every 1500ms"' in body
    assert f'id="submission-{submission.public_id}"' in body and "Queued" in body


def test_without_js_a_refused_submission_is_a_page_that_leads_back_to_the_progress_page(locked_exercise, subscriber):
    body = client_for(subscriber).post(LOCKED_SUBMIT, {"source": ""}).content.decode()
    assert "<html" in body and f'href="{LOCKED_PROGRESS}"' in body and "The source is empty" in body


@pytest.mark.parametrize("cap", ["body", "fields"])
def test_a_form_over_the_sites_request_limit_gets_a_page_that_says_so(locked_exercise, subscriber, settings, cap):
    if cap == "fields":  # Django's own limit on a form's fields, below the body cap (config/body_limit.py)
        settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
    response = client_for(subscriber).post(LOCKED_SUBMIT, {"source": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})

    assert response.status_code == (413 if cap == "body" else 400)
    body = response.content.decode()
    assert "That was too large to send" in body and ("more than 2 MB" if cap == "body" else "more than 1 MB") in body
    assert "Your text is still in the page you came from" in body
    assert not Submission.objects.exists()


def test_over_quota_is_refused_with_when_and_the_text_kept(locked_exercise, subscriber, settings):
    settings.SUBMISSIONS_PER_HOUR = 2
    now = timezone.now()  # a GPU is online, so what waits for it counts (test_gpu_availability.py: when none is)
    GpuWorker.objects.create(hostname="gpu0@node", gpu_kind="h200", started_at=now, last_seen_at=now)
    make_submission(subscriber, locked_exercise)
    make_submission(subscriber, locked_exercise)
    client = client_for(subscriber)
    assert "You have used your submissions for now" in client.get(LOCKED_PROGRESS).content.decode()
    response = client.post(LOCKED_SUBMIT, {"source": NAIVE + "// third\n"})
    assert response.status_code == 400
    body = response.content.decode()
    assert "You have used your 2 submissions per hour" in body and "the next one is possible at" in body
    assert _editor_text(body) == NAIVE + "// third\n"
    assert Submission.objects.count() == 2


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("kernel.py", b"print(1)", "ends in .cu"),
        ("kernel.cu", b"\xff\xfe\x00k", "not UTF-8 text"),
        ("kernel.cu", b"", "The submitted file is empty"),
    ],
)
def test_a_bad_upload_is_refused_clearly(locked_exercise, subscriber, name, content, message):
    upload = SimpleUploadedFile(name, content, content_type="application/octet-stream")
    response = client_for(subscriber).post(LOCKED_SUBMIT, {"source": NAIVE, "upload": upload})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Submission.objects.exists()


def test_a_closed_exercise_shows_results_but_no_form(locked_exercise, subscriber):
    locked_exercise.is_open = False
    locked_exercise.save()
    client = client_for(subscriber)
    body = client.get(LOCKED_PROGRESS).content.decode()
    assert "This exercise is closed" in body and 'name="source"' not in body
    response = client.post(LOCKED_SUBMIT, {"source": NAIVE})
    assert response.status_code == 400 and "This exercise is closed" in response.content.decode()


# --- Live status ------------------------------------------------------------------------------


def test_the_live_fragment_answers_204_while_unchanged_and_286_when_finished(locked_exercise, subscriber):
    client = client_for(subscriber)
    submission = make_submission(subscriber, locked_exercise)
    url = "/capsules/locked-two/submissions/"
    first = client.get(url, HTTP_HX_REQUEST="true")
    assert first.status_code == 200
    state = re.search(r'id="submissions-state" name="state" value="([^"]+)"', first.content.decode()).group(1)
    assert client.get(url, {"state": state}, HTTP_HX_REQUEST="true").status_code == 204
    services.submission_compile(submission_id=submission.pk)  # real NVRTC: now waiting for a GPU
    waiting = client.get(url, {"state": state}, HTTP_HX_REQUEST="true")
    assert waiting.status_code == 200
    body = waiting.content.decode()
    assert "Compiled, waiting for a GPU" in body and "position 1 in the H200 queue" in body
    assert "No GPU worker is connected for H200" in body
    assert 'hx-swap-oob="innerHTML"' in body  # the status is announced to screen readers
    attempt = services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu0@test")
    services.submission_gpu_record(submission_id=submission.pk, attempt=attempt, result=judge_result(1.3))
    done = client.get(url, {"state": state}, HTTP_HX_REQUEST="true")
    assert done.status_code == 286  # htmx swaps it in and stops polling
    assert "Passed" in done.content.decode() and "1.30%" in done.content.decode()
    # Without htmx the fragment is not a page: back to the progress page.
    assert client.get(url).status_code == 302


def test_polling_stops_when_the_reader_loses_access(locked_exercise, subscriber):
    from apps.subscriptions.models import Subscription
    from apps.subscriptions.services import entitlement_refresh

    client = client_for(subscriber)
    make_submission(subscriber, locked_exercise)
    url = "/capsules/locked-two/submissions/"
    assert client.get(url, HTTP_HX_REQUEST="true").status_code == 200
    Subscription.objects.filter(customer__user=subscriber).update(status=Subscription.Status.CANCELED)
    entitlement_refresh(user_id=subscriber.pk)  # as the subscription mirror does with what it writes
    lost = client.get(url, HTTP_HX_REQUEST="true")
    assert lost.status_code == 286 and "no longer open to you" in lost.content.decode()
    assert "naive" not in lost.content.decode().lower()  # nothing of the exercise or the source
    assert client.get(url).status_code == 404  # and nothing for a plain request


def test_a_connected_gpu_worker_removes_the_warning(locked_exercise, subscriber):
    submission = make_submission(subscriber, locked_exercise)
    services.submission_compile(submission_id=submission.pk)
    now = timezone.now()
    GpuWorker.objects.create(hostname="gpu0@node1", gpu_kind="h200", started_at=now, last_seen_at=now)
    body = client_for(subscriber).get(LOCKED_PROGRESS).content.decode()
    assert "waiting for a GPU" in body or "position 1" in body
    assert "No GPU worker is connected" not in body


def test_a_compile_error_shows_the_line_and_its_code(locked_exercise, subscriber):
    broken = NAIVE.replace("acc += A[", "acc += Q[")
    submission = make_submission(subscriber, locked_exercise, source=broken)
    services.submission_compile(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == "failed" and submission.verdict == "compile_error"
    line = broken.splitlines().index(next(text for text in broken.splitlines() if "acc += Q[" in text)) + 1
    client = client_for(subscriber)
    body = client.get(LOCKED_PROGRESS).content.decode()
    assert (
        f'Line {line}</a>: <span class="diagnostic__kind">error</span>: identifier &quot;Q&quot; is undefined' in body
    )
    assert "Compile error" in body
    detail = client.get(f"/submissions/{submission.public_id}/").content.decode()
    assert f'id="src-L{line}" data-n="{line}"' in detail and "Compiler log" in detail


# --- The report of one submission ------------------------------------------------------------


def test_the_report_shows_checks_timing_resources_and_gpu(locked_exercise, subscriber):
    submission = judged(subscriber, locked_exercise, pct=1.25)
    body = client_for(subscriber).get(f"/submissions/{submission.public_id}/").content.decode()
    for expected in (
        "M=129 N=67 K=33",
        "1.30e-07",
        "1.10e-05",  # correctness per shape: rel_err vs tolerance
        "1.25%",
        "80.00 ms",
        "4.00 ms",  # % of cuBLAS, median, IQR (q75 - q25: 5% of 80 ms)
        "0.62",
        "1.04%",  # TFLOP/s, % of roofline
        "sgemm_naive",
        ">32<",  # resources
        "NVIDIA H200",
        "580.65",
        "14.2",  # GPU and versions
        "The fastest of the 2 library ways",
        "heuristic&#x27;s #1 of 7)",  # every way the worker timed for the baseline (kernels/baselines.py)
    ):
        assert expected in body, expected


def test_a_wrong_answer_shows_the_first_bad_index(locked_exercise, subscriber):
    submission = judged(subscriber, locked_exercise, passed=False)
    assert submission.status == "failed"
    body = client_for(subscriber).get(f"/submissions/{submission.public_id}/").content.decode()
    assert "[128, 3]: got 0.00e+00, expected 1.25e+00" in body and "4.20e-01" in body


def test_a_submission_is_a_404_for_other_readers_and_shown_to_staff(locked_exercise, subscriber):
    submission = make_submission(subscriber, locked_exercise)
    url = f"/submissions/{submission.public_id}/"
    assert client_for(make_visitor("active")).get(url).status_code == 404
    assert client_for(make_visitor("free")).get(url).status_code == 404
    assert client_for(make_visitor("staff")).get(url).status_code == 200
    assert client_for(subscriber).get(url).status_code == 200
    assert Client().get(url).status_code == 302
    assert client_for(subscriber).get("/submissions/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_the_unfinished_report_polls_and_stops_when_done(locked_exercise, subscriber):
    submission = make_submission(subscriber, locked_exercise)
    client = client_for(subscriber)
    url = f"/submissions/{submission.public_id}/"
    assert 'hx-trigger="every 1500ms"' in client.get(url).content.decode()
    fragment = client.get(url, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200 and "<html" not in fragment.content.decode()
    state = re.search(r'id="result-state" name="state" value="([^"]+)"', fragment.content.decode()).group(1)
    assert client.get(url, {"state": state}, HTTP_HX_REQUEST="true").status_code == 204
    services.submission_compile(submission_id=submission.pk)
    attempt = services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu0@test")
    services.submission_gpu_record(submission_id=submission.pk, attempt=attempt, result=judge_result(2.0))
    assert client.get(url, {"state": state}, HTTP_HX_REQUEST="true").status_code == 286


# --- Diff ------------------------------------------------------------------------------------------


def test_the_diff_of_two_own_submissions_is_escaped_and_numbered(locked_exercise, subscriber):
    older = make_submission(subscriber, locked_exercise)
    changed = NAIVE.replace("float acc = 0.0f;", "float acc = 0.0f; // <script>alert(1)</script>")
    newer = make_submission(subscriber, locked_exercise, source=changed)
    response = client_for(subscriber).get(f"/submissions/{newer.public_id}/diff/", {"against": older.public_id})
    body = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    line = NAIVE.splitlines().index(next(text for text in NAIVE.splitlines() if "float acc = 0.0f;" in text)) + 1
    assert re.search(
        rf'class="diff__removed">\s*<td class="num diff__n">{line}</td>\s*<td class="num diff__n"></td>', body
    )
    assert re.search(
        rf'class="diff__added">\s*<td class="num diff__n"></td>\s*<td class="num diff__n">{line}</td>', body
    )
    assert "+1" in body and "−1" in body


def test_no_diff_with_someone_elses_submission(locked_exercise, subscriber):
    mine = make_submission(subscriber, locked_exercise)
    other_reader = make_visitor("active")
    theirs = make_submission(other_reader, locked_exercise)
    assert (
        client_for(subscriber).get(f"/submissions/{mine.public_id}/diff/", {"against": theirs.public_id}).status_code
        == 404
    )
    assert (
        client_for(subscriber).get(f"/submissions/{mine.public_id}/diff/", {"against": "not-a-uuid"}).status_code == 404
    )
    assert (
        client_for(other_reader).get(f"/submissions/{mine.public_id}/diff/", {"against": theirs.public_id}).status_code
        == 404
    )


# --- Charts on the page ------------------------------------------------------------------------


def test_history_and_ladder_charts_use_the_readers_results_and_the_reference(locked_exercise, subscriber):
    ReferenceResult.objects.create(
        problem="sgemm",
        gpu_kind="h200",
        step="01_naive.cu",
        title="01 naive",
        verdict="accepted",
        pct_of_baseline=1.0,
        measured_at=timezone.now(),
    )
    ReferenceResult.objects.create(
        problem="sgemm",
        gpu_kind="h200",
        step="02_coalesced.cu",
        title="02 coalesced",
        verdict="accepted",
        pct_of_baseline=9.4,
        measured_at=timezone.now(),
    )
    ReferenceResult.objects.create(
        problem="sgemm",
        gpu_kind="a100",
        step="02_coalesced.cu",
        title="A100 rung",
        verdict="accepted",
        pct_of_baseline=50.0,
        measured_at=timezone.now(),
    )
    finished_row(subscriber, locked_exercise, 1.2, created_at=timezone.now() - timedelta(minutes=5))
    judged(subscriber, locked_exercise, pct=3.5)
    body = client_for(subscriber).get(LOCKED_PROGRESS).content.decode()
    assert f'aria-labelledby="history-{locked_exercise.pk}-title history-{locked_exercise.pk}-desc"' in body
    assert "best 3.50%" in body
    assert "01 naive" in body and "02 coalesced" in body and "You (best)" in body
    assert "A100 rung" not in body  # another GPU kind's ladder is not this one


# --- Leaderboard -----------------------------------------------------------------------------------


def test_the_leaderboard_ranks_each_readers_best_counting_result(locked_exercise, subscriber):
    alice = make_visitor("active", name="Alice <b>A</b>")
    bob = make_visitor("active", name="Bob")
    carol = make_visitor("active", name="Carol")
    finished_row(alice, locked_exercise, 5.0)
    finished_row(alice, locked_exercise, 9.0)
    finished_row(bob, locked_exercise, 7.0)
    finished_row(bob, locked_exercise, 95.0, review="invalid")
    # Faster than cuBLAS: the GPU-stage service flags it for review.
    flagged = judged(carol, locked_exercise, pct=120.0, flags=["faster than cuBLAS: review"])
    assert flagged.review == "pending"
    finished_row(subscriber, locked_exercise, None, status="failed")
    client = client_for(subscriber)
    body = client.get("/capsules/locked-two/leaderboard/").content.decode()
    ranks = re.findall(r'<td class="num">(\d+)</td>\s*<td>([^<]*)', body)
    assert [(n, name.strip()) for n, name in ranks] == [("1", "Alice &lt;b&gt;A&lt;/b&gt;"), ("2", "Bob")]
    assert "9.00%" in body and "5.00%" not in body and "95.0%" not in body and "Carol" not in body
    services.submission_review_set(submission=flagged, valid=True, note="checked", by=make_visitor("staff"))
    body = client.get("/capsules/locked-two/leaderboard/").content.decode()
    assert re.search(r'<td class="num">1</td>\s*<td>Carol', body) and "120%" in body
    services.submission_review_set(submission=flagged, valid=False, note="cached answer", by=make_visitor("staff"))
    assert "Carol" not in client.get("/capsules/locked-two/leaderboard/").content.decode()
    assert client.get("/capsules/locked-two/leaderboard/", {"gpu": "nope"}).status_code == 404
    assert client.get("/capsules/locked-three/leaderboard/").status_code == 404


def test_the_leaderboard_names_readers_by_public_name_or_handle_never_by_email(locked_exercise, subscriber):
    # Issue 20: it showed the part of the address before the @ of readers who set no name.
    unnamed = make_visitor("active", name="", email="jane.secret@example.org")
    finished_row(unnamed, locked_exercise, 4.0)
    body = client_for(subscriber).get("/capsules/locked-two/leaderboard/").content.decode()
    assert "jane.secret" not in body and "jane" not in body.lower()
    assert re.search(rf'<td class="num">1</td>\s*<td>{anonymous_handle(unnamed.pk)}', body)


def test_the_leaderboard_takes_the_same_queries_for_many_readers(
    locked_exercise, subscriber, django_assert_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(subscriber)
    finished_row(make_visitor("active"), locked_exercise, 2.0)
    client.get("/capsules/locked-two/leaderboard/")  # warm: session, user
    with CaptureQueriesContext(connection) as few:
        client.get("/capsules/locked-two/leaderboard/")
    for pct in (3.0, 4.0, 5.0, 6.0):
        reader = make_visitor("active")
        finished_row(reader, locked_exercise, pct)
        finished_row(reader, locked_exercise, pct / 2)
    with django_assert_num_queries(len(few)):
        body = client.get("/capsules/locked-two/leaderboard/").content.decode()
    assert body.count('<td class="num"><strong>') == 5


# --- My progress and the staff page -------------------------------------------------------------


def test_my_progress_shows_the_readers_gemm_ladder(locked_exercise, subscriber):
    Exercise.objects.create(
        capsule=Capsule.objects.get(slug="locked-three"),
        problem="hgemm",
        title="WMMA",
        statement="s",
        starter_source=NAIVE,
    )
    finished_row(subscriber, locked_exercise, 1.1)
    finished_row(subscriber, locked_exercise, 2.2)
    finished_row(subscriber, locked_exercise, 50.0, review="pending")
    body = client_for(subscriber).get("/progress/").content.decode()
    assert "Your GEMM ladder on H200" in body
    assert "50.0%" not in body  # flagged, not yet reviewed: not the reader's best
    assert "<strong>2.20%</strong>" in body and 'aria-labelledby="gemm-ladder-title gemm-ladder-desc"' in body
    assert "03 · Locked three" in body or "Locked three" in body


def test_my_progress_sets_the_book_kernel_of_each_step_beside_the_readers_best(locked_exercise, subscriber):
    locked_exercise.reference_step = "08_warptiling.cu"
    locked_exercise.save()
    ReferenceResult.objects.create(
        problem="sgemm",
        gpu_kind="h200",
        step="08_warptiling.cu",
        title="Warptiling",
        verdict="accepted",
        pct_of_baseline=92.8,
        measured_at=timezone.now(),
    )
    ReferenceResult.objects.create(
        problem="sgemm",
        gpu_kind="a100",
        step="08_warptiling.cu",
        title="Warptiling",
        verdict="accepted",
        pct_of_baseline=61.0,
        measured_at=timezone.now(),
    )
    finished_row(subscriber, locked_exercise, 40.0)
    body = client_for(subscriber).get("/progress/").content.decode()
    assert "Book's kernel" in body and "92.8%" in body
    assert "61.0%" not in body  # another GPU kind's figure is not this ladder's
    assert 'class="chart__marker"' in body and "kernel 92.8%" in body  # the chart's tick, and its description


def test_my_progress_without_gemm_exercises_has_no_ladder(mini_book, subscriber):
    assert "GEMM ladder" not in client_for(subscriber).get("/progress/").content.decode()


def test_the_staff_page_shows_queues_and_workers_to_staff_only(locked_exercise, subscriber):
    now = timezone.now()
    GpuWorker.objects.create(
        hostname="gpu0@node1", gpu_kind="h200", gpu_name="NVIDIA H200", started_at=now, last_seen_at=now, jobs_done=7
    )
    GpuWorker.objects.create(
        hostname="gpu1@node1",
        gpu_kind="h200",
        started_at=now,
        last_seen_at=now - timedelta(hours=1),
        sandbox="RUNNING UNCONFINED (operator opt-out): this kernel lacks Landlock",
        host_memory_reachable=True,
    )
    make_submission(subscriber, locked_exercise)
    staff = make_visitor("staff")
    body = client_for(staff).get("/staff/judge/").content.decode()
    assert "gpu0@node1" in body and "gpu1@node1" in body and "NVIDIA H200" in body
    # Issue 41: a worker that runs readers' code without the sandbox is named at the top of the page.
    assert "gpu1@node1 runs readers' kernels without the sandbox" in body and "unconfined</span>" in body
    # A GPU whose kernels may use pageable host memory (HMM) is named too, with the driver option that ends it.
    assert "gpu1@node1's GPU lets kernels use pageable host memory" in body and "uvm_disable_hmm=1" in body
    assert body.count("HMM on</span>") == 1  # gpu0@node1 has not reported (None): no badge
    assert '<strong class="mono">H200</strong>: 1 online' in body
    assert "compile" in body and "gpu.h200" in body  # the queues, from the real broker
    assert "Queued: <strong>1</strong>" in body
    assert 'href="/staff/judge/"' in body  # the staff link in the navigation
    for visitor in (subscriber, UserFactory()):
        response = client_for(visitor).get("/staff/judge/")
        assert response.status_code == 302 and "gpu0@node1" not in response.content.decode()
    assert 'href="/staff/judge/"' not in client_for(subscriber).get("/progress/").content.decode()


def test_the_staff_page_shows_a_worker_that_profiles_as_profiling_with_its_link(locked_exercise, subscriber):
    """Issue 43: a GPU worker busy with a profile (GpuWorker.profiling_submission, set by services.submission_profile
    around judge.profile) was shown idle."""
    now = timezone.now()
    profiled, judging = make_submission(subscriber, locked_exercise), make_submission(subscriber, locked_exercise)
    GpuWorker.objects.create(
        hostname="gpu0@node1", gpu_kind="h200", started_at=now, last_seen_at=now, profiling_submission=profiled
    )
    GpuWorker.objects.create(
        hostname="gpu1@node1", gpu_kind="h200", started_at=now, last_seen_at=now, current_submission=judging
    )
    GpuWorker.objects.create(hostname="gpu2@node1", gpu_kind="h200", started_at=now, last_seen_at=now)
    body = client_for(make_visitor("staff")).get("/staff/judge/").content.decode()
    rows = {n: re.search(rf'<td class="mono">gpu{n}@node1</td>.*?</tr>', body, re.S).group(0) for n in (0, 1, 2)}
    assert f'<td>profiling <a href="/submissions/{profiled.public_id}/">a submission</a></td>' in rows[0]
    assert f'<td><a href="/submissions/{judging.public_id}/">running a submission</a></td>' in rows[1]
    assert "profiling" not in rows[1] and "<td>idle</td>" in rows[2]


def test_the_progress_page_queries_do_not_grow_with_finished_submissions(
    locked_exercise, subscriber, django_assert_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(subscriber)
    finished_row(subscriber, locked_exercise, 1.0)
    client.get(LOCKED_PROGRESS)
    with CaptureQueriesContext(connection) as few:
        client.get(LOCKED_PROGRESS)
    for pct in (2.0, 3.0, 4.0, 5.0, 6.0, 7.0):
        finished_row(subscriber, locked_exercise, pct)
    with django_assert_num_queries(len(few)):
        client.get(LOCKED_PROGRESS)

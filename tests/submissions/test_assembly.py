"""The report's "PTX / SASS" section (issue 46): only the submission's owner and staff reach it (404 for anyone
else, as the report), the first look queues the disassembly on the compile queue, the compile worker's service runs
the real cuobjdump in the judge's confined child (kernels/disasm.py) on the cubins the real compile made on this CPU,
and what it said is kept: a second look runs nothing, a re-run that compiled again is disassembled again."""

from pathlib import Path

import pytest
from django.test import Client

from apps.submissions import selectors, services
from apps.submissions.models import Disassembly, Submission
from apps.submissions.services import disassembly as disassembly_service
from apps.submissions.services import submission_create
from kernels import confine, disasm
from tests.submissions.conftest import BROKEN, make_exercise
from tests.subscriptions.visitors import make_visitor

pytestmark = pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())
needs_cuobjdump = pytest.mark.skipif(not Path(disasm.bundled_cuobjdump()).is_file(), reason="no cuobjdump here")

PROBLEM = Path(__file__).resolve().parents[2] / "kernels" / "problems" / "vector_add"
VECTOR_ADD_CU = (PROBLEM / "example.cu").read_text()
VECTOR_ADD_TRITON = (PROBLEM / "example_triton.py").read_text()


@pytest.fixture
def vector_add(mini_book):
    return make_exercise(
        mini_book.capsules.get(number=1), problem="vector_add", starter_source=VECTOR_ADD_CU, starter_name="example.cu"
    )


@pytest.fixture
def owner(db):
    return make_visitor("active", name="Owner")


@pytest.fixture
def tool_runs(monkeypatch):
    """How many times cuobjdump's job ran (the real one, counted)."""
    runs = []
    real = disasm.disassemble

    def counted(*args, **kwargs):
        runs.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(disasm, "disassemble", counted)
    return runs


@pytest.fixture
def compile_worker(eager_tasks, django_capture_on_commit_callbacks):
    """Queued tasks run here, in this process, once the request's transaction commits (as a compile worker would)."""

    def run():
        return django_capture_on_commit_callbacks(execute=True)

    return run


def compiled(user, exercise, source, language="cuda") -> Submission:
    submission = submission_create(user=user, exercise=exercise, source=source, language=language)
    services.submission_compile(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPILED, submission.compile_log
    return submission


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def url(submission) -> str:
    return f"/submissions/{submission.public_id}/assembly/"


# --- Who sees it ----------------------------------------------------------------------------------------------------


def test_only_the_owner_and_staff_reach_the_section(vector_add, owner, staff, tool_runs):
    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    other = make_visitor("active", name="Someone Else")
    assert client_for(other).get(url(submission), HTTP_HX_REQUEST="true").status_code == 404
    assert client_for(other).get(url(submission)).status_code == 404
    anonymous = Client().get(url(submission))
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert not Disassembly.objects.exists() and tool_runs == []  # nothing was queued for them
    assert client_for(owner).get(url(submission), HTTP_HX_REQUEST="true").status_code == 200
    assert client_for(staff).get(url(submission), HTTP_HX_REQUEST="true").status_code == 200


def test_the_report_offers_the_section_to_its_owner(vector_add, owner):
    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    body = client_for(owner).get(f"/submissions/{submission.public_id}/").content.decode()
    assert '<h2 id="assembly-title" class="card__title">PTX / SASS</h2>' in body
    assert f'hx-get="{url(submission)}"' in body and f'href="{url(submission)}"' in body  # works without JS too
    assert "Show the PTX and SASS" in body


# --- What it shows ---------------------------------------------------------------------------------------------------


@needs_cuobjdump
def test_the_owner_gets_cudas_ptx_and_sass(vector_add, owner, compile_worker, tool_runs):
    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    with compile_worker():
        response = client_for(owner).get(url(submission), HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and len(tool_runs) == 1
    # The first answer was pending (the task ran after it); the next look shows what the worker stored.
    body = client_for(owner).get(url(submission), HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in body and "hx-trigger" not in body  # done: the fragment stops asking
    assert ".visible .entry vector_add(" in body and "PTX by NVRTC 12." in body
    assert "Function : vector_add" in body and "LDG" in body and "by cuobjdump 13." in body
    disassembly = Disassembly.objects.get(submission=submission)
    assert disassembly.status == Disassembly.Status.DONE and disassembly.result["ok"]


@needs_cuobjdump
def test_the_owner_gets_each_triton_builds_ptx_and_sass(vector_add, owner, compile_worker):
    submission = compiled(owner, vector_add, VECTOR_ADD_TRITON, language="triton")
    with compile_worker():
        client_for(owner).get(url(submission), HTTP_HX_REQUEST="true")
    body = client_for(owner).get(url(submission), HTTP_HX_REQUEST="true").content.decode()
    assert "PTX by Triton 3." in body and "one listing per Triton build" in body
    assert '<h3 class="assembly__name"><code>vector_add</code></h3>' in body
    assert ".target sm_90a" in body and "code for sm_90a" in body and "Function : vector_add" in body


@needs_cuobjdump
def test_a_second_look_runs_nothing_and_a_recompile_is_disassembled_again(vector_add, owner, staff, tool_runs):
    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    disassembly = services.disassembly_request(submission=submission)
    services.disassembly_make(disassembly_id=disassembly.pk)
    client = client_for(owner)
    for _ in range(2):
        assert "Function : vector_add" in client.get(url(submission), HTTP_HX_REQUEST="true").content.decode()
    assert len(tool_runs) == 1

    # Judged, then re-run by staff: compiled again from the same file, the same cubin: the kept SASS still holds.
    def rerun(source):
        Submission.objects.filter(pk=submission.pk).update(status=Submission.Status.PASSED, verdict="accepted")
        submission.refresh_from_db()
        services.submission_rerun(submission=submission, by=staff)
        Submission.objects.filter(pk=submission.pk).update(source=source)
        services.submission_compile(submission_id=submission.pk)
        submission.refresh_from_db()

    rerun(VECTOR_ADD_CU)
    assert services.disassembly_request(submission=submission).status == Disassembly.Status.DONE
    # Compiled from other code, the kept SASS is not this code's any more: it is made again.
    rerun(VECTOR_ADD_CU.replace("A[i] + B[i]", "A[i] * B[i]"))
    again = services.disassembly_request(submission=submission)
    assert again.pk == disassembly.pk and again.status == Disassembly.Status.PENDING and again.result is None
    assert selectors.assembly_view(submission, again).pending
    services.disassembly_make(disassembly_id=again.pk)
    assert len(tool_runs) == 2


def test_the_first_look_queues_one_job_on_the_compile_queue_and_polls(
    vector_add, owner, django_capture_on_commit_callbacks
):
    from django.conf import settings

    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    client = client_for(owner)
    with django_capture_on_commit_callbacks() as callbacks:
        body = client.get(url(submission), HTTP_HX_REQUEST="true").content.decode()
    assert len(callbacks) == 1 and settings.CELERY_TASK_ROUTES["submissions.disassemble"] == {"queue": "compile"}
    assert 'hx-trigger="load delay:1s"' in body and "Disassembling on a compile worker" in body
    assert ".visible .entry vector_add(" in body  # the PTX is there at once: the compile kept it
    with django_capture_on_commit_callbacks() as again:
        client.get(url(submission), HTTP_HX_REQUEST="true")
    assert again == []  # still pending: not queued twice


def test_a_job_lost_for_long_is_queued_again(vector_add, owner, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    services.disassembly_request(submission=submission)
    long_ago = timezone.now() - timedelta(seconds=disassembly_service.RETRY_AFTER_S + 1)
    Disassembly.objects.update(requested_at=long_ago)
    with django_capture_on_commit_callbacks() as callbacks:
        services.disassembly_request(submission=submission)
    assert len(callbacks) == 1


def test_a_corrupt_cubin_shows_cuobjdumps_words(vector_add, owner):
    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    import base64

    submission.compiled["cubin"] = base64.b64encode(b"\x7fELF\x02\x01\x01" + b"\x00" * 100).decode()
    Submission.objects.filter(pk=submission.pk).update(compiled=submission.compiled)
    submission.refresh_from_db()
    disassembly = services.disassembly_request(submission=submission)
    services.disassembly_make(disassembly_id=disassembly.pk)
    body = client_for(owner).get(url(submission), HTTP_HX_REQUEST="true").content.decode()
    assert "cuobjdump could not read this code" in body and "submission.cu" in body
    assert "kernels-child" not in body and "hx-trigger" not in body


def test_a_missing_tool_says_so_and_is_asked_again_later(vector_add, owner, settings, tmp_path):
    settings.SUBMISSIONS_CUOBJDUMP = str(tmp_path / "cuobjdump")
    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    disassembly = services.disassembly_make(disassembly_id=services.disassembly_request(submission=submission).pk)
    assert disassembly.status == Disassembly.Status.FAILED
    body = client_for(owner).get(url(submission), HTTP_HX_REQUEST="true").content.decode()
    assert "No SASS: the disassembler (cuobjdump) is not installed on this node" in body
    assert ".visible .entry vector_add(" in body  # the PTX still shows


def test_nothing_to_show_before_the_compile_or_after_a_failed_one(vector_add, owner):
    waiting = submission_create(user=owner, exercise=vector_add, source=VECTOR_ADD_CU)
    body = client_for(owner).get(url(waiting), HTTP_HX_REQUEST="true").content.decode()
    assert "it has not compiled yet" in body
    broken = submission_create(user=owner, exercise=vector_add, source=BROKEN)
    services.submission_compile(submission_id=broken.pk)
    body = client_for(owner).get(url(broken), HTTP_HX_REQUEST="true").content.decode()
    assert "this submission did not compile" in body and not Disassembly.objects.exists()
    report = client_for(owner).get(f"/submissions/{broken.public_id}/").content.decode()
    assert "Show the PTX and SASS" not in report


def test_without_javascript_the_section_is_a_page(vector_add, owner):
    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    body = client_for(owner).get(url(submission)).content.decode()
    assert "<html" in body and "<h1>PTX / SASS</h1>" in body and "Reload this page" in body
    assert f'href="/submissions/{submission.public_id}/"' in body


def test_ptx_of_a_result_compiled_before_it_was_kept(vector_add, owner):
    submission = compiled(owner, vector_add, VECTOR_ADD_CU)
    submission.compiled.pop("ptx")
    Submission.objects.filter(pk=submission.pk).update(compiled=submission.compiled)
    submission.refresh_from_db()
    body = client_for(owner).get(url(submission), HTTP_HX_REQUEST="true").content.decode()
    assert "The PTX was not kept for this submission" in body

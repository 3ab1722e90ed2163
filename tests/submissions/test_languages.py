"""Triton as a second language (issue 46) in the web app: the Submission's language, the choice the submit form
offers where the problem has a Triton starter (decided at each request), the editor's start in each language, an
upload whose suffix must be the chosen language's, the service's checks, the real compile of a Triton submission on
this CPU through the pipeline, and the pages that show one (report, live list, leaderboard, diff)."""

import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.submissions import selectors, services
from apps.submissions.forms import SubmissionForm
from apps.submissions.models import Submission
from apps.submissions.services import SubmissionRefused, submission_create
from kernels import confine
from tests.submissions.conftest import NAIVE, make_exercise
from tests.subscriptions.visitors import make_visitor

Language = Submission.Language
PROBLEMS = Path(__file__).resolve().parents[2] / "kernels" / "problems"
VECTOR_ADD_CU = (PROBLEMS / "vector_add" / "example.cu").read_text()
VECTOR_ADD_TRITON = (PROBLEMS / "vector_add" / "example_triton.py").read_text()
PROGRESS = "/capsules/free-one/progress/"
SUBMIT = "/capsules/free-one/submit/"
confined = pytest.mark.skipif(not confine.support().confined, reason=confine.support().summary())


@pytest.fixture
def vector_add(mini_book):
    """A vector_add exercise on the mini book's free capsule: its problem has a Triton starter."""
    return make_exercise(
        mini_book.capsules.get(number=1),
        problem="vector_add",
        title="Add two vectors",
        starter_source=VECTOR_ADD_CU,
        starter_name="example.cu",
    )


@pytest.fixture
def no_triton_starters(monkeypatch):
    """As if no problem had its example_triton.py yet (the starters arrive problem by problem)."""
    monkeypatch.setattr(selectors, "TRITON_STARTER", "example_triton_not_written_yet.py")


@pytest.fixture
def subscriber(db):
    return make_visitor("active", name="Tri Ton")


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def editor_text(body: str) -> str:
    import html

    match = re.search(r'<textarea name="source"[^>]*>\n?(.*?)</textarea>', body, re.S)
    return html.unescape(match.group(1)) if match else ""


def starts_of(body: str) -> dict:
    import html

    match = re.search(r'data-starts="([^"]*)"', body)
    return json.loads(html.unescape(match.group(1))) if match else {}


# --- The model and what is offered --------------------------------------------------------------------------------


def test_a_submission_is_cuda_unless_it_says_otherwise(vector_add, reader):
    submission = submission_create(user=reader, exercise=vector_add, source=VECTOR_ADD_CU)
    assert submission.language == Language.CUDA and not submission.is_triton
    triton = submission_create(user=reader, exercise=vector_add, source=VECTOR_ADD_TRITON, language="triton")
    triton.refresh_from_db()
    assert triton.language == Language.TRITON and triton.is_triton and triton.get_language_display() == "Triton"


def test_triton_is_offered_where_the_problem_has_a_starter_decided_at_each_call(vector_add, monkeypatch):
    assert selectors.languages_offered(vector_add) == ["cuda", "triton"]
    assert selectors.starter_of(vector_add, "triton") == VECTOR_ADD_TRITON
    assert selectors.starter_of(vector_add, "cuda") == VECTOR_ADD_CU  # the exercise's own starter
    monkeypatch.setattr(selectors, "TRITON_STARTER", "example_triton_not_written_yet.py")
    assert selectors.languages_offered(vector_add) == ["cuda"]  # no cache: the next call sees the folder as it is
    vector_add.problem = "../vector_add"  # a name that is not a problem never becomes a path
    assert selectors.triton_starter(vector_add.problem) is None


def test_the_editor_resumes_in_the_language_and_text_of_the_readers_latest_submissions(vector_add, reader):
    start = selectors.editor_start(reader, vector_add)
    assert start.language == "cuda" and start.texts == {"cuda": VECTOR_ADD_CU, "triton": VECTOR_ADD_TRITON}
    mine = VECTOR_ADD_TRITON + "# mine\n"
    submission_create(user=reader, exercise=vector_add, source=VECTOR_ADD_CU + "// mine\n")
    submission_create(user=reader, exercise=vector_add, source=mine, language="triton")
    start = selectors.editor_start(reader, vector_add)
    assert start.language == "triton" and start.texts == {"cuda": VECTOR_ADD_CU + "// mine\n", "triton": mine}


# --- The form -----------------------------------------------------------------------------------------------------


def upload(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/plain")


def test_the_form_offers_the_languages_given_and_hides_a_lone_cuda():
    both = SubmissionForm(languages=["cuda", "triton"], initial={"language": "triton"})
    assert [value for value, _ in both.fields["language"].widget.choices] == ["cuda", "triton"]
    assert both.fields["source"].widget.mode == "python" and "mode-python.js" in str(both.media)
    assert ".py" in both.fields["upload"].widget.attrs["accept"]
    alone = SubmissionForm(languages=["cuda"])
    assert alone["language"].is_hidden and alone.fields["source"].widget.mode == "c_cpp"
    assert ".py" not in alone.fields["upload"].widget.attrs["accept"]
    assert "mode-c_cpp.js" in str(alone.media) and "mode-python.js" in str(alone.media)  # the switch needs both


@pytest.mark.parametrize(
    ("language", "name", "says"),
    [
        ("cuda", "add.py", "add.py is a Triton file (.py), but the language chosen is CUDA C++: choose Triton"),
        ("triton", "add.cu", "add.cu is a CUDA file (.cu), but the language chosen is Triton: choose CUDA C++"),
    ],
)
def test_an_uploads_suffix_must_be_the_chosen_languages(language, name, says):
    data = {"language": language, "source": "what I typed\n", "plan": "my plan"}
    form = SubmissionForm(data, {"upload": upload(name, "x = 1\n")}, languages=["cuda", "triton"])
    assert not form.is_valid()
    assert says in form.errors["upload"][0]
    assert form.language_shown() == language and form["source"].value() == "what I typed\n"


def test_a_matching_upload_is_what_is_submitted_in_its_language():
    data = {"language": "triton", "source": "ignored"}
    form = SubmissionForm(data, {"upload": upload("add.py", VECTOR_ADD_TRITON)}, languages=["cuda", "triton"])
    assert form.is_valid(), form.errors
    assert form.effective() == (VECTOR_ADD_TRITON, None, "add.py", "triton")


def test_without_triton_a_py_upload_is_refused_as_before_and_a_post_without_language_is_cuda():
    form = SubmissionForm({"source": "x"}, {"upload": upload("add.py", "x")}, languages=["cuda"])
    assert not form.is_valid() and "ends in .cu" in form.errors["upload"][0]
    plain = SubmissionForm({"source": "x"}, languages=["cuda"])
    assert plain.is_valid() and plain.effective()[3] == "cuda"


# --- The service --------------------------------------------------------------------------------------------------


def refused(**kwargs) -> SubmissionRefused:
    before = Submission.objects.count()
    with pytest.raises(SubmissionRefused) as caught:
        submission_create(**kwargs)
    assert Submission.objects.count() == before
    return caught.value


def test_triton_is_refused_where_it_is_not_offered_and_unknown_languages_everywhere(
    vector_add, reader, no_triton_starters
):
    refusal = refused(user=reader, exercise=vector_add, source=VECTOR_ADD_TRITON, language="triton")
    assert (
        refusal.message == "Triton is not offered for this exercise: submit CUDA C++." and refusal.field == "language"
    )
    assert (
        "'fortran' is not offered" in refused(user=reader, exercise=vector_add, source="x", language="fortran").message
    )


def test_a_triton_files_refusals_speak_of_triton(vector_add, reader):
    empty = refused(user=reader, exercise=vector_add, source="  \n", language="triton")
    assert "upload a .py file" in empty.message
    nul = refused(user=reader, exercise=vector_add, source="x = 1\x00", language="triton")
    assert "not Triton source text" in nul.message
    no_plan = VECTOR_ADD_TRITON.split("PLAN =")[0]
    assert "no launch plan" in refused(user=reader, exercise=vector_add, source=no_plan, language="triton").message
    wrong = VECTOR_ADD_TRITON.replace('kernel = "vector_add"', 'kernel = "vector_sub"')
    refusal = refused(user=reader, exercise=vector_add, source=wrong, language="triton")
    assert refusal.field == "plan" and "vector_sub" in refusal.message


def test_a_file_that_does_not_parse_is_the_compiles_verdict_not_a_refusal(vector_add, reader):
    submission = submission_create(user=reader, exercise=vector_add, source="def broken(:\n", language="triton")
    assert submission.status == Submission.Status.QUEUED


def test_a_plan_typed_beside_the_editor_replaces_the_triton_files_plan(vector_add, reader):
    plan = (
        '[[launch]]\nkernel = "vector_add"\ngrid = ["cdiv(N, 512)"]\nnum_warps = 2\nconstexprs = { BLOCK_SIZE = 512 }'
    )
    submission = submission_create(
        user=reader, exercise=vector_add, source=VECTOR_ADD_TRITON, plan=plan, language="triton"
    )
    assert submission.source.count("PLAN = ") == 1 and 'grid = ["cdiv(N, 1024)"]' not in submission.source
    assert submission.source.endswith(f'PLAN = r"""\n{plan}\n"""\n')
    assert submission.source.startswith(VECTOR_ADD_TRITON.split("PLAN =")[0].rstrip())
    # The whole assignment pasted in is taken for its TOML.
    pasted = services.triton_plan_into_source(VECTOR_ADD_TRITON, f'PLAN = """\n{plan}\n"""')
    assert pasted == submission.source
    with pytest.raises(SubmissionRefused, match='may not contain """'):
        services.triton_plan_into_source(VECTOR_ADD_TRITON, 'kernel = """x"""')


# --- The pipeline: the real compile of a Triton submission on this CPU ---------------------------------------------


@confined
def test_a_triton_submission_goes_through_the_pipelines_compile_step_as_triton(vector_add, reader, monkeypatch):
    """The real compile on this CPU (Triton's two sandboxed children), with the language the pipeline passed seen."""
    from kernels import compile_submission as real_compile

    languages = []

    def compile_spy(source, problem, arch="sm_90", timeout_s=30.0, language="cuda"):
        languages.append(language)
        return real_compile(source, problem, arch, timeout_s, language=language)

    monkeypatch.setattr("kernels.compile_submission", compile_spy)
    submission = submission_create(user=reader, exercise=vector_add, source=VECTOR_ADD_TRITON, language="triton")
    services.submission_compile(submission_id=submission.pk)
    submission.refresh_from_db()
    assert languages == ["triton"]
    assert submission.status == Submission.Status.COMPILED, (submission.message, submission.compile_log)
    compiled = submission.compiled
    assert compiled["language"] == "triton" and compiled["cubin"] == "" and compiled["triton_version"]
    (build,) = compiled["triton_kernels"]
    assert (build["kernel"], build["num_warps"], build["num_stages"]) == ("vector_add", 4, 3)
    assert ".visible .entry vector_add(" in build["ptx"] and compiled["ptxas_version"]


@confined
def test_the_gpu_stage_takes_a_compiled_triton_submission(vector_add, reader):
    from kernels import GpuJudge

    submission = submission_create(user=reader, exercise=vector_add, source=VECTOR_ADD_TRITON, language="triton")
    services.submission_compile(submission_id=submission.pk)
    with GpuJudge(warm=False, job="tests.submissions.standin_judge:judge_job") as judge:
        assert services.submission_judge(submission_id=submission.pk, worker_name="gpu-test", judge=judge)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.PASSED and submission.result["kernels"][0]["name"] == "vector_add"


@confined
def test_a_staff_rerun_of_a_triton_submission_compiles_it_as_triton_again(vector_add, reader, staff):
    submission = submission_create(user=reader, exercise=vector_add, source=VECTOR_ADD_TRITON, language="triton")
    Submission.objects.filter(pk=submission.pk).update(status=Submission.Status.FAILED, verdict="wrong_answer")
    submission.refresh_from_db()
    services.submission_rerun(submission=submission, by=staff)
    services.submission_compile(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.language == "triton" and submission.status == Submission.Status.COMPILED
    assert submission.compiled["language"] == "triton"


# --- The pages ----------------------------------------------------------------------------------------------------


def test_the_progress_page_offers_triton_with_both_starters(vector_add, subscriber):
    body = client_for(subscriber).get(PROGRESS).content.decode()
    assert 'name="language" value="cuda"' in body and 'name="language" value="triton"' in body
    assert "<legend>Language</legend>" in body and "mode-python.js" in body
    assert starts_of(body) == {"cuda": VECTOR_ADD_CU, "triton": VECTOR_ADD_TRITON}
    assert editor_text(body) == VECTOR_ADD_CU and 'data-mode="c_cpp"' in body


def test_without_a_triton_starter_the_page_offers_cuda_alone(vector_add, subscriber, no_triton_starters):
    body = client_for(subscriber).get(PROGRESS).content.decode()
    assert 'type="hidden" name="language" value="cuda"' in body and 'value="triton"' not in body
    assert "data-starts" not in body and "<legend>Language</legend>" not in body


def test_the_page_opens_in_triton_after_a_triton_submission(vector_add, subscriber):
    mine = VECTOR_ADD_TRITON + "# second try\n"
    submission_create(user=subscriber, exercise=vector_add, source=mine, language="triton")
    body = client_for(subscriber).get(PROGRESS).content.decode()
    assert editor_text(body) == mine and 'data-mode="python"' in body
    assert re.search(r'value="triton"[^>]*checked', body)


def test_submitting_triton_from_the_form_stores_its_language(vector_add, subscriber):
    response = client_for(subscriber).post(SUBMIT, {"language": "triton", "source": VECTOR_ADD_TRITON})
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.language == "triton" and submission.source == VECTOR_ADD_TRITON


def test_an_upload_in_the_other_language_is_refused_and_the_typed_text_and_plan_stay(vector_add, subscriber):
    typed = "# what I typed, not yet saved anywhere\n" + VECTOR_ADD_TRITON
    data = {"language": "triton", "source": typed, "plan": "[[launch]]", "upload": upload("add.cu", VECTOR_ADD_CU)}
    response = client_for(subscriber).post(SUBMIT, data, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    body = response.content.decode()
    assert "add.cu is a CUDA file (.cu), but the language chosen is Triton" in body
    assert editor_text(body) == typed and "[[launch]]" in body and 'data-mode="python"' in body
    assert re.search(r'value="triton"[^>]*checked', body)
    assert not Submission.objects.exists()


@confined
def test_the_report_shows_the_language_versions_and_each_build(vector_add, subscriber):
    submission = submission_create(user=subscriber, exercise=vector_add, source=VECTOR_ADD_TRITON, language="triton")
    services.submission_compile(submission_id=submission.pk)
    submission.refresh_from_db()
    body = client_for(subscriber).get(f"/submissions/{submission.public_id}/").content.decode()
    assert "<dt>Language</dt><dd>Triton</dd>" in body
    compiled = submission.compiled
    assert f"Triton {compiled['triton_version']} · ptxas {compiled['ptxas_version']}" in body
    builds = re.search(r'<table class="table table--compact triton-builds">.*?</table>', body, re.S).group(0)
    assert "vector_add" in builds and "BLOCK_SIZE=1024" in builds
    assert re.search(r'<td class="num">4</td>\s*<td class="num">3</td>\s*<td class="num">0 B</td>', builds)
    assert 'class="language-python"' in body  # the source is shown as Python


def test_leaderboard_diff_and_live_list_name_the_language(vector_add, subscriber):
    cuda = submission_create(user=subscriber, exercise=vector_add, source=VECTOR_ADD_CU)
    triton = submission_create(user=subscriber, exercise=vector_add, source=VECTOR_ADD_TRITON, language="triton")
    client = client_for(subscriber)
    diff = client.get(f"/submissions/{triton.public_id}/diff/?against={cuda.public_id}").content.decode()
    assert "CUDA C++ · Queued" in diff and "Triton · Queued" in diff
    Submission.objects.filter(pk=triton.pk).update(
        status="passed", verdict="accepted", pct_of_baseline=50.0, pct_of_roofline=40.0, gbps=1000.0, unit="GB/s"
    )
    board = client.get("/capsules/free-one/leaderboard/").content.decode()
    assert '<th scope="col">Language</th>' in board and "<td>Triton</td>" in board
    live = client.get(PROGRESS).content.decode()
    assert '<span class="badge">Triton</span>' in live


def test_the_starter_used_for_cuda_is_still_the_exercises_own(mini_book, subscriber):
    make_exercise(mini_book.capsules.get(number=1))  # sgemm, its starter the naive rung
    body = client_for(subscriber).get(PROGRESS).content.decode()
    assert editor_text(body) == NAIVE

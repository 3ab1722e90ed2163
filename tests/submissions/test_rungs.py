"""The pages of the reference ladder (/rungs/<problem>/<step>/): a rung's source, what it changes from the rung
before and what the judge measured of it, for whoever may read the capsule that teaches it, linked from the
capsules and from the exercise's progress page."""

import json
from datetime import datetime
from pathlib import Path

import pytest
from django.test import Client

from apps.catalog.models import Capsule
from apps.submissions import rungs
from apps.submissions.models import Exercise
from apps.submissions.services import reference_result_store
from tests.subscriptions.visitors import make_visitor

FIXTURE = Path(__file__).resolve().parents[2] / "apps" / "submissions" / "fixtures" / "reference_ladder_h200.json"
COALESCED = "/rungs/sgemm/02_coalesced/"
# In 02_coalesced.cu only: its kernel's name, and the first words of its header's "Change versus 01" paragraph.
SOURCE_MARK = "sgemm_coalesced"
NOTES_MARK = "Change versus 01"


def client_for(user) -> Client:
    client = Client()
    if user is not None and user.is_authenticated:
        client.force_login(user)
    return client


def measured(step: str, problem: str = "sgemm"):
    """The H200's figures for a rung, as the demo ships them."""
    row = next(r for r in json.loads(FIXTURE.read_text())["results"] if (r["problem"], r["step"]) == (problem, step))
    return reference_result_store(
        problem=problem,
        gpu_kind="h200",
        step=step,
        title=row["title"],
        result=row["result"],
        measured_at=datetime.fromisoformat(row["measured_at"]),
    )


@pytest.fixture
def taught(mini_book):
    """The locked capsule teaches rung 02: its exercise starts from rung 01 and names 02 as the book's kernel."""
    return Exercise.objects.create(
        capsule=Capsule.objects.get(slug="locked-two"),
        problem="sgemm",
        title="Coalesce it",
        statement="Swap the mapping.",
        starter_source=rungs.rung_get("sgemm", "01_naive").source,
        starter_name="01_naive.cu",
        reference_step="02_coalesced.cu",
    )


# --- The rung files ------------------------------------------------------------------------------


def test_every_rung_of_the_ladder_has_a_title_notes_and_a_page_address():
    every = rungs.rungs_all()
    assert len(every) >= 40
    for rung in every:
        assert rung.title and rung.notes, rung
        assert rung.get_absolute_url() == f"/rungs/{rung.problem}/{rung.stem}/"
        assert rungs.rung_get(rung.problem, rung.stem) is rung
    assert rungs.rung_named("transpose", "transpose/03_eight_per_thread.cu").stem == "03_eight_per_thread"
    assert rungs.rung_named("sgemm", "example.cu") is None
    # The GEMM rungs climb one folder: the rung before the first HGEMM kernel is the last SGEMM one.
    before, after = rungs.rung_neighbours(rungs.rung_get("hgemm", "10_hgemm_wmma"))
    assert (before.problem, before.stem, after.stem) == ("sgemm", "09_double_buffered", "11_hgemm_wmma_tuned")
    assert rungs.rung_neighbours(rungs.rung_get("attention", "01_naive"))[0] is None


def test_a_rungs_notes_are_its_header_in_labelled_paragraphs():
    rung = rungs.rung_get("sgemm", "07_autotuned")
    assert rung.title == "autotuned block and thread tiles."
    starts = [paragraph.split(":")[0] for paragraph in rung.notes]
    assert starts == ["Change versus 06", "Prediction", "AUTOTUNE-RESULT"]


# --- Who may open it -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["anonymous", "free", "canceled"])
def test_a_reader_who_may_not_read_the_teaching_capsule_gets_the_paywall_and_nothing_of_the_rung(taught, kind):
    measured("02_coalesced.cu")
    response = client_for(make_visitor(kind)).get(COALESCED)
    body = response.content.decode()
    assert response.status_code == 200 and "This capsule is for subscribers" in body
    assert "Locked two: tiling" in body  # the capsule's public title: what to subscribe for
    for secret in (SOURCE_MARK, NOTES_MARK, "global memory coalescing", "NVIDIA H200", "TFLOP/s"):
        assert secret not in body
    assert "no-store" in response["Cache-Control"]


@pytest.mark.parametrize("kind", ["active", "complimentary", "staff"])
def test_a_reader_of_the_capsule_gets_the_source_highlighted_the_change_and_the_figures(taught, kind):
    result = measured("02_coalesced.cu")
    response = client_for(make_visitor(kind)).get(COALESCED)
    body = response.content.decode()
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    assert "Rung 02: global memory coalescing." in body
    # The source, every line numbered and highlighted by the book's Pygments classes.
    assert 'class="numbered numbered--source highlight"' in body and SOURCE_MARK in body
    assert '<span class="kt">float</span>' in body or '<span class="kt">int</span>' in body
    assert body.count('class="numbered__line"') == len(rungs.rung_get("sgemm", "02_coalesced").source.splitlines())
    # What it changes: the header's own words, and the diff against rung 01.
    assert NOTES_MARK in body and 'href="/rungs/sgemm/01_naive/"' in body and "Line diff against rung 01_naive" in body
    # What it measured: from the stored run, with its GPU and date.
    assert "NVIDIA H200, 2 December 2026" in body
    assert f"{result.pct_of_baseline:.1f}%" in body and "M=4096 N=4096 K=4096" in body


def test_a_rung_of_a_free_capsule_is_open_to_everyone(mini_book):
    free = Capsule.objects.get(slug="free-one")
    Capsule.objects.filter(pk=free.pk).update(body_html='<p>See <a href="/rungs/softmax/02_online_cached/">it</a>.</p>')
    body = Client().get("/rungs/softmax/02_online_cached/").content.decode()
    assert "This capsule is for subscribers" not in body and "Not measured on this site" in body
    assert "online max and sum" in body  # its header


def test_the_teaching_capsule_is_the_first_that_links_the_rung_else_the_exercise_that_names_it(taught):
    from apps.submissions.selectors import rung_capsule

    coalesced, tiling = rungs.rung_get("sgemm", "02_coalesced"), rungs.rung_get("sgemm", "03_smem_tiling")
    assert rung_capsule(coalesced).slug == "locked-two"  # its exercise names it
    assert rung_capsule(tiling).slug == "locked-two"  # the first exercise on sgemm: a rung climbed past
    Capsule.objects.filter(slug="free-one").update(body_html=f'<a href="{tiling.get_absolute_url()}">03</a>')
    assert rung_capsule(tiling).slug == "free-one"  # linked from a capsule: it teaches it
    # Of the capsules that link to it, the first with an exercise on its problem, not one that only looks ahead.
    Capsule.objects.filter(slug="locked-two").update(body_html=f'<a href="{tiling.get_absolute_url()}">03</a>')
    assert rung_capsule(tiling).slug == "locked-two"
    assert rung_capsule(rungs.rung_get("attention", "01_naive")) is None  # nothing in this book about attention


def test_a_rung_no_capsule_teaches_and_an_unknown_rung_are_404(taught):
    client = client_for(make_visitor("active"))
    assert client.get("/rungs/attention/01_naive/").status_code == 404
    assert client.get("/rungs/sgemm/99_nothing/").status_code == 404
    assert client.get("/rungs/sgemm/..%2F..%2Fsettings/").status_code == 404


# --- Where it is linked from ---------------------------------------------------------------------


def test_the_progress_page_links_the_starter_and_the_books_kernel(taught):
    body = client_for(make_visitor("active")).get("/capsules/locked-two/progress/").content.decode()
    assert 'href="/rungs/sgemm/01_naive/"><code>01_naive.cu</code></a>' in body
    assert f'href="{COALESCED}">rung 02_coalesced</a>' in body


def test_a_starter_that_only_shares_a_rungs_file_name_is_not_linked(taught):
    Exercise.objects.filter(pk=taught.pk).update(starter_source="// the book's own\n")
    body = client_for(make_visitor("active")).get("/capsules/locked-two/progress/").content.decode()
    assert "<code>01_naive.cu</code>" in body and 'href="/rungs/sgemm/01_naive/"' not in body


def test_my_progress_links_each_steps_book_kernel_to_its_page(taught):
    body = client_for(make_visitor("active")).get("/progress/").content.decode()
    assert f'sgemm · <a href="{COALESCED}">rung 02</a>' in body


# --- The Triton rungs (issue 46) -----------------------------------------------------------------------------

TRITON_GEMM = "/rungs/bf16_gemm/triton_01_tiled_dot/"


@pytest.fixture
def taught_in_triton(mini_book):
    """The locked capsule's exercise is written for Triton: its book's kernel is the Triton rung of bf16_gemm."""
    return Exercise.objects.create(
        capsule=Capsule.objects.get(slug="locked-two"),
        problem="bf16_gemm",
        title="The GEMM in Triton",
        statement="Write it in Triton.",
        starter_source=rungs.rung_get("bf16_gemm", "01_naive").source,
        starter_name="01_naive.cu",
        reference_step="bf16_gemm/triton_01_tiled_dot.py",
        arch="sm_90a",
    )


def test_the_triton_rungs_have_pages_and_a_sequence_of_their_own_beside_the_cuda_ladder():
    triton = rungs.triton_rungs()
    assert {r.problem for r in triton} == {"softmax", "rmsnorm", "bf16_gemm", "attention"}
    for rung in triton:
        assert rung.is_triton and rung.language_name == "Triton" and rung.filename.endswith(".py")
        assert rung.title and rung.notes and not rung.title.startswith("Triton 01"), rung
        assert (
            rung.label == f"Triton rung {rung.number:02d}"
            and rung.get_absolute_url() == f"/rungs/{rung.problem}/{rung.stem}/"
        )
        assert rungs.rung_get(rung.problem, rung.stem) is rung and rungs.rung_named(rung.problem, rung.ref) is rung
        # Not on the CUDA ladder, whose numbers they do not share: their own sequence, the ladder beside them.
        assert rung not in rungs.rungs_all()
        assert rungs.rungs_of(rung) == [r for r in triton if r.problem == rung.problem]
        cuda = [r for r in rungs.rungs_all() if r.problem == rung.problem]
        assert cuda and rungs.rungs_beside(rung) == cuda
        assert rungs.rung_neighbours(rung) == (None, None)
    gemm = rungs.rung_get("bf16_gemm", "triton_01_tiled_dot")
    assert gemm.title.startswith("128 x 256 tiles of tl.dot")
    assert [paragraph.split(":")[0] for paragraph in gemm.notes] == [
        "Change versus the CUDA ladder", "Order", "Wide loads", "Prediction",
    ]  # fmt: skip
    assert rungs.rung_get("sgemm", "01_naive").label == "rung 01" and not rungs.rung_get("sgemm", "01_naive").is_triton
    assert rungs.rung_named("bf16_gemm", "bf16_gemm/example_triton.py") is None


def test_a_triton_rungs_page_names_its_language_shows_python_and_no_figure_until_one_is_measured(taught_in_triton):
    client = client_for(make_visitor("active"))
    body = client.get(TRITON_GEMM).content.decode()
    assert "Triton rung 01: 128 x 256 tiles of tl.dot" in body and "Language <strong>Triton</strong>" in body
    assert 'class="language-python"' in body and '<span class="kn">import</span>' in body  # Python's colours
    gemm = rungs.rung_get("bf16_gemm", "triton_01_tiled_dot")
    assert body.count('class="numbered__line"') == len(gemm.source.splitlines())
    assert "Wide loads: N and K are multiples of 8" in body  # its docstring, as notes
    assert "Line diff" not in body and "The first of its problem's kernels in Triton" in body
    assert "Not measured on this site's GPUs yet." in body and "TFLOP/s" not in body
    # Its own sequence, and the CUDA ladder of the problem beside it.
    assert "The bf16_gemm kernels in Triton" in body and 'href="/rungs/bf16_gemm/04_cluster_persistent/"' in body
    # Once the judge has measured it, its figures show as a CUDA rung's do (here, a stand-in stored by file name).
    row = next(r for r in json.loads(FIXTURE.read_text())["results"] if r["step"] == "04_cluster_persistent.cu")
    reference_result_store(
        problem="bf16_gemm", gpu_kind="h200", step="triton_01_tiled_dot.py", title=row["title"], result=row["result"]
    )
    measured_body = client.get(TRITON_GEMM).content.decode()
    assert "Not measured on this site" not in measured_body and "M=4096 N=4096 K=4096" in measured_body


def test_a_cuda_rungs_page_names_its_language_and_links_the_same_problem_in_triton(taught_in_triton):
    body = client_for(make_visitor("active")).get("/rungs/bf16_gemm/02_tma_wgmma/").content.decode()
    assert "Rung 02:" in body and "Language <strong>CUDA C++</strong>" in body and 'class="language-cuda"' in body
    assert "The same problem in Triton" in body and f'href="{TRITON_GEMM}"' in body


def test_an_exercise_written_for_triton_links_its_triton_rung_from_the_panel_and_the_ladders(taught_in_triton):
    client = client_for(make_visitor("active"))
    progress = client.get("/capsules/locked-two/progress/").content.decode()
    assert f'href="{TRITON_GEMM}">rung triton_01_tiled_dot</a>' in progress
    mine = client.get("/progress/").content.decode()
    assert f'bf16_gemm · <a href="{TRITON_GEMM}">Triton rung 01</a>' in mine


# --- The Triton rungs measured (issue 46) -----------------------------------------------------------------------------


def test_the_ladder_measurement_takes_every_rung_with_a_page_the_triton_rungs_last():
    from kernels.tools.ladder import LADDER, TRITON_RUNGS

    measured = rungs.rungs_to_measure()
    assert [r.path for r in measured] == [p.resolve() for p in LADDER + TRITON_RUNGS]
    assert list(measured) == list(rungs.every_rung())
    assert {(r.problem, r.filename, r.language) for r in measured if r.is_triton} == {
        ("softmax", "triton_01_rows.py", "triton"),
        ("rmsnorm", "triton_01_rows.py", "triton"),
        ("bf16_gemm", "triton_01_tiled_dot.py", "triton"),
        ("attention", "triton_01_flash.py", "triton"),
    }
    # Named: by ladder step or reference (one problem's), by file name or stem (every problem's of that name).
    named = rungs.rungs_to_measure
    assert [r.ref for r in named(["softmax/triton_01_rows"])] == ["softmax/triton_01_rows.py"]
    assert [r.ref for r in named(["bf16_gemm/triton_01_tiled_dot.py"])] == ["bf16_gemm/triton_01_tiled_dot.py"]
    assert [r.ref for r in named(["triton_01_rows.py"])] == ["rmsnorm/triton_01_rows.py", "softmax/triton_01_rows.py"]
    assert [r.ref for r in named(["02_coalesced"])] == ["02_coalesced.cu"]
    assert {r.problem for r in named(["01_naive.cu"])} >= {"sgemm", "softmax", "attention", "bf16_gemm"}


class JudgedOnAGpu:
    """Stands in for the GPU worker's GpuJudge, which only a GPU runs: it answers with the demo's real JudgeResult
    JSON for bf16_gemm (the H200's, of the CUDA rung 04) and records what it was given to judge."""

    def __init__(self):
        self.judged = []

    def judge(self, compiled, options):
        from kernels.results import JudgeResult

        self.judged.append((compiled.problem, compiled.language, compiled.arch, compiled.verdict.value))
        row = next(r for r in json.loads(FIXTURE.read_text())["results"] if r["step"] == "04_cluster_persistent.cu")
        return JudgeResult.from_dict(row["result"])


def test_a_measured_triton_rung_is_compiled_as_triton_for_sm_90a_and_shows_on_its_page(taught_in_triton):
    """The site's ladder task (services.reference_ladder_measure) on the real compile stage (Triton on the CPU);
    only the judgement is stood in. Its page then shows the figures instead of "Not measured"."""
    from apps.submissions import services

    client = client_for(make_visitor("active"))
    assert "Not measured on this site's GPUs yet." in client.get(TRITON_GEMM).content.decode()
    judge = JudgedOnAGpu()
    [stored] = services.reference_ladder_measure(
        gpu_kind="h200", judge=judge, steps=["bf16_gemm/triton_01_tiled_dot"], log=lambda line: None
    )
    assert judge.judged == [("bf16_gemm", "triton", "sm_90a", "compiled")]
    assert (stored.problem, stored.step, stored.gpu_kind, stored.verdict) == (
        "bf16_gemm", "triton_01_tiled_dot.py", "h200", "accepted",
    )  # fmt: skip
    assert stored.title.startswith("Triton 01 - 128 x 256 tiles of tl.dot") and stored.tflops
    body = client.get(TRITON_GEMM).content.decode()
    assert "Not measured on this site" not in body and "M=4096 N=4096 K=4096" in body

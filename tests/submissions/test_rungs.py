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

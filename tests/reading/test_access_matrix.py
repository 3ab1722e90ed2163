"""Every route that returns capsule content, for every kind of visitor: the locked capsule's
sentinel sentences appear only for visitors the access policy lets read it."""

import pytest
from django.test import Client

from tests.conftest import LOCKED_SENTINELS
from tests.subscriptions.visitors import FULL_ACCESS_KINDS, VISITOR_KINDS, client_for

MAY_READ_LOCKED = FULL_ACCESS_KINDS | {"staff"}

# (route, whether it may show the locked body to a reader with access)
CONTENT_ROUTES = [
    ("/capsules/locked-two/", True),
    ("/capsules/locked-two/figures/02-secret.svg", True),
    ("/search/?q=hide", True),
    ("/search/?q=tiles", True),
    ("/search/?q=hiding", True),  # stemmed: "hide" is in the locked body only
    ("/search/?q=%22tiles+hide%22+or+warps", True),
    ("/", False),
    ("/capsules/free-one/", False),
    ("/capsules/locked-three/", False),
    ("/capsules/locked-two/progress/", False),
    ("/progress/", False),
    # For crawlers and feed readers: public pages and summaries only, whoever asks.
    ("/sitemap.xml", False),
    ("/robots.txt", False),
    ("/feed/", False),
]


@pytest.mark.parametrize("kind", VISITOR_KINDS)
def test_locked_text_reaches_only_visitors_who_may_read_it(mini_book, kind):
    client = client_for(kind)
    for route, may_show in CONTENT_ROUTES:
        response = client.get(route)
        if response.status_code == 302:  # pages for signed-in readers only
            assert kind == "anonymous" and "/accounts/login/" in response["Location"]
            continue
        body = response.content.decode()
        shown = any(sentinel in body for sentinel in LOCKED_SENTINELS)
        assert shown == (may_show and kind in MAY_READ_LOCKED), f"{kind} {route}: sentinel shown={shown}"


@pytest.mark.parametrize("kind", VISITOR_KINDS)
def test_the_locked_page_teases_and_points_to_subscribe_or_shows_the_body(mini_book, kind):
    response = client_for(kind).get("/capsules/locked-two/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "A locked capsule about shared-memory tiling." in body  # the summary is public
    if kind in MAY_READ_LOCKED:
        assert '<h2 id="tiles">Tiles</h2>' in body and "This capsule is for subscribers" not in body
    else:
        assert "This capsule is for subscribers" in body and '<h2 id="tiles">' not in body
        assert "/pricing/" in body
        assert ("/accounts/login/" in body) == (kind == "anonymous")


LEADER_NAME = "SENTINEL-LEADER"


@pytest.mark.parametrize("kind", VISITOR_KINDS)
def test_a_locked_capsules_leaderboard_answers_like_the_capsule(mini_book, kind):
    # Issue 20: the leaderboard ranked a locked exercise's readers for anyone signed in.
    from apps.submissions.models import Exercise, Submission
    from apps.submissions.selectors import default_gpu_kind
    from tests.subscriptions.visitors import make_visitor

    capsule = mini_book.capsules.get(slug="locked-two")
    exercise = Exercise.objects.create(
        capsule=capsule, problem="sgemm", title="Naive SGEMM", statement="Multiply.", starter_name="01_naive.cu"
    )
    Submission.objects.create(
        user=make_visitor("active", name=LEADER_NAME),
        exercise=exercise,
        source="// kernel",
        source_sha256="0" * 64,
        gpu_kind=default_gpu_kind(),
        arch="sm_90",
        status=Submission.Status.PASSED,
        verdict="accepted",
        pct_of_baseline=42.0,
        time_ms=1.0,
    )
    client = client_for(kind)
    response = client.get("/capsules/locked-two/leaderboard/")
    if kind == "anonymous":  # signed-in readers only, like every progress page
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
        return
    capsule_page = client.get("/capsules/locked-two/").content.decode()
    body = response.content.decode()
    assert response.status_code == 200
    if kind in MAY_READ_LOCKED:
        assert LEADER_NAME in body and "This capsule is for subscribers" not in capsule_page
    else:
        assert LEADER_NAME not in body and "table--striped leaderboard" not in body and "Naive SGEMM" not in body
        # The same answer as the capsule's page: its paywall, pointing to the plans.
        assert "This capsule is for subscribers" in body and "This capsule is for subscribers" in capsule_page
        assert "/pricing/" in body


@pytest.mark.parametrize("kind", ["anonymous", "free", "past_due_expired", "canceled"])
def test_locked_figures_are_not_found_for_visitors_without_access(mini_book, kind):
    assert client_for(kind).get("/capsules/locked-two/figures/02-secret.svg").status_code == 404


def test_figures_are_served_as_inert_svg(mini_book):
    response = Client().get("/capsules/free-one/figures/01-tiles.svg")
    assert response.status_code == 200 and response["Content-Type"].startswith("image/svg+xml")
    assert (
        "sandbox" in response["Content-Security-Policy"] and "default-src 'none'" in response["Content-Security-Policy"]
    )


def test_reader_pages_are_never_stored_by_caches(mini_book):
    client = client_for("active")
    for route in ("/capsules/locked-two/", "/capsules/locked-two/figures/02-secret.svg", "/search/?q=tiles"):
        cache_control = client.get(route)["Cache-Control"]
        assert "private" in cache_control and "no-store" in cache_control


def test_meta_tags_of_a_locked_capsule_hold_only_public_text(mini_book):
    body = client_for("active").get("/capsules/locked-two/").content.decode()
    head = body[: body.index("</head>")]
    assert '<meta property="og:description" content="A locked capsule about shared-memory tiling.">' in head
    assert 'rel="canonical" href="https://kernel.example.com/capsules/locked-two/"' in head
    assert not any(sentinel in head for sentinel in LOCKED_SENTINELS)


def test_a_draft_capsule_is_not_on_the_site(mini_book):
    from apps.catalog.models import Capsule

    Capsule.objects.filter(slug="free-one").update(status=Capsule.Status.DRAFT)
    for kind in ("active", "staff"):
        assert client_for(kind).get("/capsules/free-one/").status_code == 404
    assert "free-one" not in client_for("anonymous").get("/").content.decode()

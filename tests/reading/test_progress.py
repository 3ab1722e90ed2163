from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.catalog.models import Capsule
from apps.reading.models import ReadingProgress
from tests.subscriptions.visitors import make_visitor


@pytest.fixture
def subscriber_client(mini_book):
    client = Client()
    user = make_visitor("active")
    client.force_login(user)
    client.user = user
    return client


def save(client, slug, **data):
    return client.post(f"/capsules/{slug}/position/", data)


def test_scrolling_saves_the_position_and_the_furthest_point_stays(subscriber_client):
    assert save(subscriber_client, "locked-two", position="0.6", heading="tiles").json() == {"percent": 60}
    assert save(subscriber_client, "locked-two", position="0.25", heading="code").status_code == 200
    progress = ReadingProgress.objects.get(user=subscriber_client.user, capsule__slug="locked-two")
    assert (progress.position, progress.furthest_position, progress.heading, progress.percent) == (
        0.25,
        0.6,
        "code",
        60,
    )


def test_the_reader_resumes_from_the_saved_position(subscriber_client):
    save(subscriber_client, "locked-two", position="0.4321")
    body = subscriber_client.get("/capsules/locked-two/").content.decode()
    assert 'data-resume-position="0.4321"' in body and "43% read" in body


@pytest.mark.parametrize(
    "data", [{"position": "1.5"}, {"position": "-0.1"}, {"position": "nan"}, {"position": "half"}, {}]
)
def test_a_bad_position_is_refused_and_saves_nothing(subscriber_client, data):
    assert save(subscriber_client, "locked-two", **data).status_code == 400
    assert not ReadingProgress.objects.exists()


@pytest.mark.parametrize("kind, status", [("anonymous", 403), ("free", 403), ("canceled", 403)])
def test_progress_on_a_capsule_one_may_not_read_is_refused(mini_book, kind, status):
    client = Client()
    visitor = make_visitor(kind)
    if visitor.is_authenticated:
        client.force_login(visitor)
    assert save(client, "locked-two", position="0.5").status_code == status
    assert not ReadingProgress.objects.exists()


def test_a_free_reader_saves_progress_on_a_free_capsule(mini_book, reader):
    client = Client()
    client.force_login(reader)
    assert save(client, "free-one", position="1").json() == {"percent": 100}


def test_get_is_not_allowed_on_the_save_endpoints(subscriber_client):
    assert subscriber_client.get("/capsules/locked-two/position/").status_code == 405
    assert subscriber_client.get("/capsules/locked-two/complete/").status_code == 405


def test_marking_complete_and_back_with_and_without_htmx(subscriber_client):
    response = subscriber_client.post("/capsules/locked-two/complete/", {"complete": "1"})
    assert response.status_code == 302
    progress = ReadingProgress.objects.get(capsule__slug="locked-two")
    assert progress.is_complete and progress.percent == 100
    fragment = subscriber_client.post("/capsules/locked-two/complete/", {"complete": "0"}, HTTP_HX_REQUEST="true")
    assert "Mark as complete" in fragment.content.decode() and "<html" not in fragment.content.decode()
    assert not ReadingProgress.objects.get(capsule__slug="locked-two").is_complete


def test_csrf_is_enforced_on_progress_saves(mini_book, reader):
    client = Client(enforce_csrf_checks=True)
    client.force_login(reader)
    assert save(client, "free-one", position="0.5").status_code == 403


def test_my_progress_and_continue_reading(subscriber_client):
    save(subscriber_client, "free-one", position="1")
    subscriber_client.post("/capsules/free-one/complete/", {"complete": "1"})
    save(subscriber_client, "locked-three", position="0.5")
    page = subscriber_client.get("/progress/").content.decode()
    assert "<strong>1</strong> of 3 capsules completed" in page
    assert "<strong>1</strong> in progress" in page
    assert "Continue reading: Locked three: warps" in page
    landing = subscriber_client.get("/").content.decode()
    assert 'href="/capsules/locked-three/">Continue reading: Locked three: warps' in landing
    assert 'aria-label="Read 50%"' in landing


def test_the_capsule_progress_page_shows_the_reading_state(subscriber_client):
    assert (
        "You have not opened this capsule yet."
        in subscriber_client.get("/capsules/locked-two/progress/").content.decode()
    )
    save(subscriber_client, "locked-two", position="0.3")
    page = subscriber_client.get("/capsules/locked-two/progress/").content.decode()
    assert "In progress" in page and "30%" in page and "Resume reading" in page
    assert "<dt>Last read</dt><dd>just now</dd>" in page  # not "0 minutes ago"


def test_opening_a_capsule_is_on_its_progress_page_at_once(subscriber_client):
    """Issue 29: right after reading a capsule that fits on the screen (never scrolled, so no position saved until
    the reader left), its progress page said "You have not opened this capsule yet". Opening it is recorded now."""
    assert "Start reading" in subscriber_client.get("/capsules/locked-three/progress/").content.decode()
    subscriber_client.get("/capsules/locked-three/")  # no position sent: the page's script never ran
    page = subscriber_client.get("/capsules/locked-three/progress/").content.decode()
    assert "You have not opened this capsule yet." not in page
    assert "In progress" in page and 'aria-label="Read 0%"' in page and "<dd>just now</dd>" in page


def test_opening_records_nothing_for_a_capsule_one_may_not_read(mini_book, reader):
    client = Client()
    client.force_login(reader)
    client.get("/capsules/locked-two/")
    assert not ReadingProgress.objects.filter(user=reader).exists()
    client.get("/capsules/free-one/")
    assert ReadingProgress.objects.filter(user=reader).count() == 1


def test_last_read_says_how_long_ago_beyond_a_minute(subscriber_client):
    save(subscriber_client, "locked-two", position="0.3")
    ReadingProgress.objects.update(last_read_at=timezone.now() - timedelta(minutes=5))
    page = subscriber_client.get("/capsules/locked-two/progress/").content.decode()
    assert "<dt>Last read</dt><dd>5\xa0minutes ago</dd>" in page


def test_progress_of_an_unpublished_capsule_leaves_my_progress(subscriber_client):
    save(subscriber_client, "locked-three", position="0.5")
    Capsule.objects.filter(slug="locked-three").update(status=Capsule.Status.DRAFT)
    assert "Continue reading" not in subscriber_client.get("/progress/").content.decode()

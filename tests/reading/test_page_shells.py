"""A signed-in reader's capsule page comes from a shell kept per capsule and kind of reader, with the reader's own parts
filled in (config/shells.py). It must be the very page an ordinary rendering gives, for every kind of reader, and one
reader's name, email, progress, messages or CSRF token must never reach another's page."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from apps.reading.models import ReadingProgress
from config import shells
from tests.subscriptions.visitors import make_visitor

pytestmark = pytest.mark.django_db


def _url(capsule):
    return reverse("reading:capsule", kwargs={"slug": capsule.slug})


def _html(client, capsule) -> str:
    response = client.get(_url(capsule))
    assert response.status_code == 200
    return response.content.decode()


def _without_csrf_tokens(html: str) -> str:
    return re.sub(r'(csrfmiddlewaretoken" value=|x-csrftoken": )"[^"]+"', r"\1", html)


def _whole(client, capsule, settings) -> str:
    settings.PAGE_SHELLS = False
    try:
        return _without_csrf_tokens(_html(client, capsule))
    finally:
        settings.PAGE_SHELLS = True


@pytest.mark.parametrize(
    ("kind", "slug", "progress"),
    [
        ("active", "locked-two", None),
        ("active", "locked-two", {"position": 0.4, "furthest_position": 0.5}),
        ("complimentary", "locked-two", {"position": 1.0, "furthest_position": 1.0, "complete": True}),
        ("staff", "locked-two", None),
        ("free", "locked-two", None),  # the teaser and the offer to subscribe
        ("canceled", "free-one", {"position": 0.2, "furthest_position": 0.2}),
    ],
)
def test_the_page_from_a_shell_is_the_page_rendered_whole(client, mini_book, settings, kind, slug, progress):
    capsule = mini_book.capsules.get(slug=slug)
    reader = make_visitor(kind, name='Ann <b>"&"</b>')
    if progress:
        from django.utils import timezone

        complete = progress.pop("complete", False)
        ReadingProgress.objects.create(
            user=reader, capsule=capsule, completed_at=timezone.now() if complete else None, **progress
        )
    client.force_login(reader)
    whole = _whole(client, capsule, settings)
    first, kept = (_without_csrf_tokens(_html(client, capsule)) for _ in range(2))
    assert len(shells._shells) == 1
    assert first == whole and kept == whole
    assert "Ann &lt;b&gt;&quot;&amp;&quot;&lt;/b&gt;" in kept


def test_one_reader_s_own_parts_never_reach_another(mini_book):
    capsule = mini_book.capsules.get(slug="locked-two")
    first_reader, second_reader = make_visitor("active", name="First Reader"), make_visitor("active", name="")
    ReadingProgress.objects.create(user=first_reader, capsule=capsule, position=0.75, furthest_position=0.75)
    first, second = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)
    first.force_login(first_reader)
    second.force_login(second_reader)
    assert "First Reader" in _html(first, capsule)

    page = _html(second, capsule)
    assert len(shells._shells) == 1  # the second reader's page came from the first one's shell
    assert "First Reader" not in page and first_reader.email not in page and "75% read" not in page
    assert second_reader.email in page and 'data-resume-position="0.0000"' in page
    # The form's token is the second reader's own: it is accepted with their cookie.
    token = re.search(r'csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    complete = reverse("reading:complete", args=[capsule.slug])
    marked = second.post(complete, {"complete": "1", "csrfmiddlewaretoken": token})
    assert marked.status_code in (200, 302)
    assert ReadingProgress.objects.get(user=second_reader, capsule=capsule).is_complete


def test_a_reader_s_message_shows_once_on_their_own_page(client, mini_book):
    capsule = mini_book.capsules.get(slug="locked-two")
    client.force_login(make_visitor("active"))
    _html(client, capsule)  # the shell is kept before the message exists
    client.post(reverse("accounts:profile"), {"name": "Renamed"})
    assert "Your public name is saved." in _html(client, capsule)
    assert "Your public name is saved." not in _html(client, capsule)


def test_staff_and_readers_get_shells_of_their_own(client, mini_book):
    capsule = mini_book.capsules.get(slug="locked-two")
    client.force_login(make_visitor("staff"))
    assert reverse("admin:index") in _html(client, capsule)
    client.force_login(make_visitor("active"))
    assert reverse("admin:index") not in _html(client, capsule)
    assert len(shells._shells) == 2


def test_without_shells_nothing_is_kept(client, mini_book, settings):
    settings.PAGE_SHELLS = False
    client.force_login(make_visitor("active"))
    _html(client, mini_book.capsules.get(slug="locked-two"))
    assert shells._shells == {}

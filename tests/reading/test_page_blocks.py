"""The parts of a capsule page and of the site's frame that are the same for every reader are kept, rendered, in each
process's memory (the templates' cache blocks, using the "local" cache): a signed-in reader's page renders only what
is theirs (issue 20's load benchmark). These tests hold what must not change with it: an edit shows at once, the
paid text is never handed to someone who may not read it, and one reader's name, progress or staff links never
appear on another's page."""

import re

import pytest
from django.urls import reverse

from apps.catalog.services import capsule_save
from apps.reading.models import ReadingProgress
from tests.subscriptions.visitors import make_visitor

pytestmark = pytest.mark.django_db

PAID_TEXT = "SENTINEL-LOCKED-PARAGRAPH"  # in locked-two's body (tests/catalog/books/mini)


def _url(capsule):
    return reverse("reading:capsule", kwargs={"slug": capsule.slug})


def _page(client, capsule):
    response = client.get(_url(capsule))
    assert response.status_code == 200
    return response


def _without_csrf_tokens(response) -> str:
    # Django masks the CSRF token differently in every response.
    return re.sub(r'(csrfmiddlewaretoken" value=|x-csrftoken": )"[^"]+"', r"\1", response.content.decode())


def test_the_shared_blocks_are_rendered_once(client, mini_book):
    capsule = mini_book.capsules.get(slug="locked-two")
    client.force_login(make_visitor("active"))
    first = _page(client, capsule)
    second = _page(client, capsule)
    rendered = {template.name for template in second.templates}
    assert "catalog/_share_meta.html" in {template.name for template in first.templates}
    assert not rendered & {"catalog/_share_meta.html", "_nav.html", "_display_settings.html", "_shortcuts.html"}
    assert _without_csrf_tokens(second) == _without_csrf_tokens(first)


def test_an_edit_shows_at_once_on_a_signed_in_page(client, mini_book):
    capsule = mini_book.capsules.get(slug="locked-two")
    client.force_login(make_visitor("active"))
    _page(client, capsule)
    capsule.title = "Tiling, retitled"
    capsule.body = capsule.body.replace(PAID_TEXT, "REWRITTEN-PARAGRAPH")
    capsule_save(capsule=capsule)
    page = _page(client, capsule).content.decode()
    assert "Tiling, retitled" in page and "<title>02 · Tiling, retitled" in page
    assert "REWRITTEN-PARAGRAPH" in page and PAID_TEXT not in page


def test_the_paid_text_kept_for_a_subscriber_never_reaches_a_reader_without_access(client, mini_book):
    capsule = mini_book.capsules.get(slug="locked-two")
    client.force_login(make_visitor("active"))
    page = _page(client, capsule).content.decode()
    assert PAID_TEXT in page and '<span class="locked">' not in page
    for kind in ("free", "canceled", "past_due_expired"):
        client.force_login(make_visitor(kind))
        page = _page(client, capsule).content.decode()
        assert PAID_TEXT not in page, kind
        assert '<span class="locked">' in page, kind  # the lock mark of the badges block, not the subscriber's copy
    client.logout()
    assert PAID_TEXT not in _page(client, capsule).content.decode()


def test_each_reader_sees_only_their_own_name_progress_and_links(client, mini_book):
    capsule = mini_book.capsules.get(slug="locked-two")
    staff = make_visitor("staff", name="Staff Person")
    reader = make_visitor("active", name="Plain Reader")
    ReadingProgress.objects.create(user=reader, capsule=capsule, position=0.4, furthest_position=0.4)
    client.force_login(staff)
    staff_page = _page(client, capsule).content.decode()
    assert "Staff Person" in staff_page and reverse("submissions:queues") in staff_page
    client.force_login(reader)
    page = _page(client, capsule).content.decode()
    assert "Plain Reader" in page and "40% read" in page
    assert "Staff Person" not in page and reverse("submissions:queues") not in page and "Admin</a>" not in page
    client.logout()
    anonymous = _page(client, capsule).content.decode()
    assert "Plain Reader" not in anonymous and "My progress" not in anonymous and "Sign in" in anonymous

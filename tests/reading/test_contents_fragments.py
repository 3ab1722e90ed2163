"""A capsule's table of contents and pager are public data, rendered once per public version for every reader with
the same access (config.caching.public_fragments): a signed-in reader's page no longer loads and renders the whole
book's contents on every view (issue 20's load benchmark, bench/load.py), and still shows edits at once."""

from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.catalog.services import capsule_save
from tests.subscriptions.visitors import make_visitor

pytestmark = pytest.mark.django_db


def _url(capsule):
    return reverse("reading:capsule", kwargs={"slug": capsule.slug})


def _contents(page: str) -> str:
    return page[page.index('<nav class="reader-nav"') : page.index("</nav>")]


@pytest.fixture
def subscriber_client(client, mini_book):
    client.force_login(make_visitor("active", name="Sub Scriber"))
    return client


def test_a_signed_in_reader_does_not_load_the_contents_on_every_view(subscriber_client, mini_book):
    capsule = mini_book.capsules.get(slug="locked-two")
    first = subscriber_client.get(_url(capsule)).content.decode()
    with CaptureQueriesContext(connection) as queries:
        again = subscriber_client.get(_url(capsule)).content.decode()
    assert _contents(again) == _contents(first)
    assert not [query for query in queries if 'FROM "catalog_part"' in query["sql"]], "the contents were queried again"
    assert 'aria-current="page"' in again and 'rel="prev"' in again and 'rel="next"' in again


def test_the_contents_show_an_edit_at_once(subscriber_client, mini_book):
    capsule, other = mini_book.capsules.get(slug="locked-two"), mini_book.capsules.get(slug="locked-three")
    subscriber_client.get(_url(capsule))
    other.title = "A Retitled Neighbour"
    capsule_save(capsule=other)
    page = subscriber_client.get(_url(capsule)).content.decode()
    assert page.count("A Retitled Neighbour") == 2  # in the contents and in the pager


def test_lock_marks_follow_the_readers_access_and_the_current_capsule(client, mini_book):
    locked, free = mini_book.capsules.get(slug="locked-two"), mini_book.capsules.get(slug="free-one")
    client.force_login(make_visitor("active", name="Sub Scriber"))
    assert "reader-nav__mark--locked" not in client.get(_url(locked)).content.decode()
    client.force_login(make_visitor("free", name="Free Reader"))
    page = client.get(_url(locked)).content.decode()
    assert "reader-nav__mark--locked" in page  # not the subscriber's copy
    other = client.get(_url(free)).content.decode()
    assert other.count('aria-current="page"') == 1
    assert f'href="{_url(free)}" aria-current="page"' in other


def test_the_page_is_rendered_when_the_cache_is_down(subscriber_client, mini_book):
    with (
        mock.patch("config.caching.cache.get", side_effect=ConnectionError("redis down")),
        mock.patch("config.caching.cache.set", side_effect=ConnectionError("redis down")),
    ):
        page = subscriber_client.get(_url(mini_book.capsules.get(slug="locked-two")))
    assert page.status_code == 200 and 'aria-current="page"' in page.content.decode()

import pytest
from django.test import Client

from apps.catalog.models import Capsule
from tests.subscriptions.visitors import make_visitor


def search(kind, query):
    client = Client()
    visitor = make_visitor(kind)
    if visitor.is_authenticated:
        client.force_login(visitor)
    return client.get("/search/", {"q": query}).content.decode()


def test_everyone_finds_locked_capsules_by_their_public_title_and_summary(mini_book):
    page = search("anonymous", "tiling")
    assert 'href="/capsules/locked-two/">02 · Locked two: tiling' in page
    assert "A locked capsule about shared-memory <mark>tiling</mark>." in page


def test_words_only_in_a_locked_body_find_nothing_for_those_who_may_not_read_it(mini_book):
    assert "0 results" in search("free", "hide")
    page = search("active", "hide")
    assert "1 result " in page and "SENTINEL-LOCKED-PARAGRAPH" in page and "<mark>hide</mark>" in page


def test_free_bodies_are_searchable_by_everyone(mini_book):
    page = search("anonymous", "warps")
    assert 'href="/capsules/free-one/"' in page and "<mark>warps</mark>" in page


def test_snippets_are_escaped(mini_book):
    Capsule.objects.filter(slug="free-one").update(body_text="about warps <script>alert(1)</script> here")
    page = search("anonymous", "warps")
    assert "<mark>warps</mark>" in page and "<script>alert(1)" not in page


@pytest.mark.parametrize("query", ["", "   ", "&&&|!", "a" * 500])
def test_odd_queries_do_not_fail(mini_book, query):
    client = Client()
    assert client.get("/search/", {"q": query}).status_code == 200

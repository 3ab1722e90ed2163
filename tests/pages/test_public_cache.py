"""Caching that fits a book site (issue 20, config/caching.py): anonymous public pages are shareable for a minute,
validated by an ETag and rendered once per version of what they show; anything personal or locked stays
`private, no-store`, and no shared page carries one visitor's CSRF token or name."""

import time
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.catalog.services import capsule_save
from apps.reviews import services as reviews
from tests.reviews.conftest import make_reader

pytestmark = pytest.mark.django_db


def _free(book):
    return book.capsules.filter(access="free").first()


def _locked(book):
    return book.capsules.exclude(access="free").first()


def _public_urls(book):
    return [
        reverse("pages:landing"),
        reverse("subscriptions:pricing"),
        reverse("reviews:review-list"),
        reverse("reading:capsule", kwargs={"slug": _free(book).slug}),
    ]


def _assert_public(response):
    assert response.status_code == 200
    assert response["Cache-Control"] == "public, max-age=60"
    assert "Cookie" in response["Vary"]
    assert response["ETag"].startswith('"')
    assert not response.cookies  # no csrftoken or session cookie in a page that others may be handed
    body = response.content.decode()
    assert "csrfmiddlewaretoken" not in body and "x-csrftoken" not in body


def test_anonymous_public_pages_are_shareable_with_a_validator(client, mini_book):
    for url in _public_urls(mini_book):
        _assert_public(client.get(url))


def test_a_matching_if_none_match_is_answered_304_without_rendering(client, mini_book):
    url = reverse("pages:landing")
    first = client.get(url)
    with CaptureQueriesContext(connection) as queries:
        again = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again["ETag"] == first["ETag"]
    assert again["Cache-Control"] == "public, max-age=60"
    # Only the version (one statement), none of the page's own queries (parts, capsules, reviews).
    assert len(queries) == 1, [q["sql"] for q in queries]


def test_rendered_once_per_version(client, mini_book):
    url = reverse("pages:landing")
    first = client.get(url)
    with CaptureQueriesContext(connection) as queries:
        second = client.get(url)
    assert second.content == first.content and second["ETag"] == first["ETag"]
    assert len(queries) == 1, [q["sql"] for q in queries]


def test_a_cached_page_is_served_from_the_process_own_copy(client, mini_book):
    url = reverse("pages:landing")
    first = client.get(url)
    with mock.patch("config.caching.cache.get") as shared:
        again = client.get(url)
    assert again.content == first.content and again["ETag"] == first["ETag"]
    assert not shared.called  # no round trip to Redis for a page this process rendered or fetched


def test_a_process_reuses_its_reading_of_the_version_for_a_moment(client, mini_book, settings):
    settings.PUBLIC_VERSION_TTL_MS = 1000  # production's (the tests read it on every request)
    url = reverse("pages:landing")
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    assert len(queries) == 0, [q["sql"] for q in queries]
    capsule = _free(mini_book)
    capsule.title = "Retitled A Second Ago"
    capsule_save(capsule=capsule)
    with mock.patch("config.caching.time.monotonic", return_value=time.monotonic() + 1.01):
        assert "Retitled A Second Ago" in client.get(url).content.decode()


def test_a_query_string_is_public_and_validated_but_not_kept(client, mini_book):
    url = reverse("reviews:review-list")
    with mock.patch("config.caching.cache.set") as kept:
        first = client.get(url + "?sort=highest&made-up=1")
        _assert_public(first)
        again = client.get(url + "?sort=highest&made-up=1", HTTP_IF_NONE_MATCH=first["ETag"])
        assert again.status_code == 304
        assert not kept.called  # nothing stored under a client-chosen address
        client.get(url)
        assert kept.called  # the plain address is


def test_a_capsule_edit_or_a_new_review_is_a_new_version(client, mini_book):
    url = reverse("pages:landing")
    before = client.get(url)
    capsule = _free(mini_book)
    capsule.title = "A Retitled Free Capsule"
    capsule_save(capsule=capsule)
    edited = client.get(url, HTTP_IF_NONE_MATCH=before["ETag"])
    assert edited.status_code == 200 and "A Retitled Free Capsule" in edited.content.decode()
    assert edited["ETag"] != before["ETag"]

    reviewer = make_reader(mini_book, name="Ada Reviewer")
    reviews.review_create(user=reviewer, book=mini_book, rating=5, text="Clear, careful and honest about numbers.")
    listed = client.get(reverse("reviews:review-list"))
    assert "Clear, careful and honest about numbers." in listed.content.decode()


def test_a_deploy_with_new_templates_or_code_is_a_new_version(client, mini_book, tmp_path, settings):
    """What renders the pages is part of the version: after a deploy no process serves HTML that the old code made
    (a template's fragment kept in Redis would otherwise outlive it until the data changed)."""
    from config import caching

    url = reverse("pages:landing")
    client.get(url)
    with CaptureQueriesContext(connection) as cached:
        client.get(url)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "base.html").write_text("a deploy later")
    settings.BASE_DIR = tmp_path
    caching.code_version.cache_clear()
    try:
        with CaptureQueriesContext(connection) as deployed:
            client.get(url)
    finally:
        caching.code_version.cache_clear()
    assert len(cached) == 1 < len(deployed), "the page was served from before the deploy"


def test_signed_in_pages_stay_private_and_never_get_the_anonymous_copy(client, mini_book, reader):
    for url in _public_urls(mini_book):
        client.get(url)  # the anonymous copies are now cached
    client.force_login(reader)
    for url in _public_urls(mini_book):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Cache-Control"] == "private, no-store", url
        assert "ETag" not in response
        body = response.content.decode()
        assert "Sign out" in body and "x-csrftoken" in body, url  # their own header and token


def test_a_locked_capsule_is_private_for_anyone(client, mini_book):
    response = client.get(reverse("reading:capsule", kwargs={"slug": _locked(mini_book).slug}))
    assert response.status_code == 200
    assert response["Cache-Control"] == "private, no-store"
    assert "ETag" not in response


def test_a_visitor_with_a_session_is_not_given_a_shared_page(client, mini_book, settings):
    client.cookies[settings.SESSION_COOKIE_NAME] = "an-anonymous-session"
    response = client.get(reverse("pages:landing"))
    assert response["Cache-Control"] == "private, no-store"


def test_pages_are_rendered_when_the_cache_is_down(client, mini_book):
    with (
        mock.patch("config.caching.cache.get", side_effect=ConnectionError("redis down")),
        mock.patch("config.caching.cache.set", side_effect=ConnectionError("redis down")),
    ):
        for url in _public_urls(mini_book):
            assert client.get(url).status_code == 200, url


def test_a_process_reads_a_capsule_once_per_version_and_an_edit_or_unpublish_is_seen_at_once(mini_book):
    """catalog.capsule_get keeps the capsule in the process's memory per public version (signed-in pages, which are
    not shared, read it without a query); the version covers every capsule's save."""
    from django.http import Http404

    from apps.catalog.models import Capsule
    from apps.catalog.selectors import capsule_get

    locked = _locked(mini_book)
    assert capsule_get(locked.slug).title == locked.title
    with CaptureQueriesContext(connection) as queries:
        again = capsule_get(locked.slug)
    assert again.body_html == locked.body_html and again.part.title == locked.part.title
    assert not [q for q in queries if "catalog_capsule" in q["sql"] and "slug" in q["sql"]]  # the version only
    again.title = "Changed in this copy only"
    assert capsule_get(locked.slug).title == locked.title  # each call gets its own copy

    locked.title = "A Retitled Locked Capsule"
    capsule_save(capsule=locked)
    assert capsule_get(locked.slug).title == "A Retitled Locked Capsule"
    locked.status = Capsule.Status.DRAFT
    capsule_save(capsule=locked)
    with pytest.raises(Http404):
        capsule_get(locked.slug)


# A client chooses its Host (any port on an allowed host), its scheme header and, through a proxy that trusts it, a
# SCRIPT_NAME: none of them may make a kept page, or kept piece of one, that another visitor is given.
HOSTILE_REQUESTS = [
    {"SCRIPT_NAME": "/evil-prefix"},
    {"HTTP_HOST": "kernel.example.com:6666"},
    {"HTTP_HOST": "testserver:7777", "SCRIPT_NAME": "/evil-prefix"},
    {"HTTP_X_FORWARDED_PROTO": "gopher", "HTTP_X_FORWARDED_HOST": "evil.example.net"},
]


def _through_wsgi(path, **environ) -> str:
    """A request through Django's WSGI handler as gunicorn hands it over (the test client sets no script prefix)."""
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections
    from django.test import RequestFactory
    from django.urls import set_script_prefix

    chunks = []
    # As the test client does: the test's transaction must outlive the request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        result = WSGIHandler()(RequestFactory()._base_environ(PATH_INFO=path, **environ), lambda *args: None)
        chunks = list(result)
        result.close()
    finally:
        set_script_prefix("/")
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return b"".join(chunks).decode()


@pytest.mark.parametrize("hostile", HOSTILE_REQUESTS, ids=["script-name", "odd-port", "both", "forwarded"])
def test_a_script_name_or_odd_host_never_reaches_another_visitors_page(client, mini_book, hostile):
    from django.test import Client

    urls = [*_public_urls(mini_book), _locked(mini_book).get_absolute_url()]
    for url in urls:
        _through_wsgi(url, **hostile)  # first, so whatever it leaves is there for the next visitor
    for url in urls:
        body = Client().get(url).content.decode()
        assert "evil" not in body and ":6666" not in body and ":7777" not in body, url
    signed_in = Client()
    signed_in.force_login(make_reader(mini_book))
    body = signed_in.get(_locked(mini_book).get_absolute_url()).content.decode()
    assert "evil" not in body and ":6666" not in body and ":7777" not in body


def test_odd_hosts_share_one_kept_copy(client, mini_book):
    url = reverse("pages:landing")
    first = client.get(url)
    for port in range(6000, 6005):
        with CaptureQueriesContext(connection) as queries:
            again = client.get(url, HTTP_HOST=f"testserver:{port}")
        assert again.content == first.content and again["ETag"] == first["ETag"]
        assert len(queries) == 1  # the version's read: the page was not rendered again

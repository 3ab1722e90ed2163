"""The landing page and the reader cost a fixed number of SQL queries, however big the book."""

import pytest
from django.core.cache import caches
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.catalog.models import Capsule, Part
from apps.reading.models import ReadingProgress
from tests.subscriptions.visitors import make_visitor

MAX_QUERIES = 15  # the landing page's reviews block adds 3 (anonymous) to 5 (signed in) constant queries


def grow(book, parts=5, capsules_per_part=10, reader=None):
    start = book.capsules.count() + 1
    for p in range(parts):
        part = Part.objects.create(
            book=book, number=10 + p + book.parts.count(), slug=f"extra-{book.parts.count()}", title=f"Extra {p}"
        )
        for c in range(capsules_per_part):
            number = start + p * capsules_per_part + c
            capsule = Capsule.objects.create(
                book=book,
                part=part,
                number=number,
                slug=f"extra-{number}",
                title=f"Extra {number}",
                summary="s",
                body="b",
                body_html="<p>b</p>",
                access=Capsule.Access.LOCKED,
            )
            if reader is not None:
                ReadingProgress.objects.create(user=reader, capsule=capsule, position=0.5, furthest_position=0.5)


def count_queries(client, url):
    # A full render: an anonymous page may otherwise come from the public page cache, shared or this process's own
    # (config/caching.py, whose hits tests/pages/test_public_cache.py counts).
    for each in caches.all():
        each.clear()
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


@pytest.mark.parametrize(
    "kind, url",
    [
        ("anonymous", "/"),
        ("anonymous", "/capsules/locked-two/"),
        ("active", "/"),
        ("active", "/capsules/locked-two/"),
        ("active", "/progress/"),
    ],
)
def test_pages_make_a_constant_small_number_of_queries(mini_book, kind, url):
    client = Client()
    visitor = make_visitor(kind)
    if visitor.is_authenticated:
        client.force_login(visitor)
    reader = visitor if visitor.is_authenticated else None
    client.get(url)  # warm per-process caches (site, content types)
    small = count_queries(client, url)
    grow(mini_book, reader=reader)
    large = count_queries(client, url)
    grow(mini_book, parts=3, capsules_per_part=20, reader=reader)
    larger = count_queries(client, url)
    assert small == large == larger <= MAX_QUERIES, (small, large, larger)

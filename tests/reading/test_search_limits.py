"""Issue 20: search runs on stored, indexed vectors (PostgreSQL), refuses over-long queries with a
reason, and slows a client that searches too often (429), failing open when the cache is down."""

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.catalog.models import Capsule
from apps.reading.fts_postgres import SEARCH_DOCUMENT, SEARCH_PUBLIC, index_name
from apps.reading.search import QUERY_MAX_CHARS, capsule_search
from tests.subscriptions.visitors import client_for, make_visitor


@pytest.fixture
def on_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only")


def test_searches_use_the_stored_vectors_through_their_gin_indexes(on_postgres, mini_book):
    with CaptureQueriesContext(connection) as captured:
        assert [hit.capsule.slug for hit in capsule_search(make_visitor("free"), "tiles")]
    searches = [q["sql"] for q in captured.captured_queries if "@@" in q["sql"]]
    assert len(searches) == 2  # readable capsules (whole text), the others (title and summary)
    plans = []
    with transaction.atomic(), connection.cursor() as cursor:
        # Three rows are cheaper to scan than to look up: ask the planner for a plan without scanning every
        # row (a GIN index serves bitmap scans only), which the indexes make possible.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        for sql in searches:
            cursor.execute("EXPLAIN " + sql)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    assert index_name(SEARCH_DOCUMENT) in plans[0] and "to_tsvector" not in searches[0]
    assert index_name(SEARCH_PUBLIC) in plans[1] and "to_tsvector" not in searches[1]


def test_the_stored_vectors_follow_every_write(on_postgres, mini_book):
    capsule = Capsule.objects.get(slug="free-one")
    with connection.cursor() as cursor:  # not through Django: the database keeps them current itself
        cursor.execute("UPDATE catalog_capsule SET body_text = 'spilled registers' WHERE id = %s", [capsule.pk])
    assert [hit.capsule.slug for hit in capsule_search(make_visitor("anonymous"), "spilled")] == ["free-one"]
    Capsule.objects.filter(pk=capsule.pk).update(title="Occupancy")
    assert [hit.capsule.slug for hit in capsule_search(make_visitor("anonymous"), "occupancy")] == ["free-one"]


def test_an_over_long_query_is_refused_with_the_reason(mini_book):
    response = Client().get("/search/", {"q": "tiles " * 60})
    body = response.content.decode()
    assert response.status_code == 400
    assert f"Searches are limited to {QUERY_MAX_CHARS} characters and yours has 359" in body
    assert 'class="search-result__title"' not in body
    assert Client().get("/search/", {"q": "t" * QUERY_MAX_CHARS}).status_code == 200


def test_searching_too_often_answers_429_per_client(mini_book, settings, monkeypatch):
    settings.READING_SEARCH_RATE = (3, 60)
    # Within one fixed window, whenever the test runs (a window ending mid-test would start the count anew).
    monkeypatch.setattr("apps.accounts.ratelimit.time.time", lambda: 1_800_000_010.0)
    cache.clear()
    anonymous, reader = Client(), client_for("free")
    for _ in range(3):
        assert anonymous.get("/search/", {"q": "tiles"}).status_code == 200
    response = anonymous.get("/search/", {"q": "tiles"})
    body = response.content.decode()
    assert response.status_code == 429 and response["Retry-After"] == "50"
    assert "searches are limited for a moment" in body and 'class="search-result__title"' not in body
    assert anonymous.get("/search/").status_code == 200  # the empty form is not a search
    assert reader.get("/search/", {"q": "tiles"}).status_code == 200  # a signed-in reader counts apart


def test_behind_the_trusted_proxy_each_client_has_its_own_search_limit(mini_book, settings, monkeypatch):
    settings.READING_SEARCH_RATE = (3, 60)
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    monkeypatch.setattr("apps.accounts.ratelimit.time.time", lambda: 1_800_000_010.0)
    cache.clear()
    first = Client(REMOTE_ADDR="127.0.0.1", headers={"X-Forwarded-For": "203.0.113.7"})
    second = Client(REMOTE_ADDR="127.0.0.1", headers={"X-Forwarded-For": "198.51.100.66"})
    for _ in range(3):
        assert first.get("/search/", {"q": "tiles"}).status_code == 200
    assert first.get("/search/", {"q": "tiles"}).status_code == 429
    assert second.get("/search/", {"q": "tiles"}).status_code == 200  # was 429: one address for everyone
    spoofing = Client(REMOTE_ADDR="127.0.0.1", headers={"X-Forwarded-For": "10.9.9.9, 203.0.113.7"})
    assert spoofing.get("/search/", {"q": "tiles"}).status_code == 429  # its own entry is not believed


def test_the_search_limit_fails_open_without_the_cache(mini_book, settings, monkeypatch, caplog):
    from redis.exceptions import ConnectionError as RedisConnectionError

    settings.READING_SEARCH_RATE = (1, 60)

    def unreachable(*args, **kwargs):
        raise RedisConnectionError("Redis is down")

    monkeypatch.setattr(cache, "add", unreachable)
    monkeypatch.setattr(cache, "incr", unreachable)
    client = Client()
    for _ in range(3):
        response = client.get("/search/", {"q": "tiles"})
        assert response.status_code == 200 and 'class="search-result__title"' in response.content.decode()
    assert "rate limit search skipped" in caplog.text

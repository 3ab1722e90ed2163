"""Search on SQLite, the `make run` default: FTS5 with the Porter stemmer, kept in step by triggers.

The suite runs on PostgreSQL; `test_search_and_the_access_matrix_pass_on_sqlite` runs the search tests, the sessions,
the access matrix and this file again in a pytest of their own on SQLite, so `make test` covers both."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from apps.catalog.models import Capsule
from apps.reading.fts_sqlite import FTS_TABLE, PUBLIC_FTS_TABLE
from apps.reading.search import capsule_search
from tests.subscriptions.visitors import make_visitor

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def on_sqlite():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite only (runs in test_search_and_the_access_matrix_pass_on_sqlite)")


def _found(kind: str, query: str) -> list[str]:
    return [hit.capsule.slug for hit in capsule_search(make_visitor(kind), query)]


def _triggers() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'catalog_capsule'")
        return {row[0] for row in cursor.fetchall()}


def test_every_kind_of_write_reaches_the_index(on_sqlite, mini_book):
    capsule = Capsule.objects.get(slug="free-one")
    capsule.body_text = "registers spill to local memory"
    capsule.save()
    assert _found("anonymous", "spilled") == ["free-one"]
    Capsule.objects.filter(pk=capsule.pk).update(body_text="occupancy limits")  # no save(), no signal
    assert _found("anonymous", "spilled") == [] and _found("anonymous", "occupancy") == ["free-one"]
    with connection.cursor() as cursor:
        cursor.execute("UPDATE catalog_capsule SET title = 'Bank conflicts' WHERE id = %s", [capsule.pk])
    assert _found("anonymous", "conflict") == ["free-one"]
    Capsule.objects.filter(pk=capsule.pk).delete()
    assert _found("anonymous", "occupancy") == []
    with connection.cursor() as cursor:  # and the indexes hold what the table holds, nothing more
        for table in (FTS_TABLE, PUBLIC_FTS_TABLE):
            cursor.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")


def test_migrate_puts_back_triggers_that_a_table_rebuild_dropped(on_sqlite, mini_book):
    # Django's SQLite schema editor rebuilds a table to alter it, and the old table's triggers go with it.
    assert len(_triggers()) == 3
    with connection.cursor() as cursor:
        for name in _triggers():
            cursor.execute(f"DROP TRIGGER {name}")
    Capsule.objects.filter(slug="free-one").update(summary="Written while the triggers were gone: prefetching.")
    assert _found("anonymous", "prefetch") == []  # stale, as it would be after such a migration

    call_command("migrate", verbosity=0)

    assert len(_triggers()) == 3
    assert _found("anonymous", "prefetch") == ["free-one"]  # rebuilt from the table
    Capsule.objects.filter(slug="free-one").update(summary="Vectorised loads.")
    assert _found("anonymous", "vectorised load") == ["free-one"]  # the triggers work again


def test_the_index_is_undone_with_the_migration(on_sqlite, transactional_db):
    # Outside a test transaction: SQLite's schema editor refuses to run inside one.
    call_command("migrate", "reading", "0002", verbosity=0)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT name FROM sqlite_master WHERE name LIKE %s", ["reading_capsule_%fts%"])
            assert cursor.fetchall() == []
    finally:
        call_command("migrate", "reading", verbosity=0)
    assert len(_triggers()) == 3


@pytest.mark.slow
def test_search_and_the_access_matrix_pass_on_sqlite(tmp_path):
    if os.environ.get("DATABASE_URL", "").startswith("sqlite"):
        pytest.skip("already on SQLite")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("PYTEST_XDIST_WORKER", None)  # a pytest of its own, not one of this run's workers
    tests = [
        "tests/reading/test_search.py",
        "tests/reading/test_access_matrix.py",
        "tests/subscriptions/test_access.py",
        "tests/accounts/test_sessions.py",
        __file__,
    ]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *tests],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    # The SQLite-only tests ran there: only this test skipped itself.
    assert re.search(r"\b1 skipped\b", result.stdout.splitlines()[-1]), result.stdout[-1000:]


@pytest.mark.slow  # imports the whole demo book
def test_the_demo_book_finds_both_coalescing_capsules_for_coalesced(db):
    # The defect of issue 17, on the demo book itself: under `make run` "coalesced" found neither.
    from apps.catalog.services import book_import

    book_import(folder=ROOT / "content" / "kernel-engineering")
    found = capsule_search(make_visitor("anonymous"), "coalesced")
    slugs = [hit.capsule.slug for hit in found]
    assert {"memory-coalescing", "kernel-2-coalescing"} <= set(slugs)
    by_slug = {hit.capsule.slug: hit for hit in found}
    assert "<mark>coalescing</mark>" in by_slug["memory-coalescing"].snippet
    assert "<mark>coalescing</mark>" in by_slug["kernel-2-coalescing"].title_html.lower()

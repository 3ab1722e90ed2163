"""SQLite (the `make run` default) under the web server and the worker at once (issue 20): WAL, so that
readers do not wait for a writer, a busy timeout, and transactions that take the write lock at BEGIN."""

from django.db.utils import ConnectionHandler

from config.settings.base import SQLITE_BUSY_TIMEOUT_MS, database_from_env


def test_a_sqlite_url_gets_wal_a_busy_timeout_and_immediate_transactions(monkeypatch, tmp_path, django_db_blocker):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    databases = database_from_env(f"sqlite:///{tmp_path / 'db.sqlite3'}")

    wrapper = ConnectionHandler(databases)["default"]  # what Django makes of the setting
    with django_db_blocker.unblock():
        try:
            with wrapper.cursor() as cursor:
                assert cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
                assert cursor.execute("PRAGMA busy_timeout").fetchone()[0] == SQLITE_BUSY_TIMEOUT_MS
            assert wrapper.transaction_mode == "IMMEDIATE"
        finally:
            wrapper.close()


def test_other_databases_get_no_sqlite_options(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres:postgres@127.0.0.1:5432/anything")
    assert database_from_env("sqlite:///unused.sqlite3")["default"].get("OPTIONS", {}) == {}

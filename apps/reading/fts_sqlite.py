"""SQLite's full-text indexes of the capsules (FTS5, Porter stemmer), for search under `make run`.

Two external-content FTS5 tables over catalog_capsule: FTS_TABLE indexes title, summary and
body_text (searched for capsules the searcher may read), PUBLIC_FTS_TABLE only title and summary
(searched for the others). They store only the index; FTS5 reads the text itself from
catalog_capsule by id for snippets. The public one exists so that nothing about a locked body
reaches a searcher who may not read it, not even through ranking: FTS5's bm25 normalises by the
length of the whole indexed row, so the full index would rank a locked capsule by its body's length.

Triggers on catalog_capsule keep both in step with every write, whichever way it is made (the
catalogue's services, admin, QuerySet.update(), bulk_create, a raw UPDATE), inside the writer's
transaction, so a rolled-back write leaves no trace in the indexes either.

Installed by reading's migration 0003 on SQLite only (PostgreSQL searches with its own full-text
functions, no table needed), and made sure of again after every `migrate` (ReadingConfig.ready):
when a later migration alters catalog_capsule, Django's SQLite schema editor rebuilds the table
(create a new one, copy, drop the old, rename), and dropping the old table drops our triggers with
it. After any migrate the triggers are written anew and the indexes rebuilt from the table
(milliseconds for a book), so they can never stay stale.
"""

FTS_TABLE = "reading_capsule_fts"
PUBLIC_FTS_TABLE = "reading_capsule_public_fts"
_CONTENT_TABLE = "catalog_capsule"
# Column names as in catalog_capsule: FTS5 reads the text there by these names.
_INDEXES = {FTS_TABLE: ("title", "summary", "body_text"), PUBLIC_FTS_TABLE: ("title", "summary")}
_WATCHED = ("id", "title", "summary", "body_text")
_TRIGGER_NAMES = {"insert": f"{FTS_TABLE}_insert", "delete": f"{FTS_TABLE}_delete", "update": f"{FTS_TABLE}_update"}


def _index_row(table: str, row: str) -> str:
    """The statement that adds `row` (new or old) to `table`'s index."""
    columns = _INDEXES[table]
    values = ", ".join(f"{row}.{c}" for c in columns)
    return f"INSERT INTO {table}(rowid, {', '.join(columns)}) VALUES ({row}.id, {values});"


def _unindex_row(table: str) -> str:
    # An external-content table's 'delete' command must be given the values the row was indexed
    # with: the old ones, which the trigger still has.
    columns = _INDEXES[table]
    values = ", ".join(f"old.{c}" for c in columns)
    return f"INSERT INTO {table}({table}, rowid, {', '.join(columns)}) VALUES ('delete', old.id, {values});"


def _trigger_sql() -> dict[str, str]:
    added = " ".join(_index_row(table, "new") for table in _INDEXES)
    removed = " ".join(_unindex_row(table) for table in _INDEXES)
    on = _CONTENT_TABLE
    return {
        _TRIGGER_NAMES["insert"]: f"AFTER INSERT ON {on} BEGIN {added} END",
        _TRIGGER_NAMES["delete"]: f"AFTER DELETE ON {on} BEGIN {removed} END",
        _TRIGGER_NAMES["update"]: f"AFTER UPDATE OF {', '.join(_WATCHED)} ON {on} BEGIN {removed} {added} END",
    }


def _table_exists(cursor, name: str) -> bool:
    cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [name])
    return cursor.fetchone() is not None


def fts_install(connection) -> None:
    """Create the index tables where missing, write the triggers anew (so that an older definition
    never lingers), then rebuild the indexes from the table. Idempotent; a no-op on other databases."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for table, columns in _INDEXES.items():
            cursor.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5({', '.join(columns)}, "
                f"content='{_CONTENT_TABLE}', content_rowid='id', "
                # Porter over unicode61: stems English words ("coalesced" ~ "coalescing"), folds case and accents.
                "tokenize='porter unicode61 remove_diacritics 2')"
            )
        for name, body in _trigger_sql().items():
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
            cursor.execute(f"CREATE TRIGGER {name} {body}")
        for table in _INDEXES:
            cursor.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")


def fts_uninstall(connection) -> None:
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for name in _TRIGGER_NAMES.values():
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
        for table in _INDEXES:
            cursor.execute(f"DROP TABLE IF EXISTS {table}")


def fts_repair_after_migrate(*, using: str, **kwargs) -> None:
    """post_migrate: triggers and indexes made sure of, where the migration that made them is applied.

    After `migrate reading 0002` (or zero) the tables are gone and stay gone."""
    from django.db import connections

    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        installed = _table_exists(cursor, FTS_TABLE)
    if installed:
        fts_install(connection)

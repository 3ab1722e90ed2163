"""SQLite's full-text index of the capsules (FTS5, Porter stemmer), for search under `make run`.

An external-content FTS5 table over catalog_capsule's public and readable text (title, summary,
body_text): it stores only the index, and FTS5 reads the text itself from catalog_capsule by id
for snippets. Triggers on catalog_capsule keep it in step with every write, whichever way it is
made (the catalogue's services, admin, QuerySet.update(), bulk_create, a raw UPDATE), inside the
writer's transaction, so a rolled-back write leaves no trace in the index either.

Installed by reading's migration 0003 on SQLite only (PostgreSQL searches with its own full-text
functions, no table needed), and made sure of again after every `migrate` (ReadingConfig.ready):
when a later migration alters catalog_capsule, Django's SQLite schema editor rebuilds the table
(create a new one, copy, drop the old, rename), and dropping the old table drops our triggers with
it. After any migrate the triggers are created where missing and the index is rebuilt from the
table (milliseconds for a book), so it can never stay stale.
"""

FTS_TABLE = "reading_capsule_fts"
_CONTENT_TABLE = "catalog_capsule"
_COLUMNS = ("title", "summary", "body_text")  # same names as catalog_capsule's: FTS5 reads them there

_new = ", ".join(f"new.{c}" for c in _COLUMNS)
_old = ", ".join(f"old.{c}" for c in _COLUMNS)
_cols = ", ".join(_COLUMNS)
# The 'delete' command of an external-content table must be given the values the row was indexed
# with: the old ones, which the trigger still has.
_TRIGGERS = {
    f"{FTS_TABLE}_insert": (
        f"AFTER INSERT ON {_CONTENT_TABLE} BEGIN INSERT INTO {FTS_TABLE}(rowid, {_cols}) VALUES (new.id, {_new}); END"
    ),
    f"{FTS_TABLE}_delete": (
        f"AFTER DELETE ON {_CONTENT_TABLE} BEGIN "
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {_cols}) VALUES ('delete', old.id, {_old}); END"
    ),
    f"{FTS_TABLE}_update": (
        f"AFTER UPDATE OF id, {_cols} ON {_CONTENT_TABLE} BEGIN "
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {_cols}) VALUES ('delete', old.id, {_old}); "
        f"INSERT INTO {FTS_TABLE}(rowid, {_cols}) VALUES (new.id, {_new}); END"
    ),
}


def _table_exists(cursor) -> bool:
    cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [FTS_TABLE])
    return cursor.fetchone() is not None


def fts_install(connection) -> None:
    """Create the index table and its triggers where missing, then (re)build the index from the table.

    Idempotent; a no-op on databases other than SQLite."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5({_cols}, "
            f"content='{_CONTENT_TABLE}', content_rowid='id', "
            # Porter over unicode61: stems English words ("coalesced" ~ "coalescing"), folds case and accents.
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        for name, body in _TRIGGERS.items():
            cursor.execute(f"CREATE TRIGGER IF NOT EXISTS {name} {body}")
        cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")


def fts_uninstall(connection) -> None:
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for name in _TRIGGERS:
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
        cursor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")


def fts_repair_after_migrate(*, using: str, **kwargs) -> None:
    """post_migrate: triggers back and the index rebuilt, where the migration that made the table is applied.

    After `migrate reading 0002` (or zero) the table is gone and stays gone."""
    from django.db import connections

    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        installed = _table_exists(cursor)
    if installed:
        fts_install(connection)

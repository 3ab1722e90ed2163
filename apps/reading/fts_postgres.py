"""PostgreSQL's stored, indexed search vectors of the capsules, for search in production.

Two generated columns on catalog_capsule, each with a GIN index:

- SEARCH_DOCUMENT: title (weight A), summary (B) and body_text (C), searched for capsules the
  searcher may read;
- SEARCH_PUBLIC: title (A) and summary (B) only, searched for the others, so that nothing of a
  locked body reaches a searcher who may not read it, not even its ranking (as the public FTS5
  index does on SQLite, apps/reading/fts_sqlite.py).

They are the same vectors apps/reading/search.py computed per query before (Django's SearchVector
with the `english` configuration, weights concatenated), so ranks and matches are unchanged; stored,
they are computed once per write and matched through the index instead of once per row and query.
Generated columns (STORED) are kept current by PostgreSQL itself on every write, whichever way it is
made (the catalogue's services, admin, QuerySet.update(), a raw UPDATE), in the writer's transaction.

They are not fields of the Capsule model: every other query of capsules (the landing page lists them
all) would otherwise load the whole body's vector. search.py names them with StoredVector. Installed
by reading's migration 0004 on PostgreSQL only (SQLite has its FTS5 tables instead). A later migration
that changes the type of title, summary or body_text must drop these columns first and install them
again after (PostgreSQL refuses to alter a column that a generated column reads).
"""

from django.contrib.postgres.search import SearchVectorField
from django.db.models import Expression

SEARCH_DOCUMENT = "search_document"
SEARCH_PUBLIC = "search_public"
_TABLE = "catalog_capsule"
_CONFIG = "'english'::regconfig"
_WEIGHTED = {"title": "A", "summary": "B", "body_text": "C"}
_COLUMNS = {SEARCH_DOCUMENT: ("title", "summary", "body_text"), SEARCH_PUBLIC: ("title", "summary")}


def _vector_sql(fields) -> str:
    return " || ".join(
        f"setweight(to_tsvector({_CONFIG}, COALESCE({field}, '')), '{_WEIGHTED[field]}')" for field in fields
    )


def index_name(column: str) -> str:
    return f"reading_capsule_{column}_gin"


def fts_install(connection) -> None:
    """Adds the columns and their indexes where missing. Idempotent; a no-op on other databases."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for column, fields in _COLUMNS.items():
            cursor.execute(
                f"ALTER TABLE {_TABLE} ADD COLUMN IF NOT EXISTS {column} tsvector "
                f"GENERATED ALWAYS AS ({_vector_sql(fields)}) STORED"
            )
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {index_name(column)} ON {_TABLE} USING gin ({column})")


def fts_uninstall(connection) -> None:
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for column in _COLUMNS:
            cursor.execute(f"ALTER TABLE {_TABLE} DROP COLUMN IF EXISTS {column}")  # its index goes with it


class StoredVector(Expression):
    """One of the stored columns above, on the query's own capsule table: for filters (`@@`, through
    the index) and SearchRank. Not selected unless annotated; use QuerySet.alias()."""

    def __init__(self, column: str):
        if column not in _COLUMNS:
            raise ValueError(f"no stored search vector {column!r}")
        super().__init__(output_field=SearchVectorField())
        self.column = column
        self.table_alias = None

    def resolve_expression(self, query=None, allow_joins=True, reuse=None, summarize=False, for_save=False):
        resolved = self.copy()
        resolved.table_alias = query.get_initial_alias()
        return resolved

    def relabeled_clone(self, change_map):
        clone = self.copy()
        clone.table_alias = change_map.get(self.table_alias, self.table_alias)
        return clone

    def as_sql(self, compiler, connection):
        if connection.vendor != "postgresql":
            raise NotImplementedError("stored search vectors exist on PostgreSQL only")
        return f"{compiler.quote_name_unless_alias(self.table_alias)}.{connection.ops.quote_name(self.column)}", []

    def get_group_by_cols(self):
        return [self]

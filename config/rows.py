"""Model instances from the rows of a written-out statement, as the ORM would make them.

The hottest signed-in reads (the session with its reader, a reader's access with their progress) are single SQL
statements written out, because building them with the ORM cost more than running them (bench/page_cost.py). Reading
their rows through RawQuerySet gave back a third of that: it works out the columns' order and the model's init order
on every call. Here that is done once per process: a statement selects `Columns(model, fields).select(alias)` for
each model it reads, and `instances(row, *columns)` turns the row into those models' instances, applying the same
converters the ORM applies (SQLite's dates and booleans, for instance). They run on `hot_cursor()`: prepared on
PostgreSQL (config.postgresql), Django's own cursor elsewhere.
"""

from dataclasses import dataclass
from functools import cache

from django.db import connection
from django.db.models import Model


@dataclass(frozen=True)
class Columns:
    """Some concrete fields of one model, in the order a statement selects them (all of them by default)."""

    model: type[Model]
    fields: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return self.fields or tuple(field.attname for field in self.model._meta.concrete_fields)

    def select(self, alias: str) -> str:
        return ", ".join(f"{alias}.{name}" for name in self.names)


def hot_cursor():
    """A cursor for a statement that runs on every signed-in request."""
    prepared = getattr(connection, "hot_cursor", None)
    return prepared() if prepared is not None else connection.cursor()


def instances(row, *columns: Columns) -> list[Model | None]:
    """One instance per Columns, from consecutive values of `row`; None for a model whose primary key is NULL (the
    outer join found no row). Values past the last Columns are left to the caller."""
    made, start = [], 0
    for part in columns:
        names, converters = _converters(part)
        end = start + len(names)
        values = [_converted(value, converter) for value, converter in zip(row[start:end], converters, strict=True)]
        start = end
        pk_value = values[names.index(part.model._meta.pk.attname)]
        made.append(None if pk_value is None else part.model.from_db(connection.alias, names, values))
    return made


def _converted(value, column_converters):
    column, functions = column_converters
    for function in functions:
        value = function(value, column, connection)
    return value


@cache
def _converters(part: Columns) -> tuple[tuple[str, ...], list[tuple]]:
    """The field names and, for each, its column with the ORM's converters: worked out once per process (one
    database vendor per process), not on every row."""
    meta = part.model._meta
    names = part.names
    columns = [meta.get_field(name).get_col(meta.db_table) for name in names]
    return names, [
        (column, connection.ops.get_db_converters(column) + column.get_db_converters(connection)) for column in columns
    ]

"""PostgreSQL's guard on the reader's entitlement columns (access_source, access_from, access_until, access_reason,
trial_used_at): only a transaction that names the reader it writes may change them (ARCHITECTURE.md, "What the
database enforces").

The entitlement service (apps/subscriptions/services/entitlement.py) is their one writer. That used to be a
convention: `User.save()` leaves the columns out, but any `QuerySet.update()`, a raw UPDATE or a future command
could still have written access that no subscription or grant gives. A trigger now refuses such a write in the
database, whichever way it is made: a row's entitlement columns change only inside `entitlement_write(user_id)`,
which sets a transaction-local setting to that reader's id (`set_config(..., true)`); every other change, and a new
row inserted with any access, fails with an IntegrityError. Reading is untouched.

Restores: pg_restore of a whole dump creates the trigger after the data, so readers come back with their access; a
data-only restore (or `loaddata` of readers with access) needs `pg_restore --disable-triggers`, as a superuser.

Installed by subscriptions' migration 0005 on PostgreSQL only. SQLite (`make run`'s embedded default) has no
transaction-local settings: there the service's writes go through as before, guarded by code alone.
"""

from contextlib import contextmanager

from django.db import connection, transaction

SETTING = "kernel.entitlement_writer"
_TABLE = "accounts_user"
_FUNCTION = "accounts_user_entitlement_guard"
_TRIGGER = "accounts_user_entitlement_guard"
# Each guarded column, with the value a reader without access has in it (what an insert must leave there).
_EMPTY = {
    "access_source": "''",
    "access_from": "NULL",
    "access_until": "NULL",
    "access_reason": "''",
    "trial_used_at": "NULL",
}
_COLUMNS = tuple(_EMPTY)

_GUARD_SQL = f"""
CREATE OR REPLACE FUNCTION {_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF {" OR ".join(f"NEW.{c} IS DISTINCT FROM {empty}" for c, empty in _EMPTY.items())} THEN
            RAISE EXCEPTION 'a new reader starts without access: the entitlement service writes it (%)', '{_FUNCTION}'
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
    ELSIF ({", ".join(f"NEW.{c}" for c in _COLUMNS)}) IS DISTINCT FROM ({", ".join(f"OLD.{c}" for c in _COLUMNS)})
          AND COALESCE(current_setting('{SETTING}', true), '') <> OLD.id::text THEN
        RAISE EXCEPTION 'the access of reader % is written by the entitlement service only (%)', OLD.id, '{_FUNCTION}'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;
DROP TRIGGER IF EXISTS {_TRIGGER} ON {_TABLE};
CREATE TRIGGER {_TRIGGER} BEFORE INSERT OR UPDATE ON {_TABLE} FOR EACH ROW EXECUTE FUNCTION {_FUNCTION}();
"""


def guard_install(db) -> None:
    if db.vendor == "postgresql":
        with db.cursor() as cursor:
            cursor.execute(_GUARD_SQL)


def guard_uninstall(db) -> None:
    if db.vendor == "postgresql":
        with db.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER IF EXISTS {_TRIGGER} ON {_TABLE}; DROP FUNCTION IF EXISTS {_FUNCTION}();")


@contextmanager
def entitlement_write(user_id):
    """Lets the block change this one reader's entitlement columns, in a transaction (a savepoint inside the
    caller's): a block that fails rolls the permission back with its writes, one that ends withdraws it."""
    if connection.vendor != "postgresql":
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, true)", [SETTING, str(user_id)])
        yield
        cursor.execute("SELECT set_config(%s, '', true)", [SETTING])

"""Django's PostgreSQL backend, with the health check of a persistent connection skipped while it is busy, and
prepared statements for the few statements every signed-in request runs.

With CONN_HEALTH_CHECKS, Django runs `SELECT 1` before the first query of every request, so that a connection
broken by a database restart is replaced instead of failing the request (tests/outages/test_postgres_restart.py).
Under load that was one round trip in five of a signed-in page and a tenth of its time in the server (py-spy on
gunicorn during bench/load.py). A connection that finished a request without error less than
DB_HEALTH_CHECK_IDLE_MS ago is trusted instead: a restart takes longer than that, and a connection idle for longer
is checked as before. What is given up: a connection killed within that moment fails the request that next uses
it, as it would without health checks, and is then closed by Django.

Django binds parameters on the client and never prepares, so PostgreSQL parses and plans each statement anew. For the
session with its reader and a reader's access with their progress (config.rows.hot_cursor) planning was most of the
database's work: 0.35 -> 0.12 ms a round trip for the access statement once prepared, in one process. `hot_cursor`
binds on the server, and psycopg prepares a statement on a connection after DB_PREPARE_THRESHOLD executions; every
other query keeps Django's client-side binding, which never prepares. A pooler that cannot keep prepared statements
(PgBouncer in transaction mode before 1.21) needs DB_PREPARE_THRESHOLD empty: hot statements are then bound on the
server but not prepared.
"""

import time

from django.conf import settings
from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        # Django reads the text of a client-bound query from the cursor; a hot_cursor's is composed as it would be.
        if isinstance(cursor, base.ServerBindingCursor) and not self.connection.features.uses_server_side_binding:
            return self.compose_sql(sql, params)
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
    finished_cleanly_at = float("-inf")  # when the last request on this connection ended without an error

    def get_connection_params(self):
        params = super().get_connection_params()
        if "prepare_threshold" not in self.settings_dict["OPTIONS"]:  # Django's default disables preparing
            params["prepare_threshold"] = settings.DB_PREPARE_THRESHOLD
        return params

    def hot_cursor(self):
        """Django's cursor (logged, errors wrapped, health-checked as any) on a cursor that binds on the server, so
        that psycopg may prepare what it runs."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            return self._prepare_cursor(base.ServerBindingCursor(self.connection))

    def close_if_health_check_failed(self):
        recently_fine = time.monotonic() - self.finished_cleanly_at < settings.DB_HEALTH_CHECK_IDLE_MS / 1000
        if self.connection is not None and self.health_check_enabled and recently_fine:
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def close_if_unusable_or_obsolete(self):
        # Django's step at the start and at the end of each request. health_check_done is True when the connection
        # was used since the last call (set on the first query, reset by this step), so only the end of a request
        # that used it, without an error, counts as a sign of health.
        used, fine = self.health_check_done, not self.errors_occurred
        super().close_if_unusable_or_obsolete()
        if self.connection is None or not fine:
            self.finished_cleanly_at = float("-inf")
        elif used:
            self.finished_cleanly_at = time.monotonic()

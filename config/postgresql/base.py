"""Django's PostgreSQL backend, with the health check of a persistent connection skipped while it is busy.

With CONN_HEALTH_CHECKS, Django runs `SELECT 1` before the first query of every request, so that a connection
broken by a database restart is replaced instead of failing the request (tests/outages/test_postgres_restart.py).
Under load that was one round trip in five of a signed-in page and a tenth of its time in the server (py-spy on
gunicorn during bench/load.py). A connection that finished a request without error less than
DB_HEALTH_CHECK_IDLE_MS ago is trusted instead: a restart takes longer than that, and a connection idle for longer
is checked as before. What is given up: a connection killed within that moment fails the request that next uses
it, as it would without health checks, and is then closed by Django.
"""

import time

from django.conf import settings
from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    finished_cleanly_at = float("-inf")  # when the last request on this connection ended without an error

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

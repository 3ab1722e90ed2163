"""Database sessions (Django's), read with the statement itself.

Every signed-in request reads its session first. The ORM took about twice as long to build that one query as the
database took to answer it (0.52 ms against 0.28 in one process, bench/load.py's profile), so the read is written
out; everything else (writing, expiry, cycling the key at sign-in, clearsessions) is Django's own.
"""

from django.contrib.sessions.backends import db
from django.db import connection
from django.utils import timezone


class SessionStore(db.SessionStore):
    def _get_session_from_db(self):
        if self.session_key is None:  # absent or refused by the key's validation
            return None
        table = self.model._meta.db_table
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        statement = f"SELECT * FROM {table} WHERE session_key = %s AND expire_date > %s"
        session = next(iter(self.model.objects.raw(statement, [self.session_key, now])), None)
        if session is None:
            self._session_key = None  # as Django's: a missing or expired session gets a new key when saved
        return session

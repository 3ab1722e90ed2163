"""Database sessions (Django's), each stored with its signed-in reader's id and read together with that reader.

Every signed-in request reads its session, then its reader (Django's AuthenticationMiddleware). Two round trips, and
the ORM took about twice as long to build each query as the database to answer it (bench/page_cost.py), so the
session is read with one written-out statement that also brings the reader's row (apps.accounts.models.Session keeps
the id beside the data). `session_user` hands that row to the request only where Django's own `get_user` would
return that very user; in every other case Django's decides. Writing, expiry, cycling the key at sign-in and
clearsessions are Django's own.
"""

from functools import cache

from django.conf import settings
from django.contrib import auth
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.backends import db
from django.db import connection
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from apps.accounts.models import Session, User
from config.rows import Columns, hot_cursor, instances

SESSION = Columns(Session, ("session_key", "session_data", "expire_date", "user_id"))
READER = Columns(User)


class SessionStore(db.SessionStore):
    signed_in_user = None  # the reader named by the session, read with it; None when there is none

    @classmethod
    def get_model_class(cls):
        return Session

    def create_model_instance(self, data):
        session = super().create_model_instance(data)
        session.user_id = _user_id(data.get(auth.SESSION_KEY))
        return session

    def _get_session_from_db(self):
        self.signed_in_user = None
        if self.session_key is None:  # absent or refused by the key's validation
            return None
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with hot_cursor() as cursor:
            cursor.execute(_statement(), [self.session_key, now])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None  # as Django's: a missing or expired session gets a new key when saved
            return None
        session, self.signed_in_user = instances(row, SESSION, READER)
        return session


@cache
def _statement() -> str:
    return (
        f"SELECT {SESSION.select('s')}, {READER.select('u')} FROM {Session._meta.db_table} s"
        f" LEFT JOIN {User._meta.db_table} u ON u.id = s.user_id WHERE s.session_key = %s AND s.expire_date > %s"
    )


def _user_id(value):
    try:
        return User._meta.pk.to_python(value) if value is not None else None
    except Exception:  # not an id this table can hold: no reader column, Django's get_user decides as ever
        return None


def session_user(request):
    """The request's reader: the row read with the session when Django's get_user would return exactly that user (the
    session names them, its backend is configured and fetches users as ModelBackend does, the reader may sign in,
    and the session's hash matches the current password and secret); otherwise Django's get_user, which checks the
    fallback secrets, flushes a session that no longer verifies and queries the reader itself."""
    session = request.session
    user_id = _user_id(session.get(auth.SESSION_KEY))  # first: reading a key loads the session, and its reader
    user = getattr(session, "signed_in_user", None)
    if user is not None and user_id == user.pk and _verified(session, user):
        return user
    return auth.get_user(request)


def _verified(session, user) -> bool:
    backend_path = session.get(auth.BACKEND_SESSION_KEY)
    if backend_path not in settings.AUTHENTICATION_BACKENDS:
        return False
    backend = auth.load_backend(backend_path)
    return (
        isinstance(backend, ModelBackend)
        and type(backend).get_user is ModelBackend.get_user
        and backend.user_can_authenticate(user)
        and constant_time_compare(session.get(auth.HASH_SESSION_KEY) or "", user.get_session_auth_hash())
    )

"""config.postgresql: a persistent connection is health-checked (Django's `SELECT 1`) before a request only when it
has been idle, or its last request had an error; one that ended a request cleanly a moment ago is trusted. The
restart itself is tests/outages/test_postgres_restart.py."""

from unittest import mock

import pytest
from django.db import connections

pytestmark = pytest.mark.django_db(transaction=True)  # autocommit, as in a request: Django keeps the connection

connection = connections["default"]  # the wrapper itself (django.db.connection is a proxy to it)


def _a_request(*, fail: bool = False) -> None:
    """What Django does around a request that queries: its start and end steps, and a query in between."""
    connection.close_if_unusable_or_obsolete()
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table" if fail else "SELECT 1")  # not a DataError: one Django counts
    connection.close_if_unusable_or_obsolete()


def _checks_during(request) -> int:
    with mock.patch.object(type(connection), "is_usable", autospec=True, return_value=True) as is_usable:
        request()
    return is_usable.call_count


def test_the_backend_is_in_use():
    assert type(connection).__module__ == "config.postgresql.base" and connection.settings_dict["CONN_HEALTH_CHECKS"]


def test_a_connection_busy_a_moment_ago_is_not_checked_again(settings):
    settings.DB_HEALTH_CHECK_IDLE_MS = 60_000
    _a_request()
    assert _checks_during(_a_request) == 0
    assert _checks_during(_a_request) == 0


def test_an_idle_connection_is_checked_before_its_next_request(settings):
    _a_request()
    settings.DB_HEALTH_CHECK_IDLE_MS = 0
    assert _checks_during(_a_request) == 1


def test_after_an_error_the_connection_is_checked_before_it_is_trusted_again(settings):
    settings.DB_HEALTH_CHECK_IDLE_MS = 60_000
    _a_request()

    def failed_request_then_another():
        with pytest.raises(Exception, match="no_such_table"):
            _a_request(fail=True)
        connection.close_if_unusable_or_obsolete()  # the failed request's end step (Django checks there)
        _a_request()
        _a_request()

    assert _checks_during(failed_request_then_another) == 1


# --- prepared statements for the hot statements (config.rows.hot_cursor) --------------------------------------------
HOT = "SELECT id, email FROM accounts_user WHERE id = %s"


def _prepared_on(wrapper) -> list[str]:
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


@pytest.fixture
def own_connection():
    """A connection of the test's own, made with the settings as the test left them."""
    wrapper = connections.create_connection("default")
    yield wrapper
    wrapper.close()


def test_a_hot_statement_is_prepared_after_the_threshold_and_client_bound_queries_never(settings, own_connection):
    settings.DB_PREPARE_THRESHOLD = 2
    with own_connection.hot_cursor() as cursor:
        cursor.execute(HOT, [1])
    assert not any("accounts_user" in text for text in _prepared_on(own_connection))
    for _ in range(2):
        with own_connection.hot_cursor() as cursor:
            cursor.execute(HOT, [1])
    with own_connection.cursor() as cursor:
        for _ in range(5):
            cursor.execute("SELECT count(*) FROM accounts_session WHERE expire_date > now()")
    prepared = _prepared_on(own_connection)
    assert any("accounts_user" in text and "$1" in text for text in prepared), prepared
    assert not any("accounts_session" in text for text in prepared), prepared


def test_an_empty_threshold_prepares_nothing(settings, own_connection):
    settings.DB_PREPARE_THRESHOLD = None
    for _ in range(5):
        with own_connection.hot_cursor() as cursor:
            cursor.execute(HOT, [1])
    assert _prepared_on(own_connection) == []


def test_a_hot_statement_is_logged_with_its_values(settings):
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries, connection.hot_cursor() as cursor:
        cursor.execute(HOT, [42])
    assert queries.captured_queries[-1]["sql"] == "SELECT id, email FROM accounts_user WHERE id = 42"


def test_a_signed_in_reader_s_session_and_access_are_prepared_statements(client, reader, mini_book):
    client.force_login(reader)
    capsule = mini_book.capsules.filter(access="locked").first()
    for _ in range(3):
        assert client.get(capsule.get_absolute_url()).status_code == 200
    prepared = " ".join(_prepared_on(connection))
    assert "accounts_session" in prepared and "subscriptions_subscription" in prepared

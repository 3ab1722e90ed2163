"""Outages for tests (issue 20): the Celery broker unreachable, or the site's broker moved to a server of the
test's own (tests/outages/servers.py) that the test stops and starts again."""

import os
import socket
from contextlib import contextmanager

from config.celery import app


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # free once closed: nothing listens there


def _forget_connections() -> None:
    # The app keeps its connection and producer pools: without this, publishing would reuse the old ones.
    app._pool = None
    app.amqp._producer_pool = None


@contextmanager
def broker_down(monkeypatch):
    """Every publish fails as with a stopped Redis broker. Celery reads CELERY_BROKER_WRITE_URL from the
    environment before its settings (celery.app.utils.Settings.broker_write_url)."""
    monkeypatch.setenv("CELERY_BROKER_WRITE_URL", f"redis://127.0.0.1:{closed_port()}/0")
    _forget_connections()
    try:
        yield
    finally:
        monkeypatch.delenv("CELERY_BROKER_WRITE_URL")
        _forget_connections()


@contextmanager
def broker_at(url: str):
    """The site (this test process) publishes to the broker at `url`. Celery reads CELERY_BROKER_URL from
    the environment before its settings (celery.app.utils.Settings.broker_url)."""
    before = os.environ.get("CELERY_BROKER_URL")
    os.environ["CELERY_BROKER_URL"] = url
    _forget_connections()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = before
        _forget_connections()

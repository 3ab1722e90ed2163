"""A work-around for kombu's Redis transport (5.7): a channel whose broker connection was closed under it builds its
connection parameters from the closed transport, `self.connection.client`, which kombu sets to None on close, and
fails with AttributeError ('NoneType' object has no attribute 'hostname'). Raised while a worker holds an
unacknowledged message across a dropped broker connection, that is no connection error to Celery: the worker (and
beat) exited instead of reconnecting. Here the same situation raises redis' ConnectionError, one of the transport's
connection_errors, which Celery answers by reconnecting and the broker by handing the message out again.

Installed once, from config/celery.py; tests/outages/test_broker_drop.py checks that it still applies to the
installed kombu (pyproject.toml keeps kombu below 5.8) and that a worker survives a broker dropped mid-task."""

from __future__ import annotations

import functools


def install() -> bool:
    """Guard kombu's redis Channel._connparams; False when the transport (or redis) is not installed."""
    try:
        import redis
        from kombu.transport import redis as kombu_redis
    except ImportError:
        return False
    original = kombu_redis.Channel._connparams
    if getattr(original, "closed_connection_guard", False):
        return True

    @functools.wraps(original)
    def _connparams(self, asynchronous=False):
        transport = self.connection
        if transport is None or transport.client is None:
            raise redis.exceptions.ConnectionError("the broker connection of this channel was closed")
        return original(self, asynchronous)

    _connparams.closed_connection_guard = True
    kombu_redis.Channel._connparams = _connparams
    return True

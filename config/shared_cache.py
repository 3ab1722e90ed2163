"""Reads and writes of the shared cache (Redis in production) for values that are only saved work: a Stripe Price
read, a share picture drawn. When the cache Redis is down these must not fail the page (they did: /pricing/ and the
share pictures answered 500): the value is kept in this process's own memory instead (the "local" cache), so the
work is still not redone on every request, and a warning is logged."""

import logging

from django.core.cache import cache, caches
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

LOCAL_CACHE = "local"
# Redis errors, and OSError for the file cache that `make run` uses without Redis.
CACHE_ERRORS = (RedisError, OSError)


def shared_get(key: str, default=None):
    try:
        return cache.get(key, default)
    except CACHE_ERRORS as error:
        logger.warning("shared cache unavailable for get (%s): this process's memory instead", error)
        return caches[LOCAL_CACHE].get(key, default)


def shared_set(key: str, value, timeout: float) -> None:
    try:
        cache.set(key, value, timeout)
    except CACHE_ERRORS as error:
        logger.warning("shared cache unavailable for set (%s): this process's memory instead", error)
        caches[LOCAL_CACHE].set(key, value, timeout)

"""allauth's rate limits (sign-in, sign-up, password reset) count in the shared cache. When that
cache is unreachable they fail open, with a warning: a Redis outage must not turn every sign-in
into a 500. They are abuse limits, not access control; passwords are still checked."""

import logging

from redis.exceptions import RedisError

log = logging.getLogger(__name__)

# Redis errors, and OSError for the file cache that `make run` uses without Redis.
CACHE_ERRORS = (RedisError, OSError)


class FailOpenCache:
    """The few cache calls allauth's rate limiting makes, each answering "no history, lock taken,
    nothing stored" when the cache fails."""

    def __init__(self, cache):
        self._cache = cache

    def _fail_open(self, operation: str, error: Exception, answer):
        log.warning("sign-in rate limit skipped: the cache failed on %s (%s)", operation, error)
        return answer

    def get(self, key, default=None):
        try:
            return self._cache.get(key, default)
        except CACHE_ERRORS as error:
            return self._fail_open("get", error, default)

    def add(self, key, value, timeout=None):
        try:
            return self._cache.add(key, value, timeout=timeout)
        except CACHE_ERRORS as error:
            return self._fail_open("add", error, True)

    def set(self, key, value, timeout=None):
        try:
            self._cache.set(key, value, timeout=timeout)
        except CACHE_ERRORS as error:
            self._fail_open("set", error, None)

    def delete(self, key):
        try:
            return self._cache.delete(key)
        except CACHE_ERRORS as error:
            return self._fail_open("delete", error, False)


def install_fail_open_cache() -> None:
    # allauth reads its module-level `cache` at each call, and offers no setting for the store.
    from allauth.core.internal import ratelimit
    from django.core.cache import cache

    ratelimit.cache = FailOpenCache(cache)

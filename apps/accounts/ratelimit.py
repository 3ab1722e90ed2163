"""Rate limits that count in the shared cache, failing open when it is down: allauth's (sign-in,
sign-up, password reset) and the site's own fixed windows (rate_allows: search).

allauth's rate limits count in the shared cache. When that
cache is unreachable they fail open, with a warning: a Redis outage must not turn every sign-in
into a 500. They are abuse limits, not access control; passwords are still checked."""

import logging
import time

from django.core.cache import cache

from config.shared_cache import CACHE_ERRORS

log = logging.getLogger(__name__)


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

    ratelimit.cache = FailOpenCache(cache)


def rate_allows(key: str, *, limit: int, window_s: int) -> bool:
    """One more hit of `key` in a fixed window of `window_s` seconds, counted in the shared cache:
    True while the window holds at most `limit`. Fails open (True, logged) when the cache does: an
    abuse limit must not take the page it guards down with the cache."""
    window = int(time.time() // window_s)
    cache_key = f"rate:{key}:{window}"
    try:
        cache.add(cache_key, 0, timeout=window_s)
        try:
            used = cache.incr(cache_key)
        except ValueError:  # expired between add and incr: a new window starts
            cache.set(cache_key, 1, timeout=window_s)
            used = 1
    except CACHE_ERRORS as error:
        log.warning("rate limit %s skipped: the cache failed (%s)", key.split(":", 1)[0], error)
        return True
    return used <= limit


def seconds_left_in_window(window_s: int) -> int:
    """For Retry-After: when the current fixed window ends."""
    return max(1, window_s - int(time.time()) % window_s)

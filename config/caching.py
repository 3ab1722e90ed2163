"""HTTP caching that fits a book site (issue 20).

The rule, in one place: a page is shared-cacheable only when all of these hold, and `private, no-store` otherwise
(as every page was before):

- the view opted in with @public_when_anonymous (the landing page, pricing, the reviews page, a capsule);
- the request is an anonymous GET or HEAD with no session or messages cookie (a visitor with a session may have
  a flash message or a half-finished sign-in waiting; their page is theirs);
- the answer is a plain 200 that sets no cookie, did not use the CSRF token (base.html leaves the per-visitor
  token out of such pages; a page that needs one, a form, is not shared), did not write the session, and carries
  no Cache-Control of the view's own (a locked capsule declares itself private).

Such a page is answered `public, max-age=60` with `Vary: Cookie, HX-Request` (the signed-in reader sends a session
cookie, so no cache in between hands them the anonymous copy, nor an htmx fragment for a page) and a strong ETag,
and is rendered once per public version: Django's cache keeps the body under a key holding the version, so a new
revision, a new review or a moderation takes effect within a second (PUBLIC_VERSION_TTL_MS), and an If-None-Match
for the current body is answered 304 without rendering. Only the plain address is kept (no query string), so that no
client can fill the cache with made-up variants. The version is read from the data (one statement of aggregates, see
the sources that apps register from their AppConfig.ready), so no write path has to remember to invalidate
anything. The version also holds a digest of the code that renders the pages (templates, the site's Python, the
static files' manifest), so a deploy never serves a page or fragment that the code before it rendered. What no
source covers (a reviewer's new display name, Stripe's prices) is bounded by the server-side lifetime,
SERVER_TIMEOUT_S.
"""

import hashlib
import logging
import time
from collections.abc import Callable
from functools import cache as memoize
from functools import wraps

from django.conf import settings
from django.core.cache import cache, caches
from django.db import connection
from django.http import HttpResponse, HttpResponseNotModified
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import parse_etags
from django.utils.safestring import mark_safe

from config.site import site_url

logger = logging.getLogger(__name__)

PUBLIC_MAX_AGE_S = 60  # browsers and shared caches may reuse a public page this long without asking
SERVER_TIMEOUT_S = 300  # how long Django's cache keeps one rendering of a public page
LOCAL_CACHE = "local"  # settings.CACHES: each process's own memory, in front of the shared cache
LOCAL_TIMEOUT_S = 60
VARY = ("Cookie", "HX-Request")
MESSAGES_COOKIE = "messages"  # django.contrib.messages' CookieStorage

_version_statements: list[str] = []


def public_version_source(statement: str) -> str:
    """Register a SQL statement of one row whose values change whenever something shown on public pages changes.
    Statements, not functions, because the version is read on every anonymous page view: all of them run as one
    statement, one round trip to the database (written out by hand: the ORM took about 1 ms of Python to build each
    aggregate, several times the query itself, in bench/load.py's profile)."""
    if statement not in _version_statements:
        _version_statements.append(statement)
    return statement


_version_read: tuple[float, str] = (float("-inf"), "")  # (when, version): this process's last reading
RENDERING_CODE = ("templates/**/*", "apps/**/*.py", "config/**/*.py")


@memoize
def code_version() -> str:
    """A digest of what turns the data into HTML: the templates, the site's Python and the static files' manifest
    (hashed names, after collectstatic). Read once per process (a few hundred small files, milliseconds)."""
    digest = hashlib.sha256()
    paths = [p for pattern in RENDERING_CODE for p in sorted(settings.BASE_DIR.glob(pattern)) if p.is_file()]
    paths.append(settings.STATIC_ROOT / "staticfiles.json")
    for path in paths:
        if path.is_file():
            digest.update(str(path.relative_to(path.anchor)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def public_version() -> str:
    """Read at most once per PUBLIC_VERSION_TTL_MS in each process: under load that one query was a third of a
    cached page's time (bench/load.py), and a second's delay is nothing beside the minute that browsers and shared
    caches may keep a public page anyway. Tests read it every time (config/settings/test.py)."""
    global _version_read
    read_at, version = _version_read
    now, ttl_s = time.monotonic(), settings.PUBLIC_VERSION_TTL_MS / 1000
    if ttl_s and now - read_at < ttl_s:
        return version
    if not _version_statements:
        return code_version()
    sources = ", ".join(f"({statement}) AS source_{number}" for number, statement in enumerate(_version_statements))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {sources}")
        row = cursor.fetchone()
    version = hashlib.sha256(repr((code_version(), row)).encode()).hexdigest()[:20]
    _version_read = (now, version)
    return version


def make_private(response) -> None:
    """Personal or paid: kept by no shared cache and not on the browser's disk."""
    if not response.has_header("Cache-Control"):
        patch_cache_control(response, private=True, no_store=True)


def _anonymous_read(request) -> bool:
    return (
        request.method in ("GET", "HEAD")
        and not request.user.is_authenticated
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and MESSAGES_COOKIE not in request.COOKIES
    )


def _shareable(request, response) -> bool:
    session = getattr(request, "session", None)
    return (
        response.status_code == 200
        and not response.streaming
        and not response.has_header("Cache-Control")
        and not response.cookies
        and not request.META.get("CSRF_COOKIE_NEEDS_UPDATE")  # the page holds a CSRF token
        and not (session is not None and session.modified)
    )


def _key(request) -> str:
    # The canonical address (SITE_URL, FORCE_SCRIPT_NAME) and the path, never the request's Host, scheme or
    # SCRIPT_NAME: pages link to the site's one address (config.site), so those change nothing in them, and a
    # client choosing them must neither make new entries nor reach another visitor's page.
    where = hashlib.sha256(f"{site_url()}{settings.FORCE_SCRIPT_NAME}{request.path_info}".encode()).hexdigest()
    return f"public-page:{public_version()}:{int(bool(getattr(request, 'htmx', False)))}:{where}"


def _public(response, etag: str):
    response["ETag"] = etag
    patch_cache_control(response, public=True, max_age=PUBLIC_MAX_AGE_S)
    patch_vary_headers(response, VARY)
    return response


def _cache_get(key: str):
    # This process's copy first: Django's Redis backend builds a new client for every call, which with the round trip
    # was a third of a cached page's time (bench/load.py). Keys hold the public version, so a change is seen as soon
    # as the version is read again; what no version covers is bounded by SERVER_TIMEOUT_S plus LOCAL_TIMEOUT_S.
    stored = caches[LOCAL_CACHE].get(key)
    if stored is not None:
        return stored
    try:
        stored = cache.get(key)
    except Exception:  # the cache is down: render as if nothing were cached (pages must not fail with Redis)
        logger.warning("public page cache unreachable; rendering", exc_info=True)
        return None
    if stored is not None:
        caches[LOCAL_CACHE].set(key, stored, LOCAL_TIMEOUT_S)
    return stored


def _cache_set(key: str, value) -> None:
    caches[LOCAL_CACHE].set(key, value, LOCAL_TIMEOUT_S)
    try:
        cache.set(key, value, SERVER_TIMEOUT_S)
    except Exception:
        logger.warning("public page cache unreachable; not stored", exc_info=True)


def _versioned_key(kind: str, name: str, *vary_on) -> str:
    """A cache key that changes with the public version: what was kept under the last one is never read again."""
    where = hashlib.sha256(repr((name, *vary_on)).encode()).hexdigest()
    return f"{kind}:{public_version()}:{where}"


def public_fragments(name: str, *vary_on, render: Callable[[], dict[str, str]]) -> dict[str, str]:
    """Pieces of a page that show only public data (a capsule's table of contents and pager), rendered once per
    public version and kept in the cache for every visitor: personal pages use them too, around their own parts.
    `render` returns the pieces by name; `vary_on` holds what else they depend on (the capsule, whether the visitor
    may read everything). The cache being down renders them each time."""
    key = _versioned_key("public-fragments", name, *vary_on)
    stored = _cache_get(key)
    if stored is None:
        stored = render()
        _cache_set(key, stored)
    return {piece: mark_safe(html) for piece, html in stored.items()}  # our templates' output, escaped there


def local_per_version(name: str, *vary_on, compute: Callable[[], object]):
    """A value read from data that the public version covers (a published capsule with its part and book), kept in
    this process's memory for the current version, at most LOCAL_TIMEOUT_S: personal pages then read it without a
    query (a signed-in capsule page spent a sixth of its time fetching the capsule, bench/load.py). Each call gets its
    own copy (the local cache pickles). Not shared between processes, so nothing to invalidate across them; nothing
    is sent to a client from here, the caller still decides who may see what. `compute` may raise (Http404): nothing
    is kept then."""
    key = _versioned_key("local-per-version", name, *vary_on)
    stored = caches[LOCAL_CACHE].get(key)
    if stored is None:
        stored = compute()
        caches[LOCAL_CACHE].set(key, stored, LOCAL_TIMEOUT_S)
    return stored


def public_when_anonymous(view):
    """Opt a page in to the rule above; for everyone else it stays `private, no-store`."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not _anonymous_read(request):
            response = view(request, *args, **kwargs)
            make_private(response)
            patch_vary_headers(response, VARY)
            return response
        # Only the plain address is kept server-side: any query string (?next=, ?sort=, or made up) would let a
        # client fill the cache with copies. Those pages are still public and validated, rendered each time.
        key = None if request.META.get("QUERY_STRING") else _key(request)
        stored = _cache_get(key) if key else None
        if stored is not None:
            etag = stored["etag"]
            if etag in parse_etags(request.headers.get("If-None-Match", "")):
                return _public(HttpResponseNotModified(), etag)
            return _public(HttpResponse(stored["content"], content_type=stored["content_type"]), etag)
        request.public_page = True  # base.html: no per-visitor CSRF token in a page others may be given
        response = view(request, *args, **kwargs)
        if hasattr(response, "render") and callable(response.render):
            response = response.render()
        if not _shareable(request, response):
            make_private(response)
            patch_vary_headers(response, VARY)
            return response
        etag = '"' + hashlib.sha256(response.content).hexdigest()[:32] + '"'
        if key:
            _cache_set(key, {"etag": etag, "content": response.content, "content_type": response["Content-Type"]})
        if etag in parse_etags(request.headers.get("If-None-Match", "")):
            return _public(HttpResponseNotModified(), etag)
        return _public(response, etag)

    return wrapped

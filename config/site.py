"""The site's absolute address, from the one setting SITE_URL, for links built outside a request (EPUB files,
emails sent by the worker, Stripe's return addresses). Inside a request the request's own host is not used for
these: a link written into a file or an email must not depend on which host name a visitor happened to use."""

from django.conf import settings


def site_url() -> str:
    """scheme://host[:port] of this site, without a trailing slash."""
    return settings.SITE_URL.rstrip("/")


def absolute_url(path: str) -> str:
    """`path` (starting with /) on this site, as an absolute URL."""
    if not path.startswith("/"):
        raise ValueError(f"{path!r} is not a path on this site")
    return site_url() + path


def site_context(request) -> dict:
    """Templates' absolute links (canonical, Open Graph) on the site's one address, never the request's Host: a page
    may be kept for every visitor (config/caching.py)."""
    return {"site_url": site_url()}

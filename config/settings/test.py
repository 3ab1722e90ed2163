"""Tests run against the real services: PostgreSQL and Redis (started by `make test`)."""

import os
from urllib.parse import urlsplit, urlunsplit

from config.env import env_str

from .base import *  # noqa: F403
from .base import cache_from_env, database_from_env

DEBUG = False
SECRET_KEY = SECRET_KEY or "test-only-key-not-secret-0123456789abcdefghijklmnopqrstuvwxyz"  # noqa: F405
ALLOWED_HOSTS = ["*"]
SITE_URL = SITE_URL or "https://kernel.example.com"  # noqa: F405
DATABASES = database_from_env("postgres://postgres:postgres@127.0.0.1:5432/kernel_engineering")


def redis_db_for_this_worker(url: str) -> str:
    """pytest-xdist runs the suite in worker processes gw0, gw1, ...; pytest-django gives each its own
    test database, and this gives each its own Redis databases: every test empties the cache (FLUSHDB)
    and Celery tests purge the broker, which must not reach another worker's. Worker n adds 2n to the
    configured database numbers (defaults: gw0 uses 1 and 2, gw1 3 and 4, ...)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # set by pytest-xdist: not a setting
    if not worker:
        return url
    parts = urlsplit(url)
    db = int(parts.path.strip("/") or 0) + 2 * int(worker.removeprefix("gw"))
    return urlunsplit(parts._replace(path=f"/{db}"))


REDIS_URL = redis_db_for_this_worker(env_str("REDIS_URL", "redis://127.0.0.1:6379/1"))
CACHES = cache_from_env(REDIS_URL)
CACHES["default"]["KEY_PREFIX"] = "ke-test"
CELERY_BROKER_URL = redis_db_for_this_worker(env_str("CELERY_BROKER_URL", "redis://127.0.0.1:6379/2"))
if "PYTEST_XDIST_WORKER" in os.environ:
    # Celery takes CELERY_BROKER_URL from the environment before its settings: the two must agree.
    os.environ.update(REDIS_URL=REDIS_URL, CELERY_BROKER_URL=CELERY_BROKER_URL)
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
if os.environ.get("TEST_SMTP_PORT"):  # tests/outages: a worker process sends to the test's own SMTP server
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST, EMAIL_PORT, EMAIL_USE_TLS, EMAIL_TIMEOUT = "127.0.0.1", int(os.environ["TEST_SMTP_PORT"]), False, 5
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; never outside tests
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # noqa: F405
LOGGING["root"]["level"] = "WARNING"  # noqa: F405
DEMO_DATA_ALLOWED = True
PUBLIC_VERSION_TTL_MS = 0  # an edit shows on the very next request (config/caching.py)
STRIPE_TEST_MODE_ALLOWED = True  # the local Stripe stand-in may run here (config/settings/base.py)

# Serve static files straight from the source folders; no collectstatic needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

"""Tests run against the real services: PostgreSQL and Redis (started by `make test`)."""

from config.env import env_str

from .base import *  # noqa: F403
from .base import cache_from_env, database_from_env

DEBUG = False
SECRET_KEY = SECRET_KEY or "test-only-key-not-secret-0123456789abcdefghijklmnopqrstuvwxyz"  # noqa: F405
ALLOWED_HOSTS = ["*"]
DATABASES = database_from_env("postgres://postgres:postgres@127.0.0.1:5432/kernel_engineering")
REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/1")
CACHES = cache_from_env(REDIS_URL)
CACHES["default"]["KEY_PREFIX"] = "ke-test"
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "redis://127.0.0.1:6379/2")
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; never outside tests
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # noqa: F405
LOGGING["root"]["level"] = "WARNING"  # noqa: F405
DEMO_DATA_ALLOWED = True

# Serve static files straight from the source folders; no collectstatic needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

"""Production: refuses to start without its secrets; secure by default."""

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_required, env_str

from .base import *  # noqa: F403
from .base import cache_from_env, database_from_env

DEBUG = False
if STRIPE_TEST_MODE:  # noqa: F405
    # A stand-in that grants subscriptions for a fake card must never face the public.
    raise ImproperlyConfigured("STRIPE_TEST_MODE is for development only and is refused in production.")
STRIPE_TEST_MODE_ALLOWED = False
SECRET_KEY = env_required("SECRET_KEY")
ALLOWED_HOSTS = [host.strip() for host in env_required("ALLOWED_HOSTS").split(",") if host.strip()]
# Served over HTTPS (SECURE_SSL_REDIRECT): the first host name is the site's address unless SITE_URL says otherwise.
SITE_URL = SITE_URL or f"https://{ALLOWED_HOSTS[0].lstrip('.')}"  # noqa: F405
DATABASES = database_from_env(env_required("DATABASE_URL"))
REDIS_URL = env_required("REDIS_URL")
CACHES = cache_from_env(REDIS_URL)
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_REDIRECT_EXEMPT = [r"^health/$", r"^health/status/$"]  # the load balancer probes over plain HTTP
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
DEMO_DATA_ALLOWED = False

"""Development: `make run` on a fresh machine with no services. SQLite, a file cache and
Celery's file-system broker are the embedded defaults; any of them can be replaced by
setting DATABASE_URL, REDIS_URL or CELERY_BROKER_URL."""

from config.env import env_bool, env_str

from .base import *  # noqa: F403
from .base import VAR_DIR

VAR_DIR.mkdir(parents=True, exist_ok=True)  # SQLite, the file cache and the broker live here

DEBUG = env_bool("DEBUG", True)  # noqa: F405
SECRET_KEY = SECRET_KEY or "dev-only-insecure-key-never-used-in-production-0123456789abcdef"  # noqa: F405
ALLOWED_HOSTS = ALLOWED_HOSTS or ["127.0.0.1", "localhost", "[::1]"]  # noqa: F405
SITE_URL = SITE_URL or "http://127.0.0.1:8000"  # noqa: F405  (runserver's default address)
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
LOG_FORMAT = env_str("LOG_FORMAT", "text")
LOGGING["handlers"]["console"]["formatter"] = LOG_FORMAT  # noqa: F405
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # noqa: F405

if CELERY_BROKER_URL == "filesystem://":  # noqa: F405
    # One folder is both in and out: the web process writes messages, the worker reads them.
    _broker_dir = VAR_DIR / "celery-broker"
    _broker_dir.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT = "config.celery_filesystem:Transport"  # kombu's, writing each message whole
    # These options replace Redis's, queue_order_strategy included: kombu's file-system channel has no such option
    # and polls a worker's queues in turn (kombu.utils.scheduling.FairCycle), so a GPU worker started by hand beside
    # `make run` may take a waiting profile (`gpu.<kind>.profile`) between two judgements instead of after them.
    # Its own worker (-Q default,compile) takes neither.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir),
        "data_folder_out": str(_broker_dir),
        "processed_folder": str(VAR_DIR / "celery-processed"),
        "control_folder": str(VAR_DIR / "celery-control"),  # kombu's default is ./control
        "store_processed": False,
        # How often an idle worker looks for a new message file (kombu's default: 1 s, added to every stage's
        # latency); bench/judge_load.py sets 0.01 so that its figures measure the judge, not this.
        "polling_interval": float(env_str("CELERY_BROKER_POLLING_INTERVAL_S", "1")),
    }

# Demo data (demo accounts with a known password) may be loaded here and nowhere else.
DEMO_DATA_ALLOWED = True
STRIPE_TEST_MODE_ALLOWED = True  # the local Stripe stand-in may run here (config/settings/base.py)

# Serve static files straight from the source folders; no collectstatic needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

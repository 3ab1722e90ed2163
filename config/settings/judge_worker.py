"""Judge workers in production: the Celery workers of the queues `compile` (NVRTC on CPU nodes) and `gpu.<kind>`,
which handle readers' kernel sources (issue 41). They hold only what they use (config/judge_env.py): the database,
since they write results; the broker, since they queue the next stage; the judge's settings. Nothing they do signs
(so no SECRET_KEY: Django refuses any use of an empty one), sends mail, calls Stripe or reads the shared cache.

They refuse to start while the environment holds one of the site's secrets: a deployment that hands them the site's
whole environment (an env file shared by every service) is caught at start-up rather than leaked.
"""

import os

from django.core.exceptions import ImproperlyConfigured

from config.env import env_required
from config.judge_env import site_secrets_in

from .base import *  # noqa: F403
from .base import database_from_env

if _secrets := site_secrets_in(os.environ):
    raise ImproperlyConfigured(
        f"A judge worker must not hold the site's secrets, and its environment sets {', '.join(_secrets)}: "
        "give it only the variables it uses (README: Operators, which process gets which variables)."
    )

DEBUG = False
SECRET_KEY = ""
DEMO_DATA_ALLOWED = False
DATABASES = database_from_env(env_required("DATABASE_URL"))
CELERY_BROKER_URL = env_required("CELERY_BROKER_URL")
# No shared cache: nothing of the judge's work is cached, and the site's cache holds the pages every visitor gets.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
}

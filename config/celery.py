"""The Celery app. Settings come from Django's settings under the CELERY_ prefix
(config/settings/base.py lists queues, each task's route, limits and acknowledgement policy)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")

app = Celery("kernel_engineering")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The GPU worker's signals (warm judge, registration, heartbeat) must be connected before the worker
# starts its pool; the module imports no models at load time, so this works before Django is set up.
import apps.submissions.worker  # noqa: E402, F401

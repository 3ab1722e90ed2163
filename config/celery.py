"""The Celery app. Settings come from Django's settings under the CELERY_ prefix
(config/settings/base.py lists queues, each task's route, limits and acknowledgement policy)."""

import os

from celery import Celery, Task
from django.db import InterfaceError, OperationalError

from config import kombu_redis

# Unset, the settings are production's, as for gunicorn (config/wsgi.py): they refuse to start without SECRET_KEY
# and the other secrets, and never run DEBUG with development's public key on a machine where the variable was
# forgotten. Development names its settings (`make run` exports config.settings.dev).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")


class SiteTask(Task):
    """The base of every task here. A transient database error ("database is locked" under SQLite while
    another process writes, a connection lost with a database restart) is retried with backoff (about 1, 2,
    4, 8, 16 s, jittered) rather than losing the task's work: every task is idempotent, so running it
    again is safe. A task may still catch these itself (the Stripe event task records its own failures)."""

    autoretry_for = (OperationalError, InterfaceError)
    max_retries = 5
    retry_backoff = True
    retry_backoff_max = 60


# Before any connection: a dropped broker connection must be a connection error, not a crash (config/kombu_redis.py).
kombu_redis.install()

app = Celery("kernel_engineering", task_cls=SiteTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

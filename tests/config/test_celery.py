"""The Celery app with its queues, on the real Redis broker and a real worker."""

import time
from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.utils import timezone

from apps.accounts.tasks import clear_expired_sessions
from config.celery import app


def test_queues_and_delivery_guarantees_are_configured():
    assert [q.name for q in app.conf.task_queues] == ["default", "compile", "gpu.h200"]
    assert app.conf.task_default_queue == "default"
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost
    assert app.conf.worker_prefetch_multiplier == 1
    assert app.conf.task_serializer == "json" and app.conf.accept_content == ["json"]
    assert app.conf.task_time_limit > app.conf.task_soft_time_limit > 0
    assert "apps.accounts.tasks.clear_expired_sessions" in {e["task"] for e in app.conf.beat_schedule.values()}


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_the_periodic_session_sweep_through_redis():
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    expired, live = SessionStore(), SessionStore()
    expired.create()
    live.create()
    Session.objects.filter(session_key=expired.session_key).update(expire_date=timezone.now() - timedelta(days=1))

    with start_worker(app, pool="solo", perform_ping_check=False, queues=["default"], shutdown_timeout=10):
        sent = clear_expired_sessions.apply_async(queue="default")
        # Results are not stored (the database is the record), so wait on the effect.
        for _ in range(100):
            if not Session.objects.filter(session_key=expired.session_key).exists():
                break
            time.sleep(0.1)

    assert sent.id
    assert not Session.objects.filter(session_key=expired.session_key).exists()
    assert Session.objects.filter(session_key=live.session_key).exists()

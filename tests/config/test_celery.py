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
from apps.subscriptions.tasks import EVENT_RETRY_DELAYS, SUBSCRIPTION_EMAIL_RETRY_STEP_S, send_subscription_email
from config.celery import app


def test_queues_and_delivery_guarantees_are_configured():
    assert [q.name for q in app.conf.task_queues] == ["default", "compile", "gpu.h200", "gpu.h200.profile"]
    # Issue 43: a worker's queues are polled in the order of its -Q, so a GPU worker takes a profile only when no
    # judgement waits (tests/submissions/test_profile_runs.py shows the order on the real Redis broker).
    assert app.conf.broker_transport_options["queue_order_strategy"] == "priority"
    assert app.conf.task_default_queue == "default"
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost
    assert app.conf.worker_prefetch_multiplier == 1
    assert app.conf.task_serializer == "json" and app.conf.accept_content == ["json"]
    assert app.conf.task_time_limit > app.conf.task_soft_time_limit > 0
    assert "apps.accounts.tasks.clear_expired_sessions" in {e["task"] for e in app.conf.beat_schedule.values()}


def test_every_retry_countdown_is_shorter_than_the_broker_visibility_timeout():
    # A worker holds a retried task until its countdown ends, unacknowledged; Redis hands a task held past the
    # visibility timeout to another worker, so a longer countdown runs the task twice (a mail sent twice).
    app.loader.import_default_modules()
    backoff_caps = [task.retry_backoff_max for task in app.tasks.values() if getattr(task, "retry_backoff", False)]
    longest = max(
        *backoff_caps,
        *EVENT_RETRY_DELAYS,
        SUBSCRIPTION_EMAIL_RETRY_STEP_S * send_subscription_email.max_retries,
    )
    assert longest >= 600  # the accounts' mail task, capped at 10 minutes, is among them
    assert app.conf.broker_transport_options["visibility_timeout"] > longest + app.conf.task_time_limit


def test_the_settings_route_each_task_to_its_queue_and_gpu_tasks_keep_the_queue_they_are_given():
    app.loader.import_default_modules()
    route = app.amqp.router.route
    project_tasks = {name for name in app.tasks if not name.startswith("celery.")}
    gpu_tasks = {"submissions.judge", "submissions.reference_ladder", "submissions.profile"}

    assert {
        "submissions.compile",
        "reading.build_epub",
        "apps.subscriptions.tasks.process_stripe_event",
    } < project_tasks
    compile_tasks = {"submissions.compile", "submissions.disassemble"}  # reader-built input: the judge workers'
    assert {route({}, name)["queue"].name for name in compile_tasks} == {"compile"}
    assert {route({}, name)["queue"].name for name in project_tasks - gpu_tasks - compile_tasks} == {"default"}
    assert {route({"queue": "gpu.h200"}, name)["queue"].name for name in gpu_tasks} == {"gpu.h200"}
    assert route({"queue": "gpu.h200.profile"}, "submissions.profile")["queue"].name == "gpu.h200.profile"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_the_periodic_session_sweep_through_redis():
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    expired, live = SessionStore(), SessionStore()
    expired.create()
    live.create()
    Session.objects.filter(session_key=expired.session_key).update(expire_date=timezone.now() - timedelta(days=1))

    with start_worker(app, pool="solo", perform_ping_check=False, queues=["default"], shutdown_timeout=10):
        sent = clear_expired_sessions.delay()  # routed to `default` by the settings
        # Results are not stored (the database is the record), so wait on the effect.
        for _ in range(100):
            if not Session.objects.filter(session_key=expired.session_key).exists():
                break
            time.sleep(0.1)

    assert sent.id
    assert not Session.objects.filter(session_key=expired.session_key).exists()
    assert Session.objects.filter(session_key=live.session_key).exists()


def test_every_task_retries_a_transient_database_error_with_backoff_a_bounded_number_of_times():
    # Issue 20: on SQLite a task that met "database is locked" was lost (the judge's tasks had a retry; the
    # EPUB build, the session sweep, the Stripe event sweep and the subscription emails had none).
    from django.db import InterfaceError, OperationalError

    app.loader.import_default_modules()
    project_tasks = {name: task for name, task in app.tasks.items() if not name.startswith("celery.")}

    without = sorted(
        name
        for name, task in project_tasks.items()
        if not {OperationalError, InterfaceError} <= set(getattr(task, "autoretry_for", ()))
    )
    assert without == []
    # Account emails retry longer (about a day, apps/accounts/tasks.py): an SMTP outage must not lose them.
    mail = project_tasks.pop("apps.accounts.tasks.send_email")
    assert (mail.retry_backoff, mail.max_retries >= 5, mail.retry_backoff_max) == (True, True, 600)
    assert {(task.retry_backoff, task.max_retries) for task in project_tasks.values()} == {(True, 5)}
    assert {task.retry_backoff_max for task in project_tasks.values()} == {60}

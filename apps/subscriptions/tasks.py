"""Celery tasks: each takes ids, calls one service, and is safe to run twice."""

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from apps.subscriptions import services, stripe_api
from apps.subscriptions.errors import EventProcessingFailed

# Seconds before each retry of a failed event; after the last, the periodic sweep takes over. Each stays under the
# broker's visibility timeout (30 min): a worker holds a retried task until its countdown ends, and Redis hands a
# task held unacknowledged for longer to a second worker (tests/config/test_celery.py).
EVENT_RETRY_DELAYS = (5, 30, 120, 600, 1200)
SUBSCRIPTION_EMAIL_RETRY_STEP_S = 60  # the n-th retry waits n times this


@shared_task(bind=True, max_retries=len(EVENT_RETRY_DELAYS), soft_time_limit=60, time_limit=90)
def process_stripe_event(self, event_id: int) -> None:
    try:
        services.event_process(event_id=event_id)
        return
    except SoftTimeLimitExceeded:
        raise
    except Exception as exc:  # noqa: BLE001 - recorded on the event by event_process
        reason = EventProcessingFailed(stripe_api.redact(f"event {event_id}: {type(exc).__name__}: {exc}"))
    # Outside the except block on purpose: Celery logs the retry (and a final failure with its
    # traceback), and must see only the redacted reason, not the original exception chained.
    if self.request.called_directly:
        raise reason
    delay = EVENT_RETRY_DELAYS[min(self.request.retries, len(EVENT_RETRY_DELAYS) - 1)]
    raise self.retry(exc=reason, countdown=delay)


@shared_task(soft_time_limit=60, time_limit=90)
def retry_unprocessed_stripe_events() -> int:
    return services.events_retry_unprocessed()


@shared_task(bind=True, max_retries=5, soft_time_limit=30, time_limit=60)
def send_subscription_email(self, subscription_id: int, kind: str) -> bool:
    try:
        return services.subscription_email_send(subscription_id=subscription_id, kind=kind)
    except OSError as exc:  # SMTP and network errors
        raise self.retry(exc=exc, countdown=SUBSCRIPTION_EMAIL_RETRY_STEP_S * (self.request.retries + 1)) from exc


@shared_task(soft_time_limit=120, time_limit=180)
def refresh_ended_entitlements() -> int:
    return services.entitlements_refresh_all(ended_only=True)


@shared_task(soft_time_limit=30 * 60, time_limit=35 * 60)
def reconcile_subscriptions() -> int:
    return len(services.subscriptions_reconcile().synced)

"""Celery tasks: each takes ids, calls one service, and is safe to run twice."""
import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from apps.subscriptions import services

logger = logging.getLogger(__name__)

# Seconds before each retry of a failed event; after the last, the periodic sweep takes over.
EVENT_RETRY_DELAYS = (5, 30, 120, 600, 1800)


@shared_task(bind=True, max_retries=len(EVENT_RETRY_DELAYS), soft_time_limit=60, time_limit=90)
def process_stripe_event(self, event_id: int) -> None:
    try:
        services.event_process(event_id=event_id)
    except SoftTimeLimitExceeded:
        raise
    except Exception as exc:
        # The event stays unprocessed with its error (event_process recorded it).
        delay = EVENT_RETRY_DELAYS[min(self.request.retries, len(EVENT_RETRY_DELAYS) - 1)]
        raise self.retry(exc=exc, countdown=delay) from exc


@shared_task(soft_time_limit=60, time_limit=90)
def retry_unprocessed_stripe_events() -> int:
    return services.events_retry_unprocessed()


@shared_task(bind=True, max_retries=5, soft_time_limit=30, time_limit=60)
def send_subscription_email(self, subscription_id: int, kind: str) -> bool:
    try:
        return services.subscription_email_send(subscription_id=subscription_id, kind=kind)
    except OSError as exc:  # SMTP and network errors
        raise self.retry(exc=exc, countdown=60 * (self.request.retries + 1)) from exc

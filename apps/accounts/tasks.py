from celery import shared_task

from apps.accounts.mail import SMTP_ERRORS, email_deliver
from apps.accounts.services import sessions_clear_expired
from config.celery import SiteTask


@shared_task(soft_time_limit=60, time_limit=90)
def clear_expired_sessions() -> int:
    return sessions_clear_expired()


# Retried with backoff (about 1 s, 2 s, ... capped at 10 min, jittered) for about a day: an SMTP outage delays
# account emails, it does not lose them.
@shared_task(
    autoretry_for=(*SiteTask.autoretry_for, *SMTP_ERRORS),
    max_retries=160,
    retry_backoff=True,
    retry_backoff_max=600,
    soft_time_limit=60,
    time_limit=90,
)
def send_email(data: dict) -> None:
    email_deliver(data=data)

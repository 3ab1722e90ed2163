from celery import shared_task

from apps.accounts.services import sessions_clear_expired


@shared_task(soft_time_limit=60, time_limit=90)
def clear_expired_sessions() -> int:
    return sessions_clear_expired()

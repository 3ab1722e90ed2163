"""GET /health/: is this web process able to reach what it depends on?"""

import logging

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu import Connection

logger = logging.getLogger(__name__)

BROKER_TIMEOUT_S = 2


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def check_broker() -> None:
    # A fresh connection each time, from current settings: the probe must notice a broker
    # that went away, not a pooled connection that used to work.
    with Connection(
        settings.CELERY_BROKER_URL,
        connect_timeout=BROKER_TIMEOUT_S,
        transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS,
    ) as conn:
        conn.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT_S)


CHECKS = {"database": check_database, "broker": check_broker}


@never_cache
@require_GET
def health(request):
    results = {}
    for name, check in CHECKS.items():
        try:
            check()
            results[name] = "ok"
        except Exception as exc:  # a health probe reports any failure instead of raising
            logger.warning("health check %s failed", name, extra={"check": name, "error": str(exc)})
            results[name] = "unavailable"
    healthy = all(value == "ok" for value in results.values())
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": results}, status=200 if healthy else 503
    )

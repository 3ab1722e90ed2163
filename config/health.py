"""Two probes of this web process.

GET /health/ is readiness, for the load balancer and the container's health check: 200 when this process can serve
pages, which needs the database and nothing else (every page a reader uses answers without the broker and without
the cache Redis: tests/outages). Answering 503 for a broker outage had a load balancer drop healthy nodes.

GET /health/status/ is for people and monitoring: each dependency's state (database, broker, cache), always 200
with "degraded" when one is down, so that it never takes a node out of service."""

import logging

from django.conf import settings
from django.core.cache import cache
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


def check_cache() -> None:
    # Django's Redis cache raises on a lost server (the site's own uses fail open; this reports it).
    cache.set("health:probe", "1", timeout=10)
    if cache.get("health:probe") != "1":
        raise RuntimeError("the cache did not keep a value")


READINESS_CHECKS = {"database": check_database}
STATUS_CHECKS = {"database": check_database, "broker": check_broker, "cache": check_cache}


def _run(checks: dict) -> dict[str, str]:
    results = {}
    for name, check in checks.items():
        try:
            check()
            results[name] = "ok"
        except Exception as exc:  # a probe reports any failure instead of raising
            logger.warning("health check %s failed", name, extra={"check": name, "error": str(exc)})
            results[name] = "unavailable"
    return results


@never_cache
@require_GET
def health(request):
    results = _run(READINESS_CHECKS)
    ready = all(value == "ok" for value in results.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": results}, status=200 if ready else 503)


@never_cache
@require_GET
def status(request):
    results = _run(STATUS_CHECKS)
    healthy = all(value == "ok" for value in results.values())
    return JsonResponse({"status": "ok" if healthy else "degraded", "checks": results})

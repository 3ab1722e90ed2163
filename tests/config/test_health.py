import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

CLOSED = "redis://127.0.0.1:1/0"  # nothing listens on port 1


def test_readiness_is_the_database(client):
    response = client.get(reverse("health"))

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok"}}
    assert response["Cache-Control"].startswith("max-age=0")


def test_readiness_stays_200_when_only_the_broker_is_down(client, settings, mini_book):
    # Pages work without the broker (tests/outages): a 503 here had a load balancer drop healthy nodes.
    settings.CELERY_BROKER_URL = CLOSED

    assert client.get(reverse("health")).status_code == 200
    assert client.get(reverse("pages:landing")).status_code == 200


def test_readiness_is_503_without_the_database(client, monkeypatch):
    from config import health

    def fails():
        raise OSError("down")

    monkeypatch.setitem(health.READINESS_CHECKS, "database", fails)
    response = client.get(reverse("health"))
    assert response.status_code == 503 and response.json()["checks"] == {"database": "unavailable"}


def test_the_status_page_reports_every_dependency(client):
    response = client.get(reverse("health-status"))

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok", "cache": "ok"}}


def test_the_status_page_reports_the_broker_and_the_cache_down_without_failing(client, settings):
    settings.CELERY_BROKER_URL = CLOSED
    settings.CACHES = {**settings.CACHES, "default": {**settings.CACHES["default"], "LOCATION": CLOSED}}

    response = client.get(reverse("health-status"))

    assert response.status_code == 200
    assert response.json() == {
        "status": "degraded",
        "checks": {"database": "ok", "broker": "unavailable", "cache": "unavailable"},
    }


def test_health_refuses_other_methods(client):
    assert client.post(reverse("health")).status_code == 405
    assert client.post(reverse("health-status")).status_code == 405

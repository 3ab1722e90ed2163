import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_health_reports_database_and_broker(client):
    response = client.get(reverse("health"))

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}
    assert response["Cache-Control"].startswith("max-age=0")


def test_health_is_503_when_the_broker_is_unreachable(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1

    response = client.get(reverse("health"))

    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "ok", "broker": "unavailable"}


def test_health_refuses_other_methods(client):
    assert client.post(reverse("health")).status_code == 405

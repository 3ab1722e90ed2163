"""The site's own error pages: a crash shows the standalone 500 page and is logged as structured
JSON with its traceback; a 400 says plainly what was wrong (a form too large to send, by name)."""

import logging

import pytest
from django.urls import path


def _broken_view(request):
    raise RuntimeError("boom")


urlpatterns = [path("broken/", _broken_view)]


@pytest.mark.urls(__name__)
def test_an_unhandled_error_renders_the_standalone_500_page(client, caplog):
    client.raise_request_exception = False

    with caplog.at_level(logging.ERROR, logger="django.request"):
        response = client.get("/broken/")

    assert response.status_code == 500
    html = response.content.decode()
    assert "Kernel Engineering" in html and "boom" not in html  # nothing internal reaches the reader
    assert any(r.exc_info and "boom" in str(r.exc_info[1]) for r in caplog.records)


@pytest.mark.django_db
def test_other_refused_requests_get_the_plain_400_page(client, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 3
    response = client.post("/accounts/login/", {f"field{n}": "x" for n in range(5)})  # too many fields

    assert response.status_code == 400
    body = response.content.decode()
    assert "That request could not be understood" in body and "too large" not in body

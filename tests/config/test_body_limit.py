"""The request body cap (issue 28): a declared length over REQUEST_MAX_BODY_BYTES is refused with 413 before a byte of
the body is read (an anonymous 200 MB POST was spooled whole to /tmp before any size check)."""

import pytest
from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db


class UnreadableBody:
    """A request body that fails the test if anything reads it."""

    def read(self, *args):
        raise AssertionError("the body was read")

    readline = read


@pytest.mark.parametrize("path", ["/accounts/signup/", "/stripe/webhook/", "/no-such-page/"])
def test_a_declared_length_over_the_cap_is_413_without_reading_the_body(client, path):
    response = client.generic(
        "POST",
        path,
        CONTENT_LENGTH=str(200 * 1024 * 1024),
        CONTENT_TYPE="multipart/form-data; boundary=x",
        **{"wsgi.input": UnreadableBody()},
    )

    assert response.status_code == 413
    assert response["Connection"] == "close"
    assert "too large" in response.content.decode()


def test_a_body_under_the_cap_is_read_as_before(client):
    response = client.post(reverse("account_login"), {"login": "a@example.com", "password": "x" * 1000})
    assert response.status_code == 200


def test_a_malformed_length_is_a_400(client):
    response = client.generic("POST", "/accounts/login/", CONTENT_LENGTH="12x", **{"wsgi.input": UnreadableBody()})
    assert response.status_code == 400


def test_djangos_own_limits_agree_with_the_cap():
    # Uploads under the cap stay in memory: nothing is spooled to a temporary file.
    cap = settings.REQUEST_MAX_BODY_BYTES
    assert settings.FILE_UPLOAD_MAX_MEMORY_SIZE == settings.DATA_UPLOAD_MAX_MEMORY_SIZE == cap


def test_gunicorn_limits_the_request_head():
    import runpy

    conf = runpy.run_path(str(settings.BASE_DIR / "docker" / "gunicorn.conf.py"))
    assert conf["limit_request_line"] > 0 and conf["limit_request_fields"] > 0 and conf["limit_request_field_size"] > 0

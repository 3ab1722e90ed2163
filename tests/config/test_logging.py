import json
import logging

import pytest

from config.logging import JsonFormatter

pytestmark = pytest.mark.django_db


def test_json_formatter_puts_extras_at_the_top_level():
    record = logging.LogRecord("kernel", logging.WARNING, __file__, 1, "judged %s", ("sgemm",), None)
    record.submission_id = 42

    line = json.loads(JsonFormatter().format(record))

    assert line["message"] == "judged sgemm"
    assert line["level"] == "WARNING"
    assert line["submission_id"] == 42


def test_each_request_is_logged_once_with_its_id_status_and_duration(client, caplog):
    with caplog.at_level(logging.INFO, logger="kernel_engineering.request"):
        response = client.get("/health/", HTTP_X_REQUEST_ID="abc123")

    assert response["X-Request-ID"] == "abc123"
    (record,) = [r for r in caplog.records if r.name == "kernel_engineering.request"]
    assert (record.method, record.path, record.status, record.request_id) == ("GET", "/health/", 200, "abc123")
    assert record.duration_ms >= 0

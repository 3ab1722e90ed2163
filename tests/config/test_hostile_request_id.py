"""X-Request-ID from a client (issue 20): kept only when it is a short safe token; anything else is
replaced by an id of our own, so logs and the echoed header never carry what a client chose."""

import logging
import re

import pytest

pytestmark = pytest.mark.django_db


def _request_id(client, caplog, value: str) -> tuple[str, str]:
    with caplog.at_level(logging.INFO, logger="kernel_engineering.request"):
        response = client.get("/health/", HTTP_X_REQUEST_ID=value)
    (record,) = [r for r in caplog.records if r.name == "kernel_engineering.request"]
    return response["X-Request-ID"], record.request_id


@pytest.mark.parametrize("value", ["abc123", "req-2026.12.02_x", "a" * 64, "0f8e" * 16])
def test_a_short_safe_request_id_is_kept(client, caplog, value):
    assert _request_id(client, caplog, value) == (value, value)


@pytest.mark.parametrize(
    "value",
    ["a" * 65, "x" * 10_000, "abc def", "abc\tdef", "id<script>", 'a"b', "a/b", "é", "a,b", "{json}"],
)
def test_anything_else_is_replaced_by_an_id_of_our_own(client, caplog, value):
    header, logged = _request_id(client, caplog, value)
    assert header == logged and re.fullmatch(r"[0-9a-f]{32}", header)

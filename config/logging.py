"""Structured logs: one JSON object per line, and one line per request."""

import json
import logging
import re
import time
import uuid

_STANDARD_ATTRS = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}

logger = logging.getLogger("kernel_engineering.request")
# What a proxy's request id looks like (a UUID, a hex digest, "req-123.4"); anything else a client sent is
# not echoed into our logs and response headers.
_SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class JsonFormatter(logging.Formatter):
    """Formats a record as JSON; values passed with `extra={...}` become top-level keys."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                payload[key] = value
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)


class RequestLogMiddleware:
    """Gives each request an id (kept from X-Request-ID when a proxy set one and it is a short safe
    token) and logs it once it is answered, with its status and duration."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Request-ID", "")
        request_id = given if _SAFE_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        request.request_id = request_id
        started = time.perf_counter()
        response = self.get_response(request)
        response["X-Request-ID"] = request_id
        user = getattr(request, "user", None)
        logger.info(
            "%s %s %s",
            request.method,
            request.path,
            response.status_code,
            extra={
                "request_id": request_id,
                "method": request.method,
                "path": request.path,
                "status": response.status_code,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                "user_id": user.pk if user is not None and user.is_authenticated else None,
            },
        )
        return response

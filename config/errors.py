"""The site's own 400 page, which tells a reader whose form was too large what to do about it."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, HttpResponseBadRequest
from django.template import loader


def bad_request(request, exception):
    # Rendered without the request, as Django's own handler does: a malformed request (a bad
    # Host header, say) must not reach context processors that would trip over it again.
    context = {}
    if isinstance(exception, RequestDataTooBig):  # raised only while a limit is set
        context = {"too_large": True, "limit_mb": settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 2**20}
    return HttpResponseBadRequest(loader.render_to_string("400.html", context))


def too_large(limit_bytes: int) -> HttpResponse:
    """413 with the same page: a body over the site's cap (config/body_limit.py), refused before it was read."""
    context = {"too_large": True, "limit_mb": limit_bytes / 2**20, "code": 413}
    response = HttpResponse(loader.render_to_string("400.html", context), status=413)
    response["Connection"] = "close"  # the unread body must not be taken for the next request
    return response

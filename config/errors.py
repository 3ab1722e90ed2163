"""The site's own 400 page, which tells a reader whose form was too large what to do about it."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponseBadRequest
from django.template import loader


def bad_request(request, exception):
    # Rendered without the request, as Django's own handler does: a malformed request (a bad
    # Host header, say) must not reach context processors that would trip over it again.
    context = {}
    if isinstance(exception, RequestDataTooBig):  # raised only while a limit is set
        context = {"too_large": True, "limit_mb": settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 2**20}
    return HttpResponseBadRequest(loader.render_to_string("400.html", context))

"""A request body cap, checked on the declared length before anything reads the body.

Django reads a POST's body the first time something looks at request.POST or request.FILES (the CSRF check does, for
every POST), and an upload beyond FILE_UPLOAD_MAX_MEMORY_SIZE was spooled to a temporary file first: 200 MB from an
anonymous POST went to /tmp before any form saw its size. This answers 413 from the Content-Length header alone.
A body without Content-Length (chunked) is never read by Django's WSGI request at all: it reads CONTENT_LENGTH bytes."""

from django.conf import settings
from django.http import HttpResponse

from config.errors import too_large


class RequestBodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return HttpResponse("Malformed Content-Length.\n", status=400, content_type="text/plain")
        if declared > settings.REQUEST_MAX_BODY_BYTES:
            return too_large(settings.REQUEST_MAX_BODY_BYTES)
        return self.get_response(request)

"""Sign-in redirects for htmx requests.

htmx follows a 302 inside its XMLHttpRequest and would swap the whole sign-in page into the
fragment being updated (a review form, a submission's status). When a session has expired, the
reader is sent to the sign-in page instead, and back to the page they were on afterwards.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect


def htmx_sign_in_redirect(get_response):
    def middleware(request):
        response = get_response(request)
        if getattr(request, "htmx", False) and response.status_code == 302 and _is_sign_in(response["Location"]):
            # The page the reader is on, not the fragment's URL: that may be a POST-only endpoint.
            back_to = request.htmx.current_url_abs_path or "/"
            return HttpResponseClientRedirect(redirect_to_login(back_to)["Location"])
        return response

    return middleware


def _is_sign_in(location: str) -> bool:
    return urlsplit(location).path == urlsplit(resolve_url(settings.LOGIN_URL)).path

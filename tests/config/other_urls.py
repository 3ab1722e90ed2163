"""A second URLconf, for tests/config/test_template_urls.py (a request may name its own, request.urlconf): the
reader's pages twice (two instances of the app: a request's current_app picks one), and a name of its own."""

from django.http import HttpResponse
from django.urls import include, path

urlpatterns = [
    path("other/", include("apps.reading.urls", namespace="reading")),
    path("second/", include("apps.reading.urls", namespace="second")),
    path("elsewhere/", lambda request: HttpResponse(), name="only-here"),
]

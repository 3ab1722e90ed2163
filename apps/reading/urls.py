from django.urls import path, register_converter

from apps.reading import views


class FigureNameConverter:
    """A figure's file name: no slash and no control character, so a name with %00 is a 404 before the database is
    asked (it was a 500: PostgreSQL text holds no NUL)."""

    regex = r"[^/\x00-\x1f\x7f]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(FigureNameConverter, "figure_name")

app_name = "reading"

urlpatterns = [
    path("capsules/<slug:slug>/", views.capsule, name="capsule"),
    path("capsules/<slug:slug>/figures/<figure_name:name>", views.figure, name="figure"),
    path("capsules/<slug:slug>/position/", views.position_save, name="position-save"),
    path("capsules/<slug:slug>/complete/", views.complete, name="complete"),
    path("search/", views.search, name="search"),
    path("book.epub", views.epub_download, {"edition": "full"}, name="epub-full"),
    path("sample.epub", views.epub_download, {"edition": "sample"}, name="epub-sample"),
    path("epub/<slug:edition>/status/", views.epub_status, name="epub-status"),
]

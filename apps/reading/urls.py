from django.urls import path

from apps.reading import views

app_name = "reading"

urlpatterns = [
    path("capsules/<slug:slug>/", views.capsule, name="capsule"),
    path("capsules/<slug:slug>/figures/<str:name>", views.figure, name="figure"),
    path("capsules/<slug:slug>/position/", views.position_save, name="position-save"),
    path("capsules/<slug:slug>/complete/", views.complete, name="complete"),
    path("search/", views.search, name="search"),
    path("book.epub", views.epub_download, {"edition": "full"}, name="epub-full"),
    path("sample.epub", views.epub_download, {"edition": "sample"}, name="epub-sample"),
    path("epub/<slug:edition>/status/", views.epub_status, name="epub-status"),
]

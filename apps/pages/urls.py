from django.urls import path

from apps.pages import views

app_name = "pages"

urlpatterns = [
    path("", views.landing, name="landing"),
    path("capsules/<slug:slug>/progress/", views.capsule_progress, name="capsule-progress"),
    path("progress/", views.my_progress, name="my-progress"),
]

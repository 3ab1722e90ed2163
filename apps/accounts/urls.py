from django.urls import path

from apps.accounts import views

app_name = "accounts"

urlpatterns = [
    path("profile/", views.profile, name="profile"),
    path("profile/data.json", views.data_export, name="data-export"),
    path("delete/", views.account_delete, name="delete"),
]

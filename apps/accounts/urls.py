from django.urls import path

from apps.accounts import views

app_name = "accounts"

urlpatterns = [
    path("profile/", views.profile, name="profile"),
    path("profile/data.json", views.data_export, name="data-export"),
    path("delete/", views.account_delete, name="delete"),
    # Ahead of allauth's own (config/urls.py includes this first): the same views, 404 without GitHub keys.
    path("github/login/", views.github_login, name="github-login"),
    path("github/login/callback/", views.github_callback, name="github-callback"),
]

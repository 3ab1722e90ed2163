from allauth.account.decorators import secure_admin_login
from django.contrib import admin
from django.urls import include, path

from config.health import health, status

admin.site.site_header = "Kernel Engineering admin"
admin.site.site_title = "Kernel Engineering admin"
admin.site.index_title = "Books, readers and the judge"
# Admin sign-in goes through allauth, so its rate limits and verification apply there too.
admin.site.login = secure_admin_login(admin.site.login)

handler400 = "config.errors.bad_request"

urlpatterns = [
    path("", include("apps.pages.urls")),
    path("", include("apps.reading.urls")),
    path("", include("apps.subscriptions.urls")),
    path("", include("apps.reviews.urls")),
    path("", include("apps.submissions.urls")),
    path("health/", health, name="health"),
    path("health/status/", status, name="health-status"),
    path("accounts/", include("apps.accounts.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
]

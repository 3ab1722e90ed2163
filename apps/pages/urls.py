from django.contrib.sitemaps.views import sitemap
from django.urls import path

from apps.pages import discovery, legal, views

app_name = "pages"

urlpatterns = [
    path("", views.landing, name="landing"),
    path("capsules/<slug:slug>/progress/", views.capsule_progress, name="capsule-progress"),
    path("progress/", views.my_progress, name="my-progress"),
    path("terms/", legal.legal_page, {"page": "terms"}, name="terms"),
    path("privacy/", legal.legal_page, {"page": "privacy"}, name="privacy"),
    path("refunds/", legal.legal_page, {"page": "refunds"}, name="refunds"),
    path("contact/", legal.legal_page, {"page": "contact"}, name="contact"),
    # For crawlers, feed readers and link previews: public text only (apps/pages/discovery.py).
    path(
        "sitemap.xml",
        discovery.public_for_an_hour(sitemap),
        {"sitemaps": discovery.SITEMAPS, "template_name": "pages/sitemap.xml"},
        name="sitemap",
    ),
    path("robots.txt", discovery.robots_txt, name="robots"),
    path("feed/", discovery.capsule_feed, name="feed"),
    path("share/book.png", discovery.share_image_book, name="share-image-book"),
    path("share/parts/<int:number>.png", discovery.share_image_part, name="share-image-part"),
]

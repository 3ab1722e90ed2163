"""The Sites framework's one row (SITE_ID) follows SITE_URL: allauth's emails name the site and its domain from it
("Hello from ...", "Thank you for using ..."), and anything else built on django.contrib.sites gets the site's
real address instead of the placeholder example.com that Django's own migration leaves behind."""

from urllib.parse import urlsplit

from django.conf import settings

SITE_NAME = "Kernel Engineering"


def site_sync_from_settings(*, using: str = "default", **kwargs) -> None:
    """post_migrate of django.contrib.sites (after it created its row): writes SITE_URL's host[:port] into the Site
    row. make run and the deploy both migrate, so a changed SITE_URL reaches the row on the next start."""
    from django.contrib.sites.models import Site

    domain = urlsplit(settings.SITE_URL).netloc
    if not domain:
        return
    Site.objects.using(using).update_or_create(pk=settings.SITE_ID, defaults={"domain": domain, "name": SITE_NAME})
    Site.objects.clear_cache()

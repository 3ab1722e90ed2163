"""SITE_URL reaches what is built on django.contrib.sites: allauth's emails said "Hello from example.com!"."""

from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.sites.models import Site

from apps.accounts.sites import site_sync_from_settings

pytestmark = pytest.mark.django_db


def test_migrate_writes_the_site_url_into_the_sites_row():
    # The test database was migrated at set-up: the row follows the test settings' SITE_URL.
    site = Site.objects.get(pk=settings.SITE_ID)
    assert site.domain == urlsplit(settings.SITE_URL).netloc == "kernel.example.com"
    assert site.name == "Kernel Engineering"


def test_a_changed_site_url_reaches_allauths_emails(client, settings, mailoutbox, mail_worker):
    settings.SITE_URL = "http://127.0.0.1:8123"
    site_sync_from_settings(using="default")
    with mail_worker():
        response = client.post(
            "/accounts/signup/",
            {
                "email": "new.reader@example.org",
                "password1": "a-long-pass-phrase-42",
                "password2": "a-long-pass-phrase-42",
            },
        )
    assert response.status_code == 302
    (mail,) = mailoutbox
    assert "127.0.0.1:8123" in mail.body and "Kernel Engineering" in mail.body
    assert "example.com" not in mail.body

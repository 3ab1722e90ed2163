import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_no_github_button_without_keys(client, settings):
    settings.SOCIALACCOUNT_PROVIDERS = {"github": {"SCOPE": ["user:email"]}}

    page = client.get(reverse("account_login")).content.decode()

    assert "GitHub" not in page


def test_github_button_once_keys_are_configured(client, settings):
    settings.SOCIALACCOUNT_PROVIDERS = {
        "github": {"SCOPE": ["user:email"], "APPS": [{"client_id": "Iv1.abc", "secret": "s3cret"}]}
    }

    page = client.get(reverse("account_login")).content.decode()

    assert "GitHub" in page
    assert "/accounts/github/login/" in page

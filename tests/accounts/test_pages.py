"""Every account page renders inside the site's own layout (not allauth's bare one)."""

import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

PUBLIC_PAGES = [
    "account_login",
    "account_signup",
    "account_reset_password",
    "account_reset_password_done",
    "account_email_verification_sent",
]
SIGNED_IN_PAGES = ["account_change_password", "account_email", "account_logout", "accounts:profile"]


def _assert_site_layout(response):
    html = response.content.decode()
    assert response.status_code == 200
    assert 'href="#main"' in html  # the skip link of base.html
    assert "Kernel Engineering" in html
    assert "/static/css/" in html
    assert "htmx" in html  # django-htmx's script, for live fragments


@pytest.mark.parametrize("name", PUBLIC_PAGES)
def test_public_account_pages_use_the_site_layout(client, name):
    _assert_site_layout(client.get(reverse(name)))


@pytest.mark.parametrize("name", SIGNED_IN_PAGES)
def test_signed_in_account_pages_use_the_site_layout(client, reader, name):
    client.force_login(reader)
    _assert_site_layout(client.get(reverse(name)))


def test_header_shows_sign_in_state(client, reader, staff):
    anonymous = client.get("/").content.decode()
    assert reverse("account_login") in anonymous and "Sign out" not in anonymous

    client.force_login(reader)
    signed_in = client.get("/").content.decode()
    assert "Sign out" in signed_in and reader.display_name in signed_in
    assert reverse("admin:index") not in signed_in

    client.force_login(staff)
    assert reverse("admin:index") in client.get("/").content.decode()


def test_unknown_pages_are_a_friendly_404(client):
    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert 'href="#main"' in response.content.decode()


def test_every_stylesheet_script_and_icon_the_layout_links_is_served(client):
    html = client.get("/").content.decode()
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)

    assert any("htmx" in path for path in assets)
    assert any(path.endswith(".css") for path in assets)
    for path in assets:
        assert client.get(path).status_code == 200, path

"""Terms, privacy, refunds and contact: written once, filled with the operator's details from the settings, linked
from every page's footer and from the pricing page."""

import re

import pytest
from django.core import checks
from django.test import Client

from apps.pages.legal import operator_details_check

pytestmark = pytest.mark.django_db

PAGES = {
    "/terms/": "Terms of service",
    "/privacy/": "Privacy policy",
    "/refunds/": "Refund policy",
    "/contact/": "Contact",
}


@pytest.fixture
def operator(settings):
    settings.OPERATOR_NAME = "Kernel Books Ltd"
    settings.OPERATOR_EMAIL = "help@kernel-books.example"
    settings.OPERATOR_ADDRESS = "1 Warp Street, Dublin D02 XY00, Ireland"
    settings.OPERATOR_JURISDICTION = "Ireland"
    settings.REFUND_WINDOW_DAYS = 30


@pytest.mark.parametrize("path, title", PAGES.items())
def test_each_page_names_the_operator_from_the_settings(mini_book, operator, path, title):
    page = Client().get(path).content.decode()
    assert f'<h1 id="legal-title">{title}</h1>' in page
    assert "has not filled in their details" not in page
    if path != "/refunds/":
        assert "Kernel Books Ltd" in page
    if path in ("/terms/", "/contact/"):
        assert "1 Warp Street<br>Dublin D02 XY00<br>Ireland<br>" in page
    if path != "/privacy/":
        assert 'href="mailto:help@kernel-books.example"' in page


def test_the_policies_state_the_configured_terms(mini_book, operator):
    client = Client()
    assert "within 30 days of it" in client.get("/refunds/").content.decode()
    assert "governed by the law of Ireland" in client.get("/terms/").content.decode()


def test_without_operator_details_the_pages_say_so_and_deploy_checks_warn(mini_book, settings):
    settings.OPERATOR_NAME = settings.OPERATOR_EMAIL = settings.OPERATOR_ADDRESS = ""
    page = Client().get("/contact/").content.decode()
    assert "has not filled in their details yet" in page and "OPERATOR_NAME, OPERATOR_EMAIL, OPERATOR_ADDRESS" in page
    [warning] = operator_details_check()
    assert warning.id == "pages.W001" and warning.level == checks.WARNING
    settings.OPERATOR_NAME, settings.OPERATOR_EMAIL, settings.OPERATOR_ADDRESS = "A", "a@example.com", "B"
    assert operator_details_check() == []


def test_every_page_footer_and_the_pricing_page_link_to_them(mini_book, reader):
    links = {"/terms/", "/privacy/", "/refunds/", "/contact/"}
    for client in (Client(), Client()):
        for path in ("/", "/capsules/free-one/", "/pricing/"):
            page = client.get(path).content.decode()
            footer = page[page.index('<footer class="site-footer">') :]
            assert links <= set(re.findall(r'href="(/[a-z]+/)"', footer)), path
        client.force_login(reader)
    pricing = Client().get("/pricing/").content.decode()
    body = pricing[: pricing.index('<footer class="site-footer">')]
    assert 'href="/terms/"' in body and 'href="/refunds/"' in body and 'href="/privacy/"' in body


def test_anonymous_visitors_get_the_shared_cacheable_copy(mini_book, operator):
    response = Client().get("/terms/")
    assert response.status_code == 200 and "public" in response["Cache-Control"]

"""Content-Security-Policy (issue 20): every HTML page carries a strict policy (django-csp), and no template
holds what that policy would block (an inline script or an on*= handler). The browser tests (tests/e2e/conftest.py)
fail on any violation Chromium reports, which covers what the HTML alone cannot show (htmx, Ace, the admin)."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db

TEMPLATES = Path(settings.BASE_DIR) / "templates"


def _directives(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    parsed = {}
    for part in header.split(";"):
        name, *values = part.split()
        parsed[name] = values
    return parsed


def _assert_strict(response):
    policy = _directives(response)
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]  # no 'unsafe-inline', no 'unsafe-eval', no host but ours
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["base-uri"] == ["'self'"]
    assert policy["img-src"] == ["'self'", "data:"]
    assert policy["form-action"][0] == "'self'"
    assert all(host.startswith("https://") and host.endswith(".stripe.com") for host in policy["form-action"][1:])


def test_public_pages_carry_a_strict_policy(client, mini_book):
    capsule = mini_book.capsules.filter(access="free").first()
    urls = ["pages:landing", "subscriptions:pricing", "account_login", "reviews:review-list"]
    for url in [*map(reverse, urls), reverse("reading:capsule", kwargs={"slug": capsule.slug})]:
        response = client.get(url)
        assert response.status_code == 200, url
        _assert_strict(response)


def test_a_signed_in_page_and_the_admin_carry_it_too(client, mini_book, staff):
    client.force_login(staff)
    capsule = mini_book.capsules.first()
    urls = ["pages:my-progress", "admin:index", "admin:catalog_capsule_changelist"]
    for url in [*map(reverse, urls), reverse("admin:catalog_capsule_change", args=[capsule.pk])]:
        response = client.get(url)
        assert response.status_code == 200, url
        _assert_strict(response)


def test_the_figure_keeps_its_own_stricter_policy(client, mini_book):
    capsule = mini_book.capsules.filter(access="free").first()
    figure = capsule.figures.first()
    if figure is None:
        pytest.skip("the mini book's free capsule has no figure")
    response = client.get(reverse("reading:figure", kwargs={"slug": capsule.slug, "name": figure.name}))
    assert "sandbox" in response["Content-Security-Policy"]


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/(?:ld\+)?json\")[^>]*>", re.I)
EVENT_HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I)
JAVASCRIPT_URL = re.compile(r"(?:href|src|action)\s*=\s*[\"']\s*javascript:", re.I)


def test_no_template_has_inline_script_or_handlers():
    """script-src 'self' has no nonce: an inline script or handler added later would be blocked in the browser."""
    found = []
    for path in TEMPLATES.rglob("*.html"):
        text = path.read_text()
        for pattern in (INLINE_SCRIPT, EVENT_HANDLER, JAVASCRIPT_URL):
            found += [f"{path.relative_to(TEMPLATES)}: {match.group(0)[:80]}" for match in pattern.finditer(text)]
    assert found == []

"""The Content-Security-Policy in a real browser (issue 20): Chromium enforces it, and the shared fixture
(tests/e2e/conftest.py, no_csp_violations) sees what it blocks, so every other browser test fails on a violation."""

import pytest

from tests.e2e import conftest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_inline_script_is_blocked_and_the_fixture_sees_it(page, live_server, mini_book):
    response = page.goto(live_server.url + "/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.evaluate("window.ran = false")  # Playwright's own evaluation is not the page's script
    page.evaluate(
        """() => { const s = document.createElement("script"); s.textContent = "window.ran = true";
                   document.head.appendChild(s); }"""
    )
    page.wait_for_timeout(200)
    assert page.evaluate("window.ran") is False  # blocked: not run
    seen = list(conftest.CSP_VIOLATIONS)
    conftest.CSP_VIOLATIONS.clear()  # expected here; any other test would fail on it
    assert any("script-src" in text for text in seen), seen


def test_a_context_of_a_test_s_own_is_watched_too(browser, live_server, mini_book):
    context = browser.new_context()
    page = context.new_page()
    page.goto(live_server.url + "/")
    page.evaluate("""() => { const f = document.createElement("iframe"); f.src = "https://example.com/";
                             document.body.appendChild(f); }""")
    page.wait_for_timeout(300)
    context.close()
    seen = list(conftest.CSP_VIOLATIONS)
    conftest.CSP_VIOLATIONS.clear()
    assert any("frame-src" in text or "default-src" in text for text in seen), seen

"""Real-browser tests: Playwright driving Debian's chromium against Django's live server (all marked
`e2e` by tests/conftest.py)."""

import threading
import time

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started

from tests.e2e.pages import close_without_goodbyes

CHROMIUM = "/usr/bin/chromium"
# Without these, chromium tries to reach Google's services at start-up, which this closed
# network refuses, slowly.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread, and Django then refuses ORM
    # calls here; the tests' ORM calls between browser steps are plain synchronous ones.
    # Module scope, so the variable is gone again before other tests start subprocesses.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            watch_for_csp_violations(browser)
            yield browser
            browser.close()


# What Chromium reported as blocked by the Content-Security-Policy during the current test, in any page or frame
# of any context the test opened (the `page` fixture's or its own browser.new_context()).
CSP_VIOLATIONS: list[str] = []


def _record_csp_violation(message):
    # Chromium reports each blocked script, style, frame, form target... as a console error saying
    # "... because it violates the following Content Security Policy directive: ...".
    if "Content Security Policy" in message.text:
        CSP_VIOLATIONS.append(f"{message.text} (at {message.location.get('url', '?')})")


def watch_for_csp_violations(browser):
    """Every context this browser opens listens to its pages' consoles (frames included)."""
    new_context = browser.new_context

    def new_context_watched(*args, **kwargs):
        context = new_context(*args, **kwargs)
        context.on("console", _record_csp_violation)
        return context

    def new_page_watched(*args, **kwargs):
        # Browser.new_page makes its own context without going through new_context.
        context = new_context_watched(*args, **kwargs)
        page = context.new_page()
        page.on("close", lambda _page: context.close())
        return page

    browser.new_context = new_context_watched
    browser.new_page = new_page_watched


@pytest.fixture(autouse=True)
def no_csp_violations():
    """Every browser test also proves that the site's policy (config/settings/base.py) blocks nothing it uses."""
    CSP_VIOLATIONS.clear()
    yield
    violations, CSP_VIOLATIONS[:] = list(CSP_VIOLATIONS), []
    assert violations == [], "the Content-Security-Policy blocked:\n" + "\n".join(violations)


class RequestsInFlight:
    """Counts the live server's requests that have started and not yet finished.

    A page being closed still talks to the server: the reader saves its position with
    `sendBeacon` on `pagehide`. Such a request racing the database flush that ends each test
    deadlocks against it, so a test ends only once the server has been quiet for a moment.
    """

    def __init__(self):
        self.count = 0
        self.last_change = time.monotonic()
        self.lock = threading.Lock()

    def started(self, sender, **kwargs):
        if not self.from_live_server(sender):
            return
        with self.lock:
            self.count += 1
            self.last_change = time.monotonic()

    def finished(self, sender, **kwargs):
        if not self.from_live_server(sender):
            return
        with self.lock:
            self.count -= 1
            self.last_change = time.monotonic()

    @staticmethod
    def from_live_server(sender) -> bool:
        # Not the test client's requests (ClientHandler), which send the same signals: one whose
        # streamed answer (a download) was never read never finishes, and would hold up every later
        # browser test of the same xdist worker.
        return isinstance(sender, type) and issubclass(sender, WSGIHandler)

    def wait_until_quiet(self, quiet_s=0.3, timeout_s=10.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if self.count <= 0 and time.monotonic() - self.last_change >= quiet_s:
                    return
            time.sleep(0.05)
        raise AssertionError(f"the live server still had {self.count} request(s) in flight after {timeout_s} s")


@pytest.fixture(scope="session")
def requests_in_flight():
    counter = RequestsInFlight()
    request_started.connect(counter.started, weak=False)
    request_finished.connect(counter.finished, weak=False)
    yield counter
    request_started.disconnect(counter.started)
    request_finished.disconnect(counter.finished)


@pytest.fixture(autouse=True)
def quiet_server_before_flush(request, requests_in_flight):
    """Set up after pytest-django's live-server helper, so torn down before its flush, and after the
    pages' contexts close."""
    yield
    if "live_server" in request.fixturenames:
        requests_in_flight.wait_until_quiet()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    close_without_goodbyes(context)

"""Real-browser tests: Playwright driving Debian's chromium against Django's live server."""
import pytest

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


@pytest.fixture(autouse=True)
def _orm_beside_playwright(monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
    # between browser steps are still plain synchronous calls. Only for these tests, so
    # subprocesses started elsewhere in the suite don't inherit it.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()

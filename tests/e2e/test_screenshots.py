"""Screenshots of the landing page, a capsule, pricing and "my progress" on a phone and a desktop, in the
light and the dark theme, each page checked with axe-core (no serious or critical violation) and for
sideways overflow. The theme is chosen as a reader chooses it, with the header's Display settings, while
the system prefers the other scheme: the pictures show the site's own choice winning everywhere.

The pictures land in the test's tmp folder, or in SCREENSHOT_DIR when it is set, to be looked at:

    SCREENSHOT_DIR=/tmp/shots .venv/bin/pytest tests/e2e/test_screenshots.py -q
"""

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from apps.catalog.models import Capsule
from apps.reading.models import ReadingProgress
from apps.submissions.models import Exercise
from tests.e2e.pages import axe_problems, close_without_goodbyes, sign_in, wait_until_still
from tests.e2e.test_book_reader import DESKTOP, PHONE, demo_book, long_locked_capsule  # noqa: F401 (a fixture)
from tests.submissions.test_views import finished_row
from tests.subscriptions.conftest import (  # noqa: F401  (_stub_server, stripe_stub: fixtures)
    PRICE_MONTHLY,
    PRICE_YEARLY,
    _stub_server,
    stripe_stub,
)
from tests.subscriptions.stripe_stub import price_object
from tests.subscriptions.visitors import make_visitor

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def some_progress(reader) -> None:
    """A reader part-way through the book: two capsules completed, one half read, and judged submissions
    on the first two exercises (one passed and timed, one wrong), so my progress shows its ladders."""
    capsules = list(Capsule.objects.published().order_by("number")[:3])
    now = timezone.now()
    for capsule, position in zip(capsules, (1.0, 1.0, 0.5), strict=True):
        ReadingProgress.objects.create(
            user=reader,
            capsule=capsule,
            position=position,
            furthest_position=position,
            completed_at=now - timedelta(days=1) if position == 1.0 else None,
        )
    exercises = list(Exercise.objects.filter(problem="sgemm").order_by("capsule__number")[:2])
    assert len(exercises) == 2, "the demo book's GEMM ladder starts with two sgemm exercises"
    finished_row(reader, exercises[0], 4.1)
    finished_row(reader, exercises[1], None, status="failed")


def choose_theme(page, theme: str) -> None:
    """Through the header's Display settings, as a reader does (remembered in this browser)."""
    settings = page.locator("header.site-header").get_by_role("button", name="Display")
    settings.click()
    page.locator("#display-settings-panel").get_by_role("radio", name=theme.capitalize()).check()
    page.keyboard.press("Escape")
    expect(page.locator("#display-settings-panel")).to_be_hidden()
    expect(page.locator("html")).to_have_attribute("data-theme", theme)
    page.evaluate("document.activeElement.blur()")  # the picture without the button's focus ring


def test_screenshots_of_the_landing_page_a_capsule_pricing_and_my_progress(
    browser, live_server, demo_book, stripe_stub, tmp_path
):
    stripe_stub.prices[PRICE_MONTHLY] = price_object(PRICE_MONTHLY, amount=1200)
    stripe_stub.prices[PRICE_YEARLY] = price_object(PRICE_YEARLY, amount=12000, interval="year")
    subscriber = make_visitor("active", email="shots@example.org", name="Sam Shots")
    some_progress(subscriber)
    capsule = long_locked_capsule()
    folder = Path(os.environ["SCREENSHOT_DIR"]) if os.environ.get("SCREENSHOT_DIR") else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    shots: list[Path] = []
    problems: list[str] = []

    def look(page, name: str, *, full_page: bool = False, axe: bool = True) -> None:
        shots.append(shoot(page, folder, name, full_page=full_page))
        if axe:
            problems.extend(f"{name}: {problem}" for problem in axe_problems(page))

    for label, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
        for theme in ("light", "dark"):
            other = "dark" if theme == "light" else "light"
            context = browser.new_context(viewport=viewport, color_scheme=other)
            page = context.new_page()
            page.set_default_timeout(15_000)
            name = f"{label}-{theme}"

            # A first visit: the landing page, the paywall and the plans, as anyone sees them.
            page.goto(live_server.url + "/")
            choose_theme(page, theme)
            look(page, f"landing-anonymous-{name}", full_page=True)
            page.goto(live_server.url + capsule.get_absolute_url())
            look(page, f"paywall-{name}", axe=False)  # axe: test_book_reader's accessibility test
            page.goto(live_server.url + "/pricing/")
            expect(page.locator(".pricing-plan").first).to_contain_text("€12")
            look(page, f"pricing-{name}", full_page=True)

            # A subscriber: the contents with progress, a long capsule being read, my progress.
            sign_in(page, live_server.url, subscriber.email)
            expect(page.locator("html")).to_have_attribute("data-theme", theme)  # remembered across pages
            page.goto(live_server.url + "/")
            look(page, f"landing-subscriber-{name}", full_page=True)
            page.goto(live_server.url + capsule.get_absolute_url())
            page.wait_for_load_state("load")
            expect(page.locator(".paywall")).to_have_count(0)
            look(page, f"capsule-{name}")
            page.locator("#capsule-body .code-block").first.scroll_into_view_if_needed()
            look(page, f"capsule-code-{name}", axe=False)
            figure = page.locator("#capsule-body figure").first
            figure.scroll_into_view_if_needed()
            # The figures load lazily: wait for this one to arrive, or the picture shows its empty box.
            figure.locator("img").evaluate("img => img.complete && img.naturalWidth > 0 || img.decode()")
            figure.scroll_into_view_if_needed()  # again, now that it has its height
            look(page, f"capsule-figure-{name}", axe=False)
            # On a phone the book contents are one closed line above the capsule; on a desktop a sidebar.
            nav = page.locator(".reader-nav__details")
            if label == "phone":
                expect(nav).not_to_have_attribute("open", "")
                page.get_by_text("Book contents").click()
                expect(nav.locator("[aria-current=page]")).to_be_visible()
                page.evaluate("window.scrollTo({top: 0, behavior: 'instant'})")
                look(page, f"capsule-contents-open-{name}", axe=False)
            else:
                expect(nav).to_have_attribute("open", "")
                expect(nav.locator("[aria-current=page]")).to_be_in_viewport()
            page.goto(live_server.url + "/progress/")
            expect(page.locator(".problem-ladder").first).to_be_visible()
            # The ladder chart's labels stay legible (scaled into a phone's card they were 4 px high).
            chart_label = page.locator(".problem-ladder .chart__label:visible").first.bounding_box()
            assert chart_label["height"] >= 9, chart_label
            look(page, f"progress-{name}", full_page=True)
            close_without_goodbyes(context)

    for path in shots:
        assert path.stat().st_size > 10_000, f"{path.name} looks blank"
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)


def shoot(page, folder: Path, name: str, *, full_page: bool = False) -> Path:
    """One screenshot, after checking that nothing makes the page scroll sideways."""
    wait_until_still(page)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{name}: the page is {overflow}px wider than the viewport"
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path

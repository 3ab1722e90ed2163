"""The book in a real browser: the free preview and the paywall, a subscriber's reading position and
accessibility (axe-core). Screenshots at phone and desktop sizes, in both themes: test_screenshots.py."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from apps.catalog.models import Capsule
from apps.catalog.services import book_import
from apps.reading.models import ReadingProgress
from tests.conftest import LOCKED_SENTINELS
from tests.e2e.pages import axe_problems, close_without_goodbyes, sign_in, wait_until_true
from tests.subscriptions.conftest import wait_for
from tests.subscriptions.visitors import make_visitor

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DEMO_BOOK = Path(__file__).resolve().parents[2] / "content" / "kernel-engineering"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}


@pytest.fixture
def demo_book(db):
    """The real demo book, through the importer (long capsules with code, maths, tables and figures)."""
    book_import(folder=DEMO_BOOK)


def long_locked_capsule() -> Capsule:
    """The longest locked capsule of the demo book that has code and a figure."""
    candidates = [
        c
        for c in Capsule.objects.published().filter(access=Capsule.Access.LOCKED)
        if "<pre>" in c.body_html and "<figure" in c.body_html
    ]
    assert candidates, "the demo book has no locked capsule with code and a figure"
    return max(candidates, key=lambda c: len(c.body_text))


def reading_position(page) -> float:
    """The same fraction reader.js saves: how far the text has been scrolled past."""
    return page.evaluate(
        """() => {
            const rect = document.getElementById("capsule-body").getBoundingClientRect();
            const total = rect.height - window.innerHeight;
            return Math.min(1, Math.max(0, -rect.top / total));
        }"""
    )


def scroll_to_position(page, position: float) -> None:
    page.evaluate(
        """(position) => {
            const rect = document.getElementById("capsule-body").getBoundingClientRect();
            const top = window.scrollY + rect.top + position * (rect.height - window.innerHeight);
            window.scrollTo({top, behavior: "instant"});
        }""",
        position,
    )


def is_position_save(response) -> bool:
    return response.request.method == "POST" and re.search(r"/capsules/[^/]+/position/$", response.url) is not None


# --- (a) Anonymous visitor: the free preview, then the paywall ------------------------------------
def test_an_anonymous_visitor_reads_a_free_capsule_and_is_stopped_at_a_locked_one(page, live_server, mini_book):
    page.goto(live_server.url + "/")
    expect(page.get_by_role("heading", level=1, name="Mini Book")).to_be_visible()
    expect(page.get_by_role("link", name=re.compile("Subscribe"))).to_be_visible()

    page.get_by_role("link", name=re.compile("Free one: welcome")).click()
    expect(page).to_have_url(re.compile(r"/capsules/free-one/$"))
    body = page.locator("#capsule-body")
    expect(body).to_contain_text("Everyone may read this free text about warps.")
    expect(body.locator("figure figcaption")).to_contain_text("Figure 1.")
    expect(body.locator("math")).to_have_count(1)
    expect(page.get_by_role("link", name=re.compile("Sign in")).last).to_be_visible()  # "sign in to save your place"

    page.get_by_role("link", name=re.compile("Next.*Locked two")).click()
    expect(page).to_have_url(re.compile(r"/capsules/locked-two/$"))
    main = page.locator("main")
    expect(main.get_by_role("heading", level=1)).to_contain_text("Locked two: tiling")
    expect(main).to_contain_text("A locked capsule about shared-memory tiling.")  # summary
    expect(main.locator(".capsule__outline li")).to_have_text(["Tiles", "Code"])  # outline
    paywall = main.locator(".paywall")
    expect(paywall).to_contain_text("This capsule is for subscribers")
    expect(paywall.get_by_role("link", name="Sign in")).to_have_attribute(
        "href", re.compile(r"/accounts/login/\?next=/capsules/locked-two/")
    )
    expect(paywall.get_by_role("link", name="See plans")).to_be_visible()
    expect(page.locator("#capsule-body")).to_have_count(0)
    html = page.content()
    for sentinel in LOCKED_SENTINELS:
        assert sentinel not in html
    assert "shared memory.</p>" not in html and "__global__" not in html

    # The locked figure is not served either, even to someone who guesses its address.
    response = page.request.get(live_server.url + "/capsules/locked-two/figures/02-secret.svg")
    assert response.status == 404

    # The sign-in path leads back to the capsule.
    paywall.get_by_role("link", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/capsules/locked-two/"))


# --- (b) Subscriber: scroll, leave, come back, resume; mark complete ------------------------------
def test_a_subscriber_resumes_a_long_locked_capsule_where_they_left_off(page, live_server, demo_book):
    subscriber = make_visitor("active")
    capsule = long_locked_capsule()
    sign_in(page, live_server.url, subscriber.email)

    page.goto(live_server.url + capsule.get_absolute_url())
    expect(page.locator("#capsule-body")).to_be_visible()
    expect(page.locator(".paywall")).to_have_count(0)
    page.wait_for_load_state("load")  # figures in place, so the page has its final height
    assert page.evaluate("document.documentElement.scrollHeight") > 4 * page.viewport_size["height"], (
        "capsule too short"
    )

    with page.expect_response(is_position_save) as saved:
        scroll_to_position(page, 0.5)
    assert saved.value.ok
    left_at_y = page.evaluate("window.scrollY")
    left_at = reading_position(page)
    assert 0.45 < left_at < 0.55

    progress = ReadingProgress.objects.get(user=subscriber, capsule=capsule)
    assert progress.position == pytest.approx(left_at, abs=0.02)
    assert progress.furthest_position == pytest.approx(left_at, abs=0.02)
    assert progress.completed_at is None
    expect(page.locator(".capsule__progress")).to_have_text(f"{round(left_at * 100)}% read")  # updated in place

    # Away to the contents, where the row shows the progress and "Continue reading" leads back.
    page.goto(live_server.url + "/")
    row = page.locator(".capsule-row", has=page.locator(f'a[href="{capsule.get_absolute_url()}"]'))
    expect(row.locator("progress")).to_have_attribute("value", str(progress.percent))
    page.get_by_role("link", name=f"Continue reading: {capsule.title}").click()

    expect(page).to_have_url(re.compile(re.escape(capsule.get_absolute_url()) + "$"))
    notice = page.locator(".resume-notice")
    expect(notice).to_contain_text(f"Resumed where you left off ({round(left_at * 100)}%)")
    page.wait_for_load_state("load")
    # The figures above the place have arrived (the reader loads them at once and keeps the place).
    wait_until_true(page, "() => [...document.querySelectorAll('#capsule-body img')].every(img => img.complete)")
    assert reading_position(page) == pytest.approx(left_at, abs=0.02)
    assert page.evaluate("window.scrollY") == pytest.approx(
        left_at_y, abs=0.02 * page.evaluate("document.documentElement.scrollHeight")
    )

    # Mark complete without a page reload (htmx swaps the form).
    page.evaluate("window.__same_page = true")
    page.get_by_role("button", name="Mark as complete").click()
    expect(page.locator("#complete-form")).to_contain_text("You completed this capsule.")
    assert page.evaluate("window.__same_page === true")
    progress.refresh_from_db()
    assert progress.completed_at is not None and progress.percent == 100
    page.get_by_role("button", name="Mark as not complete").click()
    expect(page.get_by_role("button", name="Mark as complete")).to_be_visible()
    progress.refresh_from_db()
    assert progress.completed_at is None


# --- (c) Accessibility: axe-core, no serious or critical violations ------------------------------
@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_the_landing_page_and_the_reader_have_no_serious_accessibility_violations(
    browser, live_server, demo_book, color_scheme
):
    subscriber = make_visitor("active")
    capsule = long_locked_capsule()
    free = Capsule.objects.published().filter(access=Capsule.Access.FREE).order_by("number").first()
    problems = {}
    for viewport in (DESKTOP, PHONE):
        context = browser.new_context(viewport=viewport, color_scheme=color_scheme)
        page = context.new_page()
        page.set_default_timeout(15_000)
        name = f"{viewport['width']}px {color_scheme}"

        page.goto(live_server.url + "/")
        problems[f"landing, anonymous, {name}"] = axe_problems(page)
        page.goto(live_server.url + capsule.get_absolute_url())
        problems[f"paywall, anonymous, {name}"] = axe_problems(page)
        if free:
            page.goto(live_server.url + free.get_absolute_url())
            problems[f"free capsule, anonymous, {name}"] = axe_problems(page)

        sign_in(page, live_server.url, subscriber.email)
        page.goto(live_server.url + capsule.get_absolute_url())
        page.wait_for_load_state("load")
        problems[f"reader, subscriber, {name}"] = axe_problems(page)
        scroll_to_position(page, 0.5)  # the resume notice on the next visit, once the place is saved
        wait_for(
            lambda: ReadingProgress.objects.filter(user=subscriber, capsule=capsule, position__gt=0.4).exists(),
            message="the saved reading position",
        )
        page.goto(live_server.url + "/")
        problems[f"landing, subscriber, {name}"] = axe_problems(page)
        page.goto(live_server.url + capsule.get_absolute_url())
        expect(page.locator(".resume-notice")).to_be_visible()
        problems[f"reader resumed, subscriber, {name}"] = axe_problems(page)
        close_without_goodbyes(context)
    found = [f"{where}: {problem}" for where, listed in problems.items() for problem in listed]
    assert not found, "axe-core found serious or critical violations:\n" + "\n".join(found)

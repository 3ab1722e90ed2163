"""Issue 44 on a 390 px phone, in a real browser: capsule 58's first equation scrolls sideways in its own box with a
visible cue (the page itself does not), the figures' text is at least 10 px as drawn on the screen (a tap opens the
drawing at full size), and a link straight to footnote 1 of capsule 2 lands on it on a cold load (the figures above
it keep their boxes before they load). At 1280 px the exercise's table of submissions fits its box."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from apps.catalog.services import book_import
from apps.submissions import services
from tests.e2e.pages import close_without_goodbyes, sign_in, wait_until_still
from tests.submissions.conftest import NAIVE
from tests.submissions.test_views import judged, locked_exercise, subscriber  # noqa: F401  (fixtures)
from tests.subscriptions.visitors import make_visitor

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DEMO_BOOK = Path(__file__).resolve().parents[2] / "content" / "kernel-engineering"
PHONE = {"width": 390, "height": 844}
CAPSULE_58 = "/capsules/batched-decode-the-gemv-problem/"
CAPSULE_2 = "/capsules/the-three-regimes/"

# Each figure's smallest text as it shows: the drawing's own font sizes (read from its SVG, laid out in a hidden
# box so that its styles apply) times the scale of the <img>'s content box over the drawing's viewBox.
FIGURE_TEXT = """async () => {
  const found = [];
  for (const img of document.querySelectorAll("#capsule-body figure img")) {
    const svgText = await (await fetch(img.getAttribute("src"))).text();
    const box = document.createElement("div");
    box.style.cssText = "position: absolute; left: -10000px; top: 0; visibility: hidden";
    box.innerHTML = svgText;
    document.body.appendChild(box);
    const svg = box.querySelector("svg");
    const sizes = [...svg.querySelectorAll("text, tspan")]
      .filter(t => t.textContent.trim())
      .map(t => parseFloat(getComputedStyle(t).fontSize));
    const style = getComputedStyle(img);
    const content = img.getBoundingClientRect().width - ["paddingLeft", "paddingRight", "borderLeftWidth",
      "borderRightWidth"].reduce((sum, side) => sum + parseFloat(style[side]), 0);
    found.push({
      src: img.getAttribute("src"),
      width: content,
      smallest: Math.min(...sizes) * content / svg.viewBox.baseVal.width,
      sized: img.hasAttribute("width") && img.hasAttribute("height"),
      link: img.parentElement.matches("a.figure-link") ? img.parentElement.getAttribute("href") : null,
    });
    box.remove();
  }
  return found;
}"""


@pytest.fixture
def demo_book(transactional_db):
    book_import(folder=DEMO_BOOK)


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    close_without_goodbyes(context)


def test_capsule_58s_first_equation_scrolls_and_its_figures_read_on_a_phone(phone, live_server, demo_book):
    reader = make_visitor("active", email="phone-reader@example.org")
    sign_in(phone, live_server.url, reader.email)
    phone.goto(live_server.url + CAPSULE_58)
    first = phone.locator("#capsule-body .math-block").first
    expect(first).to_be_visible()
    box = first.evaluate(
        """el => ({scroll: el.scrollWidth, client: el.clientWidth, overflow: getComputedStyle(el).overflowX,
                 mask: getComputedStyle(el).maskImage || getComputedStyle(el).webkitMaskImage,
                 classes: el.className, tabindex: el.getAttribute("tabindex")})"""
    )
    assert box["scroll"] > box["client"] and box["overflow"] == "auto", box
    # The cue: the far edge fades while more of the formula lies beyond it, and the box takes the keyboard's focus.
    assert "scroll-cue--end" in box["classes"] and "gradient" in box["mask"] and box["tabindex"] == "0", box
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # the page does not scroll
    if os.environ.get("SCREENSHOT_DIR"):
        first.scroll_into_view_if_needed()
        phone.screenshot(path=str(Path(os.environ["SCREENSHOT_DIR"]) / "phone-58-equation.png"))

    first.evaluate("el => el.scrollBy(10000, 0)")  # scrolled to its end, the cue moves to the start
    phone.wait_for_timeout(100)
    classes = first.evaluate("el => el.className")
    assert "scroll-cue--start" in classes and "scroll-cue--end" not in classes, classes

    figures = phone.evaluate(FIGURE_TEXT)
    if os.environ.get("SCREENSHOT_DIR"):
        drawing = phone.locator("#capsule-body figure").nth(1)
        drawing.scroll_into_view_if_needed()
        phone.wait_for_timeout(500)
        phone.screenshot(path=str(Path(os.environ["SCREENSHOT_DIR"]) / "phone-58-figure.png"))
    assert len(figures) >= 2, figures
    small = [figure for figure in figures if figure["smallest"] < 10]
    assert not small, small
    assert all(figure["sized"] and figure["link"] == figure["src"] for figure in figures), figures  # tap: full size


def test_footnote_1_of_capsule_2_lands_on_a_cold_load(phone, live_server, demo_book):
    # Straight to the note from outside, nothing cached: the text above it (two figures) must keep its place.
    phone.goto(live_server.url + CAPSULE_2 + "#fn1", wait_until="load")
    note = phone.locator("#fn1")
    expect(note).to_be_attached()
    assert 0 <= note.evaluate("el => el.getBoundingClientRect().top") < PHONE["height"]  # at once: no glide down
    images = phone.evaluate(
        "[...document.querySelectorAll('#capsule-body figure img')].map(i => [i.getAttribute('width'), i.height])"
    )
    assert images and all(width and height > 0 for width, height in images), images
    wait_until_still(phone)
    phone.wait_for_timeout(500)  # late layout (scripts, fonts) would have moved it by now
    top, bottom, height = phone.evaluate(
        "(() => { const r = document.getElementById('fn1').getBoundingClientRect(); "
        "return [r.top, r.bottom, window.innerHeight]; })()"
    )
    assert 0 <= top < height and bottom > 0, (top, bottom, height)


def test_the_table_of_submissions_fits_its_box_at_1280(browser, live_server, locked_exercise, subscriber):  # noqa: F811
    for pct in (1.1, 9.3, 12.5):
        judged(subscriber, locked_exercise, pct=pct)
    for _ in range(2):  # waiting, with no GPU online: the longest status lines the table shows
        services.submission_create(user=subscriber, exercise=locked_exercise, source=NAIVE)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_in(page, live_server.url, subscriber.email)
    page.goto(live_server.url + "/capsules/locked-two/progress/")
    region = page.locator(".submissions .table-wrap")
    expect(region).to_be_visible()
    sizes = region.evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert sizes[0] <= sizes[1] + 1, sizes
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    if os.environ.get("SCREENSHOT_DIR"):
        page.screenshot(path=str(Path(os.environ["SCREENSHOT_DIR"]) / "submissions-1280.png"), full_page=True)
    close_without_goodbyes(context)

"""Issue 29: the exercise charts' labels were about 5 px high on a phone (the wide drawing scaled into the card).
Every chart text that shows is at least 10 px on a phone and on a desktop; the phone gets the narrow drawing."""

import pytest
from playwright.sync_api import expect

from tests.e2e.pages import sign_in
from tests.submissions.test_roofline import judged_with_ceilings
from tests.submissions.test_views import judged, locked_exercise, subscriber  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)

# The rendered size of each visible chart text: its font size in the SVG's units times the SVG's scale on screen.
TEXT_SIZES = """() => [...document.querySelectorAll('svg.chart text')]
  .filter(t => t.getClientRects().length > 0)
  .map(t => {
    const svg = t.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    return {text: t.textContent, px: px, variant: svg.getAttribute('class')};
  })"""


@pytest.mark.parametrize("width, variant", [(360, "chart--narrow"), (1280, "chart--wide")])
def test_chart_labels_stay_legible(browser, live_server, locked_exercise, subscriber, width, variant):  # noqa: F811
    judged(subscriber, locked_exercise, pct=1.1)
    judged(subscriber, locked_exercise, pct=9.3)
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    sign_in(page, live_server.url, subscriber.email)
    page.goto(live_server.url + "/capsules/locked-two/progress/")
    expect(page.locator(".submission-charts svg[role=img]:visible").first).to_be_visible()
    sizes = page.evaluate(TEXT_SIZES)
    assert len(sizes) >= 4, sizes
    assert all(variant in size["variant"] for size in sizes), sizes  # one drawing of each chart shows
    small = [size for size in sizes if size["px"] < 10]
    assert not small, small
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    context.close()


@pytest.mark.parametrize("width, variant", [(390, "chart--narrow"), (1280, "chart--wide")])
def test_the_roofline_on_the_report_stays_legible(browser, live_server, locked_exercise, subscriber, width, variant):  # noqa: F811
    """Issue 43: the report's roofline (axes, roofs, ridge, the labelled points, the legend) on a 390 px phone."""
    submission = judged_with_ceilings(subscriber, locked_exercise, pct=41.0)
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    sign_in(page, live_server.url, subscriber.email)
    page.goto(f"{live_server.url}/submissions/{submission.public_id}/")
    expect(page.locator(".submission-roofline svg[role=img]:visible")).to_be_visible()
    sizes = page.evaluate(TEXT_SIZES)
    assert len(sizes) >= 10, sizes
    assert all(variant in size["variant"] for size in sizes), sizes
    small = [size for size in sizes if size["px"] < 10]
    assert not small, small
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    context.close()

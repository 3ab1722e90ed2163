"""Issue 17: a submission's report shows the source coloured as the book's code is, and its "compare with"
control is as wide as its content and as tall as its button, on a desktop and on a phone."""

import pytest
from playwright.sync_api import expect

from tests.e2e.pages import axe_problems, sign_in
from tests.submissions.test_views import judged, locked_exercise, subscriber  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def colour(locator) -> str:
    return locator.evaluate("el => getComputedStyle(el).color")


def test_the_report_source_is_highlighted_like_the_book_and_compare_fits_its_content(
    page, live_server, locked_exercise, subscriber
):  # noqa: F811
    judged(subscriber, locked_exercise, pct=1.1)
    latest = judged(subscriber, locked_exercise, pct=1.3)
    sign_in(page, live_server.url, subscriber.email)
    page.goto(live_server.url + f"/submissions/{latest.public_id}/")

    source = page.locator("section[aria-labelledby=source-title]")
    listing = source.locator("pre.numbered--source")
    # Pygments' token classes, in the reader's colours: a type, a keyword and a comment each differ from plain text.
    plain = colour(listing.locator(".n").first)
    for token in (".kt", ".k", ".c1"):
        expect(listing.locator(token).first).to_be_visible()
        assert colour(listing.locator(token).first) != plain, token
    # Still numbered line by line, for the compiler's line numbers and links to a line.
    expect(listing.locator("#src-L1")).to_have_attribute("data-n", "1")
    assert listing.locator(".numbered__line").count() == len(latest.source.split("\n")) - latest.source.endswith("\n")

    select = page.get_by_label("Compare with")
    button = page.get_by_role("button", name="Show the diff")
    card = source.bounding_box()
    box, button_box = select.bounding_box(), button.bounding_box()
    assert box["width"] < card["width"] * 0.75, (box, card)  # its options' width, not the card's
    assert abs(box["height"] - button_box["height"]) <= 4, (box, button_box)
    problems = axe_problems(page)

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert select.bounding_box()["x"] + select.bounding_box()["width"] <= 390
    problems += axe_problems(page)
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)

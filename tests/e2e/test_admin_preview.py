"""Issue 17: editing a capsule in admin shows a live preview before saving, in the reader's own styles."""

import pytest
from playwright.sync_api import expect

from apps.catalog.models import Capsule
from tests.e2e.pages import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_capsule_preview_follows_the_typing_before_anything_is_saved(page, live_server, mini_book, staff):
    capsule = Capsule.objects.get(slug="locked-three")
    before = (capsule.revision, capsule.body)
    sign_in(page, live_server.url, staff.email)
    page.goto(live_server.url + f"/admin/catalog/capsule/{capsule.pk}/change/")

    frame = page.frame_locator("iframe.capsule-preview")
    expect(frame.locator(".prose.capsule__body")).to_contain_text("Warp tiles sit between blocks and threads.")
    # Not cut off (issue 17): the preview takes the form's whole width, like the Markdown it shows, and is tall
    # enough to read in; what does not fit scrolls inside it.
    preview = page.locator("iframe.capsule-preview").bounding_box()
    markdown = page.locator("textarea[name=body]").bounding_box()
    assert preview["width"] >= 0.95 * markdown["width"], (preview, markdown)
    assert preview["height"] >= 0.6 * page.viewport_size["height"], preview
    # The outline is lines to edit, not JSON.
    expect(page.locator("textarea[name=outline]")).not_to_have_value("[")

    body = page.locator("textarea[name=body]")
    body.press("End")
    body.press("Control+End")
    page.keyboard.type("\n\n## Live section\n\nIt costs $x^2$ and <b>nothing</b>.\n")
    expect(frame.get_by_role("heading", name="Live section")).to_be_visible()
    expect(frame.locator("math")).to_have_count(1)
    expect(frame.locator(".prose")).to_contain_text("<b>nothing</b>")  # raw HTML shown as text, as for readers
    expect(page.locator(".capsule-preview__status")).to_have_text("Preview updated (not saved).")
    # The reader's stylesheet, not the admin's: the book's serif text face on the rendered paragraph.
    font = frame.locator(".prose p").first.evaluate("el => getComputedStyle(el).fontFamily")
    assert "Charter" in font or "serif" in font, font

    # A Markdown error is shown in the preview, not a broken page.
    page.keyboard.type("\n$\\frac{1}{$\n")
    expect(frame.get_by_role("alert")).to_contain_text("cannot be rendered")

    capsule.refresh_from_db()
    assert (capsule.revision, capsule.body) == before  # nothing saved

"""Ratings and reviews in a real browser: a reader rates with the keyboard only, sees their review
and the new average swapped in place (htmx), edits it; the same works with JavaScript off."""

import re

import pytest
from django.contrib.sessions.models import Session
from playwright.sync_api import expect

from apps.reviews import services
from apps.reviews.models import Review
from tests.e2e.pages import axe_problems, sign_in
from tests.factories import PASSWORD
from tests.reviews.conftest import make_reader

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

OTHER_TEXT = "Dense but rewarding; I needed two passes over the memory chapters."
MY_TEXT = "The tiling chapter finally made shared-memory blocking click for me."


@pytest.fixture
def readers(mini_book):
    other = make_reader(mini_book, name="Otto Other")
    services.review_create(user=other, book=mini_book, rating=2, text=OTHER_TEXT)
    return make_reader(mini_book, name="Kim Keyboard", email="kim@example.org")


def test_a_reader_rates_with_the_keyboard_sees_the_new_average_and_edits(page, live_server, readers):
    sign_in(page, live_server.url, readers.email)
    page.goto(live_server.url + "/#reviews")
    block = page.locator("#reviews-block")
    expect(block.get_by_test_id("average-rating")).to_have_text("2.0")

    # Keyboard only: into the radio group, arrows to four stars, Tab through the fields, Enter.
    stars = block.get_by_role("group", name="Your rating")
    stars.get_by_role("radio", name="1 star").focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(stars.get_by_role("radio", name="4 stars")).to_be_checked()
    assert page.evaluate("document.activeElement.value") == "4"
    problems = axe_problems(page)  # the form, a focused star and all
    page.keyboard.press("Tab")
    page.keyboard.type("Worth every minute")
    page.keyboard.press("Tab")
    page.keyboard.type(MY_TEXT)
    page.keyboard.press("Tab")
    expect(block.get_by_role("button", name="Post review")).to_be_focused()
    with page.expect_response(lambda r: r.url.endswith("/reviews/new/") and r.request.method == "POST"):
        page.keyboard.press("Enter")

    # Swapped in place: no navigation, the review and the new average (2 + 4) / 2.
    expect(block.get_by_role("heading", name="Your review")).to_be_visible()
    expect(block.get_by_role("status")).to_contain_text("your review is posted")
    expect(block.get_by_test_id("average-rating")).to_have_text("3.0")
    expect(block.get_by_test_id("rating-count")).to_have_text("2 ratings")
    mine = block.locator("#your-review article.review")
    expect(mine).to_contain_text(MY_TEXT)
    expect(mine).to_contain_text("Worth every minute")
    expect(mine.get_by_test_id("review-rating")).to_have_text("Rated 4 out of 5 stars")
    expect(mine.locator(".avatar")).to_have_text("KK")
    expect(mine.locator("time")).to_have_text("today")
    # Shown once, as the reader's own, not again among the newest (issue 17); the others' still listed.
    expect(block.get_by_text(MY_TEXT)).to_have_count(1)
    expect(block.locator(".review-list")).not_to_contain_text(MY_TEXT)
    expect(block.locator(".review-list")).to_contain_text(OTHER_TEXT)
    assert page.url.endswith("/#reviews")
    problems += axe_problems(page)

    # Edit, again by keyboard: the form comes back filled in, four stars checked.
    block.get_by_role("link", name="Edit your review").focus()
    page.keyboard.press("Enter")
    stars = block.get_by_role("group", name="Your rating")
    expect(stars.get_by_role("radio", name="4 stars")).to_be_checked()
    expect(block.get_by_label("Your review (optional)")).to_have_value(MY_TEXT)
    stars.get_by_role("radio", name="4 stars").focus()
    page.keyboard.press("ArrowRight")
    expect(stars.get_by_role("radio", name="5 stars")).to_be_checked()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("End")
    page.keyboard.type(" Edited after the second read.")
    page.keyboard.press("Tab")
    expect(block.get_by_role("button", name="Save changes")).to_be_focused()
    page.keyboard.press("Enter")

    expect(block.get_by_test_id("average-rating")).to_have_text("3.5")
    mine = block.locator("#your-review article.review")
    expect(mine).to_contain_text("Edited after the second read.")
    expect(mine.locator(".review__edited")).to_have_text("edited")
    expect(mine.get_by_test_id("review-rating")).to_have_text("Rated 5 out of 5 stars")
    review = Review.objects.get(user=readers)
    assert (review.rating, review.edited_at is not None) == (5, True)
    assert review.text == MY_TEXT + " Edited after the second read."
    page.emulate_media(color_scheme="dark")
    problems += axe_problems(page)
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)


def test_a_reader_whose_session_expired_is_sent_to_sign_in_and_back_to_the_reviews(page, live_server, readers):
    sign_in(page, live_server.url, readers.email)
    page.goto(live_server.url + "/#reviews")
    block = page.locator("#reviews-block")
    block.get_by_role("radio", name="4 stars").focus()
    page.keyboard.press("Space")
    Session.objects.all().delete()  # the session ends while the page is open

    block.get_by_role("button", name="Post review").click()

    # The whole page goes to sign in (not the sign-in form swapped into the block), then back.
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/%23reviews$"))
    page.fill("input[name=login]", readers.email)
    page.fill("input[name=password]", PASSWORD)
    page.locator("main form button[type=submit]").click()
    expect(page).to_have_url(live_server.url + "/#reviews")
    expect(page.locator("#reviews-block").get_by_role("group", name="Your rating")).to_be_visible()
    assert not Review.objects.filter(user=readers).exists()


def test_rating_works_without_javascript(browser, live_server, readers):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(15_000)
    sign_in(page, live_server.url, readers.email)
    page.goto(live_server.url + "/")
    stars = page.get_by_role("group", name="Your rating")
    stars.get_by_role("radio", name="3 stars").focus()
    page.keyboard.press("Space")
    expect(stars.get_by_role("radio", name="3 stars")).to_be_checked()
    page.get_by_label("Your review (optional)").fill("<b>Too short</b>")
    page.get_by_role("button", name="Post review").click()
    expect(page.locator("main")).to_contain_text("Write at least 20 characters")  # the form page, text kept
    page.get_by_label("Your review (optional)").fill(MY_TEXT + " <script>document.title='owned'</script>")
    page.get_by_role("button", name="Post review").click()

    expect(page).to_have_url(re.compile(r"/#reviews$"))
    expect(page.locator("#your-review")).to_contain_text("<script>document.title='owned'</script>")  # shown as text
    expect(page.get_by_test_id("average-rating")).to_have_text("2.5")
    context.close()


def test_the_standalone_review_pages_post_and_come_back_to_the_reviews(page, live_server, readers):
    """Issue 17: "Post review" on /reviews/new/ and "Save changes" on /reviews/mine/edit/ did nothing with
    JavaScript on (their htmx target, the landing page's block, is not on those pages)."""
    sign_in(page, live_server.url, readers.email)
    page.goto(live_server.url + "/reviews/new/")
    page.get_by_role("group", name="Your rating").get_by_role("radio", name="4 stars").focus()
    page.keyboard.press("Space")
    page.get_by_label("Your review (optional)").fill(MY_TEXT)
    problems = axe_problems(page)
    page.get_by_role("button", name="Post review").click()

    expect(page).to_have_url(re.compile(r"/#reviews$"))
    expect(page.locator(".message--success")).to_contain_text("your review is posted")
    mine = page.locator("#your-review article.review")
    expect(mine).to_contain_text(MY_TEXT)
    expect(page.locator("#reviews-block").get_by_text(MY_TEXT)).to_have_count(1)
    assert Review.objects.get(user=readers).rating == 4

    page.goto(live_server.url + "/reviews/mine/edit/")
    stars = page.get_by_role("group", name="Your rating")
    expect(stars.get_by_role("radio", name="4 stars")).to_be_checked()
    stars.get_by_role("radio", name="2 stars").focus()
    page.keyboard.press("Space")
    page.get_by_label("Your review (optional)").fill(MY_TEXT + " Less sure now.")
    problems += axe_problems(page)
    page.get_by_role("button", name="Save changes").click()

    expect(page).to_have_url(re.compile(r"/#reviews$"))
    expect(page.locator("#your-review article.review")).to_contain_text("Less sure now.")
    review = Review.objects.get(user=readers)
    assert (review.rating, review.text) == (2, MY_TEXT + " Less sure now.")

    # Cancel on the edit page goes back to the reviews (its htmx swap had no block to land in either).
    page.goto(live_server.url + "/reviews/mine/edit/")
    page.get_by_role("link", name="Cancel").click()
    expect(page).to_have_url(re.compile(r"/#reviews$"))
    assert not problems, "axe-core found serious or critical violations:\n" + "\n".join(problems)

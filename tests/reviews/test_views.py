"""The reviews block on the landing page, the write/edit/delete/report routes (with and without
htmx) and the all-reviews page."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.selectors import anonymous_handle
from apps.reviews import services
from apps.reviews.models import Review, ReviewReport
from tests.reviews.conftest import TEXT, make_reader, recount, stored
from tests.subscriptions.visitors import make_visitor

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def block(response) -> str:
    html = response.content.decode()
    start = html.index('id="reviews-block"')
    return html[start:]


def write(client, user, *, htmx=False, url="/reviews/new/", **data):
    client.force_login(user)
    return client.post(url, {"rating": 4, "title": "", "text": TEXT, **data}, **(HTMX if htmx else {}))


# --- the block on the landing page -------------------------------------------------------------
def test_the_landing_page_shows_the_aggregate_distribution_and_newest_reviews(client, book):
    for stars, name, age in ((5, "Aarav Mehta", 8), (4, "Daniel Okafor", 62), (4, "Liam Chen", 95)):
        review = services.review_create(
            user=make_reader(book, name=name), book=book, rating=stars, text=f"{TEXT} ({name})"
        )
        Review.objects.filter(pk=review.pk).update(created_at=timezone.now() - timedelta(days=age))
    services.review_create(user=make_reader(book), book=book, rating=1)  # stars only: counted, not listed
    make_reader(book)  # a reader who has not rated

    html = block(client.get("/"))

    assert re.search(r'data-testid="average-rating">3\.5<', html)
    assert "4 ratings" in html and "5 readers have opened the book" in html
    bars = re.findall(r'rating-bars__label">(\d) stars?</th>.*?rating-bars__count num">(\d+)<', html, re.S)
    assert bars == [("5", "1"), ("4", "2"), ("3", "0"), ("2", "0"), ("1", "1")]
    names = re.findall(r'class="review__name">([^<]+)<', html)
    assert names == ["Aarav Mehta", "Daniel Okafor", "Liam Chen"]  # newest first
    assert ">AM</span>" in html and ">DO</span>" in html
    assert ">last week</time>" in html and ">2 months ago</time>" in html and ">3 months ago</time>" in html
    assert 'href="/reviews/"' in html and "All 3 reviews" in html


def test_the_block_says_what_each_visitor_can_do(client, book):
    assert "Sign in to rate this book" in block(client.get("/"))

    client.force_login(make_reader(book, verified=False))
    assert "verify your email address" in block(client.get("/"))

    client.force_login(make_reader(book, has_read=False))
    assert "Open a capsule first" in block(client.get("/"))

    client.force_login(make_reader(book))
    html = block(client.get("/"))
    assert "<legend>Your rating" in html
    assert len(re.findall(r'<input type="radio" name="rating" value="[1-5]"', html)) == 5
    assert re.search(
        r'<label for="review-rating_4" class="star-input__star"><span class="star-input__text">5 stars</span>', html
    )
    assert 'hx-post="/reviews/new/"' in html and 'action="/reviews/new/"' in html  # htmx, and a plain form without it


def test_a_subscriber_badge_marks_reviews_by_readers_with_full_access(client, book):
    for kind, name in (
        ("active", "Paying Reader"),
        ("complimentary", "Gifted Reader"),
        ("canceled", "Former Subscriber"),
        ("free", "Free Reader"),
    ):
        reader = make_visitor(kind, name=name)
        from tests.reviews.conftest import open_a_capsule

        open_a_capsule(reader, book)
        services.review_create(user=reader, book=book, rating=5, text=TEXT)

    html = block(client.get("/"))

    badges = dict(
        re.findall(r'class="review__name">([^<]+?)( <span class="badge badge--accent">Subscriber</span>)?</p>', html)
    )
    assert badges == {
        "Paying Reader": ' <span class="badge badge--accent">Subscriber</span>',
        "Gifted Reader": ' <span class="badge badge--accent">Subscriber</span>',
        "Former Subscriber": "",
        "Free Reader": "",
    }


def test_names_never_fall_back_to_the_email_address(client, book):
    reader = make_reader(book, name="", email="secret.person@example.org")
    services.review_create(user=reader, book=book, rating=3, text=TEXT)
    html = block(client.get("/"))
    # Issue 20: the anonymous handle of that reader (stable, from the id), not one "A reader" for all.
    assert "secret.person" not in html and re.search(rf'class="review__name">{anonymous_handle(reader.pk)}\b', html)


# --- writing ----------------------------------------------------------------------------------
def test_posting_without_javascript_redirects_back_to_the_block(client, book, author):
    response = write(client, author, rating=5, title="Great")

    assert response.status_code == 302 and response["Location"] == "/#reviews"
    review = Review.objects.get(user=author)
    assert (review.rating, review.title, review.text) == (5, "Great", TEXT)
    html = block(client.get("/"))
    assert "Your review" in html and "Edit your review" in html and 'data-testid="average-rating">5.0<' in html


def test_posting_with_htmx_answers_with_the_updated_block(client, book, author):
    services.review_create(user=make_reader(book), book=book, rating=2, text=TEXT)

    response = write(client, author, htmx=True, rating=5)

    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<div class="reviews-block" id="reviews-block">')  # the fragment, not a page
    assert "<html" not in html
    assert "your review is posted" in html and 'data-testid="average-rating">3.5<' in html and "Your review" in html


def test_a_10000_character_review_is_refused_with_the_text_kept(client, book, author):
    text = "long " * 2000

    page = write(client, author, text=text)
    fragment = write(client, author, htmx=True, text=text)

    assert page.status_code == 400 and fragment.status_code == 200
    for html in (page.content.decode(), fragment.content.decode()):
        assert "Keep the review to 4,000 characters (it has 9,999)" in html
        assert text.strip() in html  # nothing the reader typed is lost
    assert not Review.objects.exists()


def test_a_missing_rating_is_refused_clearly(client, book, author):
    response = write(client, author, rating="")
    assert response.status_code == 400 and "Choose from 1 to 5 stars." in response.content.decode()
    assert 'aria-invalid="true"' in response.content.decode()


def test_script_markdown_and_links_are_shown_as_text(client, book, author):
    nasty = "<script>alert('x')</script> **bold** [click](javascript:alert(1)) <img src=x onerror=alert(1)> https://evil.example/path"
    write(client, author, title="<i>hi</i>", text=nasty)
    assert Review.objects.get().text == nasty  # stored as written

    for url in ("/", "/reviews/"):
        html = client.get(url).content.decode()
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
        assert "<script>alert" not in html and "<img src=x" not in html and "<i>hi</i>" not in html
        assert "**bold** [click](javascript:alert(1))" in html  # Markdown is not rendered
        assert 'href="https://evil.example' not in html and 'href="javascript' not in html  # links are not clickable


def test_a_second_review_by_the_same_reader_is_refused_and_the_text_kept(client, book, author):
    write(client, author, rating=5)

    response = write(client, author, rating=1, text="My second opinion, which should not be a second review.")
    fragment = write(
        client, author, htmx=True, rating=1, text="My second opinion, which should not be a second review."
    )

    assert response.status_code == 409
    assert "already reviewed this book" in response.content.decode()
    assert (
        "My second opinion" in response.content.decode() and 'action="/reviews/mine/edit/"' in response.content.decode()
    )
    assert fragment.status_code == 200 and "already reviewed this book" in fragment.content.decode()
    assert Review.objects.filter(user=author).count() == 1 and Review.objects.get(user=author).rating == 5


def test_unverified_and_never_reading_accounts_are_refused_by_the_route_too(client, book):
    for user in (make_reader(book, verified=False), make_reader(book, has_read=False)):
        response = write(client, user)
        assert response.status_code == 403
    assert not Review.objects.exists()


def test_anonymous_writes_go_to_sign_in(client, book):
    response = client.post("/reviews/new/", {"rating": 5, "text": TEXT})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Review.objects.exists()


def test_posting_too_often_answers_429(client, book, author, settings):
    settings.REVIEWS_WRITE_RATE = "1/3600"
    write(client, author, rating=3)
    response = write(client, author, url="/reviews/mine/edit/", rating=4)
    assert response.status_code == 429 and "Too many attempts" in response.content.decode()
    assert Review.objects.get().rating == 3


# --- editing and deleting -----------------------------------------------------------------------
def test_editing_shows_edited_and_keeps_the_original_date(client, book, author):
    write(client, author, rating=2)
    Review.objects.update(created_at=timezone.now() - timedelta(days=70))

    form = client.get("/reviews/mine/edit/")
    assert form.status_code == 200 and f"{TEXT}</textarea>" in form.content.decode()
    htmx_form = client.get("/reviews/mine/edit/", **HTMX)
    assert (
        "Save changes" in htmx_form.content.decode() and 'hx-post="/reviews/mine/edit/"' in htmx_form.content.decode()
    )

    response = write(client, author, url="/reviews/mine/edit/", rating=5, text=TEXT + " Better on a second read.")

    assert response.status_code == 302
    html = block(client.get("/"))
    assert ">2 months ago</time>" in html and ">edited</span>" in html and "Better on a second read." in html
    assert stored(book) == recount(book) and stored(book)["stars_5"] == 1


def test_deleting_a_review_with_and_without_htmx(client, book, author):
    write(client, author)
    assert "Delete your review?" in client.get("/reviews/mine/delete/").content.decode()

    response = client.post("/reviews/mine/delete/", **HTMX)

    assert response.status_code == 200 and "Your review is deleted." in response.content.decode()
    assert not Review.objects.exists() and stored(book)["rating_count"] == 0
    assert client.post("/reviews/mine/delete/").status_code == 302  # twice: nothing left, no error
    assert client.get("/reviews/mine/edit/")["Location"] == "/reviews/new/"


def test_a_hidden_review_is_gone_for_others_but_its_author_is_told(client, book, author, staff):
    write(client, author, text="Hidden words that nobody else should read here.")
    services.review_hide(review=Review.objects.get(), moderator=staff, reason="Abuse")

    mine = block(client.get("/"))
    assert "A moderator has hidden your review" in mine and "Hidden words" in mine

    client.force_login(make_reader(book))
    for url in ("/", "/reviews/"):
        assert "Hidden words" not in client.get(url).content.decode()
    assert client.post(f"/reviews/{Review.objects.get().pk}/report/", {"reason": "spam"}).status_code == 404


# --- reports ----------------------------------------------------------------------------------
def test_readers_report_a_review_in_place_or_on_its_own_page(client, book, author):
    review = services.review_create(user=author, book=book, rating=1, text=TEXT)
    client.force_login(make_reader(book))

    landing = block(client.get("/"))
    assert f'hx-post="/reviews/{review.pk}/report/"' in landing and "<summary>Report" in landing

    fragment = client.post(f"/reviews/{review.pk}/report/", {"reason": "spam", "note": "Copied from a forum"}, **HTMX)
    assert fragment.status_code == 200 and "Reported. Thank you" in fragment.content.decode()
    report = ReviewReport.objects.get()
    assert (report.reason, report.note, report.review_id) == ("spam", "Copied from a forum", review.pk)

    again = client.post(f"/reviews/{review.pk}/report/", {"reason": "abuse", "next": "https://evil.example/"})
    assert again.status_code == 403 and "already reported" in again.content.decode()

    client.force_login(make_reader(book))
    done = client.post(f"/reviews/{review.pk}/report/", {"reason": "abuse", "next": "https://evil.example/"})
    assert done.status_code == 302 and done["Location"] == "/#reviews"  # never an open redirect
    assert ReviewReport.objects.count() == 2


def test_reporting_ones_own_review_is_refused(client, book, author):
    review = services.review_create(user=author, book=book, rating=1, text=TEXT)
    client.force_login(author)
    assert client.post(f"/reviews/{review.pk}/report/", {"reason": "spam"}).status_code == 403
    assert "<summary>Report" not in block(client.get("/"))
    assert not ReviewReport.objects.exists()


def test_reporting_too_often_answers_429(client, book, settings):
    settings.REVIEWS_REPORT_RATE = "1/3600"
    first, second = (services.review_create(user=make_reader(book), book=book, rating=2, text=TEXT) for _ in range(2))
    client.force_login(make_reader(book))
    assert client.post(f"/reviews/{first.pk}/report/", {"reason": "spam"}).status_code == 302
    assert client.post(f"/reviews/{second.pk}/report/", {"reason": "spam"}).status_code == 429
    assert ReviewReport.objects.count() == 1


# --- the all-reviews page ---------------------------------------------------------------------
def test_all_reviews_sort_by_newest_highest_and_lowest(client, book, staff):
    for days, stars in ((1, 3), (2, 5), (3, 1), (4, 4)):
        review = services.review_create(
            user=make_reader(book, name=f"Reader {stars}"), book=book, rating=stars, text=TEXT
        )
        Review.objects.filter(pk=review.pk).update(created_at=timezone.now() - timedelta(days=days))
    hidden = services.review_create(user=make_reader(book, name="Reader hidden"), book=book, rating=2, text=TEXT)
    services.review_hide(review=hidden, moderator=staff, reason="Spam")

    def order(query):
        return re.findall(r'class="review__name">Reader (\w+)', client.get("/reviews/" + query).content.decode())

    assert order("") == ["3", "5", "1", "4"]
    assert order("?sort=highest") == ["5", "4", "3", "1"]
    assert order("?sort=lowest") == ["1", "3", "4", "5"]
    assert order("?sort=bogus") == ["3", "5", "1", "4"]
    page = client.get("/reviews/?sort=lowest").content.decode()
    assert '<a href="?sort=lowest" aria-current="page">Lowest rated</a>' in page


def test_all_reviews_are_paginated(client, book, settings):
    settings.REVIEWS_PER_PAGE = 2
    for stars in (1, 2, 3, 4, 5):
        services.review_create(user=make_reader(book, name=f"Reader {stars}"), book=book, rating=stars, text=TEXT)

    first = client.get("/reviews/?sort=highest").content.decode()
    last = client.get("/reviews/?sort=highest&page=3").content.decode()
    beyond = client.get("/reviews/?sort=highest&page=99").content.decode()

    assert "Page 1 of 3" in first and 'href="?sort=highest&amp;page=2"' in first
    assert re.findall(r'class="review__name">Reader (\d)', last) == ["1"] and "Page 3 of 3" in last
    assert "Page 3 of 3" in beyond  # out of range: the last page, not an error


def test_the_plain_pages_behind_the_block(client, book, author):
    client.force_login(make_reader(book, has_read=False))
    assert "Open a capsule first" in client.get("/reviews/new/").content.decode()

    client.force_login(author)
    page = client.get("/reviews/new/")
    assert page.status_code == 200 and "<legend>Your rating" in page.content.decode()
    assert page["Cache-Control"] == "private, no-store"  # holds a CSRF token and the reader's own words
    write(client, author)
    assert client.get("/reviews/new/")["Location"] == "/reviews/mine/edit/"

    other = services.review_create(user=make_reader(book, name="Otto Other"), book=book, rating=3, text=TEXT)
    report_page = client.get(f"/reviews/{other.pk}/report/").content.decode()
    assert "Report a review" in report_page and "<details open>" in report_page and "Otto Other" in report_page
    assert client.get(f"/reviews/{Review.objects.get(user=author).pk}/report/").status_code == 404  # one's own

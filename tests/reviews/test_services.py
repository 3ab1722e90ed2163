"""The rules of reviewing, enforced by the services whatever the caller."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.demo import data as demo
from apps.reviews import selectors, services
from apps.reviews.models import BookRating, Review, ReviewReport
from tests.reviews.conftest import TEXT, make_reader, recount, stored

pytestmark = pytest.mark.django_db


# --- who may review ---------------------------------------------------------------------------
def test_an_eligible_reader_rates_and_reviews_and_the_aggregate_follows(book, author):
    review = services.review_create(user=author, book=book, rating=4, title="Worth it", text=TEXT)

    assert (review.rating, review.title, review.text, review.status) == (4, "Worth it", TEXT, Review.Status.VISIBLE)
    assert review.created_at is not None and review.edited_at is None
    rating = BookRating.objects.get(book=book)
    assert (rating.rating_count, rating.rating_sum, rating.stars_4, rating.review_count) == (1, 4, 1, 1)
    assert rating.average_display == "4.0"


@pytest.mark.parametrize(
    "verified, has_read, expected",
    [
        (False, True, selectors.Eligibility.VERIFY_EMAIL),
        (True, False, selectors.Eligibility.READ_FIRST),
        (False, False, selectors.Eligibility.VERIFY_EMAIL),
    ],
)
def test_unverified_or_never_reading_accounts_may_not_review(book, verified, has_read, expected):
    user = make_reader(book, verified=verified, has_read=has_read)

    with pytest.raises(services.NotAllowedToReview) as refused:
        services.review_create(user=user, book=book, rating=5, text=TEXT)

    assert refused.value.eligibility is expected
    assert not Review.objects.exists()
    assert not BookRating.objects.filter(book=book, rating_count__gt=0).exists()


def test_an_unverified_secondary_address_is_not_enough_but_a_verified_one_is(book):
    from allauth.account.models import EmailAddress

    user = make_reader(book, verified=False)
    EmailAddress.objects.create(user=user, email="other@example.org", verified=False, primary=False)
    assert selectors.review_eligibility(user, book) is selectors.Eligibility.VERIFY_EMAIL
    EmailAddress.objects.filter(user=user, email="other@example.org").update(verified=True)
    assert selectors.review_eligibility(user, book) is selectors.Eligibility.ALLOWED


def test_anonymous_visitors_may_not_review(book):
    from django.contrib.auth.models import AnonymousUser

    assert selectors.review_eligibility(AnonymousUser(), book) is selectors.Eligibility.SIGN_IN
    with pytest.raises(services.NotAllowedToReview):
        services.review_create(user=AnonymousUser(), book=book, rating=5)


def test_a_reader_cannot_review_the_same_book_twice(book, author):
    first = services.review_create(user=author, book=book, rating=5, text=TEXT)

    with pytest.raises(services.AlreadyReviewed):
        services.review_create(
            user=author, book=book, rating=1, text="A second, different opinion about the same book."
        )

    assert list(Review.objects.values_list("pk", "rating")) == [(first.pk, 5)]
    assert stored(book) == recount(book) and stored(book)["rating_count"] == 1


# --- what a review may say --------------------------------------------------------------------
@pytest.mark.parametrize("rating", [0, 6, -1, "5", 4.5, None, True])
def test_the_rating_is_a_whole_number_of_stars_from_1_to_5(book, author, rating):
    with pytest.raises(services.ReviewInvalid) as invalid:
        services.review_create(user=author, book=book, rating=rating, text=TEXT)
    assert invalid.value.field == "rating"
    assert not Review.objects.exists()


def test_text_has_a_minimum_and_a_maximum_length(book, author):
    with pytest.raises(services.ReviewInvalid, match="at least 20"):
        services.review_create(user=author, book=book, rating=3, text="Too short.")
    with pytest.raises(services.ReviewInvalid, match="4,000 characters .it has 10,000"):
        services.review_create(user=author, book=book, rating=3, text="x" * 10_000)
    assert not Review.objects.exists()

    longest = "y" * Review.TEXT_MAX_CHARS
    assert services.review_create(user=author, book=book, rating=3, text=longest).text == longest


def test_stars_alone_are_a_rating_without_a_review(book, author):
    services.review_create(user=author, book=book, rating=2)

    rating = BookRating.objects.get(book=book)
    assert (rating.rating_count, rating.review_count) == (1, 0)
    assert list(selectors.reviews_public(book)) == []  # nothing to read in the lists


@pytest.mark.parametrize(
    "title, text, field, message",
    [
        ("A title", "", "text", "needs a review"),
        ("t" * 121, TEXT, "title", "120 characters"),
        ("Two\nlines", TEXT, "title", "one line"),
        ("", TEXT + "\x00", "text", "control characters"),
        ("", TEXT + " \u202egnp.exe", "text", "direction-changing characters"),  # issue 28: bidi overrides
        ("Great \u2067book", TEXT, "title", "direction-changing characters"),
        ("", "Visit https://a.example and http://b.example and www.c.example today", "text", "at most 2 web addresses"),
    ],
)
def test_titles_and_texts_that_are_refused(book, author, title, text, field, message):
    with pytest.raises(services.ReviewInvalid, match=message) as invalid:
        services.review_create(user=author, book=book, rating=4, title=title, text=text)
    assert invalid.value.field == field
    assert not Review.objects.exists()


def test_text_is_stored_as_written_html_and_markdown_included(book, author):
    text = "<script>alert('x')</script> **bold** [click](javascript:alert(1)) see https://example.org\nsecond line"

    review = services.review_create(user=author, book=book, rating=4, title="<b>Title</b>", text=f"  {text}  ")

    review.refresh_from_db()
    assert review.text == text and review.title == "<b>Title</b>"  # trimmed, otherwise untouched


# --- edit and delete --------------------------------------------------------------------------
def test_an_edit_keeps_the_original_date_and_marks_the_review_edited(book, author):
    review = services.review_create(user=author, book=book, rating=2, text=TEXT)
    created = review.created_at

    services.review_update(
        user=author, book=book, rating=5, title="Changed my mind", text=TEXT + " On second reading, excellent."
    )

    review.refresh_from_db()
    assert review.created_at == created
    assert review.edited_at is not None and review.edited_at >= created
    assert (review.rating, review.title) == (5, "Changed my mind")
    assert stored(book) == recount(book) and stored(book)["stars_5"] == 1 and stored(book)["stars_2"] == 0


def test_saving_an_unchanged_review_does_not_mark_it_edited(book, author):
    services.review_create(user=author, book=book, rating=4, text=TEXT)
    review = services.review_update(user=author, book=book, rating=4, text=f"{TEXT}   ")
    assert review.edited_at is None


def test_editing_or_deleting_without_a_review_is_refused(book, author):
    with pytest.raises(services.ReviewNotFound):
        services.review_update(user=author, book=book, rating=3, text=TEXT)
    with pytest.raises(services.ReviewNotFound):
        services.review_delete(user=author, book=book)


def test_an_edit_is_validated_like_a_new_review_and_changes_nothing_when_refused(book, author):
    services.review_create(user=author, book=book, rating=4, text=TEXT)
    with pytest.raises(services.ReviewInvalid):
        services.review_update(user=author, book=book, rating=1, text="z" * 10_000)
    review = Review.objects.get()
    assert (review.rating, review.text, review.edited_at) == (4, TEXT, None)


def test_deleting_a_review_removes_it_from_the_aggregate(book, author):
    other = make_reader(book)
    services.review_create(user=author, book=book, rating=1, text=TEXT)
    services.review_create(user=other, book=book, rating=5, text=TEXT)

    services.review_delete(user=author, book=book)

    assert not Review.objects.filter(user=author).exists()
    assert stored(book) == recount(book) == {**recount(book), "rating_count": 1, "rating_sum": 5}


# --- moderation -------------------------------------------------------------------------------
def test_a_hidden_review_leaves_the_aggregate_and_the_lists_and_a_restore_brings_it_back(book, author, staff):
    other = make_reader(book)
    hidden = services.review_create(
        user=author, book=book, rating=1, text="Spam spam spam, buy my course at a discount today!"
    )
    services.review_create(user=other, book=book, rating=5, text=TEXT)

    services.review_hide(review=hidden, moderator=staff, reason="Advertising")

    hidden.refresh_from_db()
    assert (
        hidden.status == Review.Status.HIDDEN
        and hidden.moderation_reason == "Advertising"
        and hidden.moderated_by == staff
    )
    assert (
        stored(book) == recount(book)
        and stored(book)["rating_count"] == 1
        and BookRating.objects.get(book=book).average_display == "5.0"
    )
    assert [r.pk for r in selectors.reviews_public(book)] == [Review.objects.get(user=other).pk]
    assert selectors.own_review(author, book).pk == hidden.pk  # its author still sees it

    services.review_restore(review=hidden, moderator=staff, reason="Appeal: it is a real review")

    hidden.refresh_from_db()
    assert hidden.status == Review.Status.VISIBLE and hidden.moderation_reason == "Appeal: it is a real review"
    assert stored(book) == recount(book) and stored(book)["rating_count"] == 2


def test_moderation_needs_a_reason_and_a_real_change(book, author, staff):
    review = services.review_create(user=author, book=book, rating=3, text=TEXT)
    with pytest.raises(services.ReviewInvalid, match="reason"):
        services.review_hide(review=review, moderator=staff, reason="   ")
    with pytest.raises(services.InvalidTransition):
        services.review_restore(review=review, moderator=staff, reason="It is visible already")
    services.review_hide(review=review, moderator=staff, reason="Abuse")
    with pytest.raises(services.InvalidTransition):
        services.review_hide(review=review, moderator=staff, reason="Again")


def test_editing_a_hidden_review_does_not_bring_it_back(book, author, staff):
    review = services.review_create(user=author, book=book, rating=1, text=TEXT)
    services.review_hide(review=review, moderator=staff, reason="Abuse")

    services.review_update(user=author, book=book, rating=5, text=TEXT + " Edited to dodge the moderators.")

    review.refresh_from_db()
    assert review.status == Review.Status.HIDDEN
    assert stored(book)["rating_count"] == 0


# --- reports ----------------------------------------------------------------------------------
def test_readers_report_a_review_once_and_moderation_resolves_it(book, author, staff):
    reporter = make_reader(book)
    review = services.review_create(user=author, book=book, rating=1, text=TEXT)

    report = services.review_report(review=review, reporter=reporter, reason="spam", note="Looks copied")
    with pytest.raises(services.ReportRefused, match="already reported"):
        services.review_report(review=review, reporter=reporter, reason="abuse")
    assert ReviewReport.objects.count() == 1 and report.resolved_at is None

    services.review_hide(review=review, moderator=staff, reason="Spam")
    report.refresh_from_db()
    assert report.resolved_at is not None


def test_reports_on_ones_own_or_a_hidden_review_or_with_a_made_up_reason_are_refused(book, author, staff):
    reporter = make_reader(book, has_read=False)  # reading is not needed to report; a verified address is
    review = services.review_create(user=author, book=book, rating=1, text=TEXT)
    with pytest.raises(services.ReportRefused, match="own review"):
        services.review_report(review=review, reporter=author, reason="spam")
    with pytest.raises(services.ReviewInvalid):
        services.review_report(review=review, reporter=reporter, reason="because")
    with pytest.raises(services.ReportRefused, match="verified"):
        services.review_report(review=review, reporter=make_reader(book, verified=False), reason="spam")
    services.review_hide(review=review, moderator=staff, reason="Abuse")
    with pytest.raises(services.ReportRefused, match="no longer shown"):
        services.review_report(review=review, reporter=reporter, reason="spam")
    assert not ReviewReport.objects.exists()


# --- rate limits ------------------------------------------------------------------------------
def test_posting_and_editing_are_rate_limited_per_reader(book, author, settings):
    settings.REVIEWS_WRITE_RATE = "2/3600"
    services.review_create(user=author, book=book, rating=3, text=TEXT)
    services.review_update(user=author, book=book, rating=4, text=TEXT)

    with pytest.raises(services.RateLimited):
        services.review_update(user=author, book=book, rating=5, text=TEXT)
    assert Review.objects.get().rating == 4  # the refused edit changed nothing

    other = make_reader(book)  # the limit is per reader
    services.review_create(user=other, book=book, rating=5, text=TEXT)


def test_reporting_is_rate_limited_per_reader(book, settings):
    settings.REVIEWS_REPORT_RATE = "2/3600"
    reporter = make_reader(book)
    reviews = [services.review_create(user=make_reader(book), book=book, rating=3, text=TEXT) for _ in range(3)]
    services.review_report(review=reviews[0], reporter=reporter, reason="spam")
    services.review_report(review=reviews[1], reporter=reporter, reason="spam")
    with pytest.raises(services.RateLimited):
        services.review_report(review=reviews[2], reporter=reporter, reason="spam")
    assert ReviewReport.objects.count() == 2


def test_a_malformed_rate_setting_fails_loudly(book, author, settings):
    from django.core.exceptions import ImproperlyConfigured

    settings.REVIEWS_WRITE_RATE = "ten per hour"
    with pytest.raises(ImproperlyConfigured):
        services.review_create(user=author, book=book, rating=3, text=TEXT)


# --- aggregate --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "ratings, shown", [([5, 5, 5, 4], "4.8"), ([4, 4, 4, 5], "4.3"), ([1], "1.0"), ([5, 4], "4.5"), ([3, 4, 4], "3.7")]
)
def test_the_average_is_shown_to_one_decimal_rounded_half_up(book, ratings, shown):
    for stars in ratings:
        services.review_create(user=make_reader(book), book=book, rating=stars)
    assert BookRating.objects.get(book=book).average_display == shown


def test_the_aggregate_can_be_repaired_from_the_reviews(book, author):
    services.review_create(user=author, book=book, rating=5, text=TEXT)
    BookRating.objects.filter(book=book).update(
        rating_count=9, rating_sum=9, stars_1=9, stars_5=0
    )  # drift, e.g. a manual SQL edit

    services.book_rating_refresh(book=book)

    assert stored(book) == recount(book)


def test_demo_reviews_are_refused_where_demo_data_is_not_allowed(book, settings):
    from django.core.exceptions import ImproperlyConfigured

    settings.DEMO_DATA_ALLOWED = False
    with pytest.raises(ImproperlyConfigured):
        demo.reviews_demo_ensure(book=book)
    assert not Review.objects.exists()


def test_relative_time_of_demo_reviews_matches_the_original_page(book):
    from apps.reviews.templatetags.reviews import relative_date

    reviews = demo.reviews_demo_ensure(book=book)
    now = timezone.now() + timedelta(minutes=1)
    assert [relative_date(r.created_at, now) for r in reviews] == [
        "last week",
        "2 months ago",
        "3 months ago",
        "5 months ago",
        "6 months ago",
    ]

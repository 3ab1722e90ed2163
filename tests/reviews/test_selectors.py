"""Reads: the landing page's block costs a constant number of queries, whatever the numbers of
reviews, ratings, readers and subscribers."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.reviews import selectors, services
from apps.reviews.models import Review
from tests.reviews.conftest import TEXT, make_reader
from tests.subscriptions.visitors import make_visitor

pytestmark = pytest.mark.django_db


def add_reviews(book, count, staff):
    for n in range(count):
        reader = make_visitor("active" if n % 3 == 0 else "free", name=f"Reader {n}")
        from tests.reviews.conftest import open_a_capsule

        open_a_capsule(reader, book)
        review = services.review_create(user=reader, book=book, rating=n % 5 + 1, text=f"{TEXT} #{n}" if n % 4 else "")
        if n % 7 == 0:
            services.review_hide(review=review, moderator=staff, reason="Test")


def landing_queries(client) -> int:
    client.get("/")  # warm per-process caches
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/").status_code == 200
    return len(queries)


@pytest.mark.parametrize("who", ["anonymous", "reader with a review", "reader without a review"])
def test_the_landing_page_costs_the_same_queries_with_3_or_30_reviews(book, staff, who):
    client = Client()
    if who != "anonymous":
        reader = make_reader(book)
        if who == "reader with a review":
            services.review_create(user=reader, book=book, rating=4, text=TEXT)
        client.force_login(reader)
    add_reviews(book, 3, staff)
    few = landing_queries(client)
    add_reviews(book, 27, staff)
    many = landing_queries(client)

    assert few == many, (few, many)


def test_the_summary_counts_only_what_is_visible(book, staff):
    add_reviews(book, 14, staff)  # 2 hidden (n = 0, 7); 4 stars-only (n = 0, 4, 8, 12)
    summary = selectors.reviews_summary(book, make_reader(book))

    visible = Review.objects.filter(status=Review.Status.VISIBLE)
    assert summary.rating.rating_count == visible.count() == 12
    assert summary.rating.review_count == visible.exclude(text="").count()
    assert sum(bar.count for bar in summary.distribution) == 12
    assert [bar.stars for bar in summary.distribution] == [5, 4, 3, 2, 1]
    assert summary.readers == 15  # 14 reviewers and the reader asking, all have opened a capsule
    assert len(summary.newest) == 5 and all(r.text and r.status == "visible" for r in summary.newest)
    assert summary.eligibility is selectors.Eligibility.ALLOWED and summary.can_review


def test_readers_are_accounts_that_opened_a_capsule_each_counted_once(book):
    reader = make_reader(book)
    from apps.catalog.models import Capsule
    from apps.reading.models import ReadingProgress

    for capsule in Capsule.objects.filter(book=book).exclude(pk__in=reader.reading_progress.values("capsule")):
        ReadingProgress.objects.create(user=reader, capsule=capsule)
    make_reader(book, has_read=False)

    assert selectors.reader_count(book) == 1


def test_the_newest_reviews_leave_out_the_readers_own_shown_above_them(book, staff):
    """Issue 17: after posting, the reader's review showed twice in the block (as theirs and in the list)."""
    add_reviews(book, 3, staff)
    reader = make_reader(book)
    own = services.review_create(user=reader, book=book, rating=4, text=TEXT + " (mine)")

    summary = selectors.reviews_summary(book, reader)
    assert summary.own == own
    assert own not in summary.newest and summary.newest  # the others' reviews still listed
    # Everyone else still sees it among the newest.
    someone_else = make_reader(book, name="Someone Else", email="else@example.org")
    assert own in selectors.reviews_summary(book, someone_else).newest

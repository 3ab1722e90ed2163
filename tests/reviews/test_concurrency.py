"""Writers at the same moment, each on its own database connection (threads), against real
PostgreSQL: the aggregate must still equal a recount, and a double submit must store one review."""

import threading

import pytest
from django.db import connection, transaction

from apps.reviews import services
from apps.reviews.models import Review
from tests.reviews.conftest import TEXT, make_reader, recount, stored

pytestmark = pytest.mark.django_db(transaction=True)


def at_the_same_moment(*calls):
    """Runs each call in its own thread (so its own connection), released together by a barrier;
    returns what each returned or raised."""
    barrier = threading.Barrier(len(calls))
    outcomes = [None] * len(calls)

    def run(index, call):
        try:
            barrier.wait(timeout=10)
            outcomes[index] = call()
        except Exception as error:  # noqa: BLE001 - the outcome under test
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return outcomes


def test_two_readers_rating_at_the_same_moment_are_both_counted(mini_book):
    """The worst interleaving, made certain: the first reader's transaction has written its review
    and is still open when the second reader writes; neither may count without the other."""
    first, second = make_reader(mini_book), make_reader(mini_book)
    services.review_create(user=make_reader(mini_book), book=mini_book, rating=3)  # the aggregate row exists already
    written, release = threading.Event(), threading.Event()

    def first_reader():
        with transaction.atomic():
            review = services.review_create(user=first, book=mini_book, rating=5, text=TEXT)
            written.set()
            release.wait(timeout=10)  # commit only after the second reader has started its write
        return review

    def second_reader():
        written.wait(timeout=10)
        threading.Timer(0.3, release.set).start()
        return services.review_create(user=second, book=mini_book, rating=1, text=TEXT)

    outcomes = at_the_same_moment(first_reader, second_reader)

    assert all(isinstance(outcome, Review) for outcome in outcomes), outcomes
    assert stored(mini_book) == recount(mini_book)
    assert (stored(mini_book)["rating_count"], stored(mini_book)["rating_sum"]) == (3, 9)


def test_many_concurrent_creates_edits_and_deletes_leave_an_exact_aggregate(mini_book):
    readers = [make_reader(mini_book) for _ in range(8)]
    for reader in readers[:4]:  # these four will edit or delete
        services.review_create(user=reader, book=mini_book, rating=1, text=TEXT)
    calls = [
        lambda r=r: services.review_update(user=r, book=mini_book, rating=4, text=TEXT + " edited") for r in readers[:2]
    ]
    calls += [lambda r=r: services.review_delete(user=r, book=mini_book) for r in readers[2:4]]
    calls += [
        lambda r=r, n=n: services.review_create(user=r, book=mini_book, rating=n + 1, text=TEXT)
        for n, r in enumerate(readers[4:])
    ]

    outcomes = at_the_same_moment(*calls)

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert stored(mini_book) == recount(mini_book)
    assert stored(mini_book)["rating_count"] == 6  # 2 edited + 4 new; 2 deleted


def test_a_double_submit_stores_one_review_and_tells_the_second_request(mini_book):
    reader = make_reader(mini_book)

    outcomes = at_the_same_moment(
        *[
            lambda stars=stars: services.review_create(user=reader, book=mini_book, rating=stars, text=TEXT)
            for stars in (3, 4, 5)
        ]
    )

    assert sum(isinstance(o, Review) for o in outcomes) == 1, outcomes
    assert sum(isinstance(o, services.AlreadyReviewed) for o in outcomes) == 2, outcomes
    assert Review.objects.filter(user=reader).count() == 1
    assert stored(mini_book) == recount(mini_book) and stored(mini_book)["rating_count"] == 1

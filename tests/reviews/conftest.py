import pytest

from apps.catalog.models import Capsule
from apps.reading.models import ReadingProgress
from apps.reviews.models import STARS, BookRating, Review
from tests.factories import UserFactory

TEXT = "Clear, careful and practical: the tiling chapters finally made shared memory click for me."


def open_a_capsule(user, book) -> ReadingProgress:
    capsule = Capsule.objects.filter(book=book, access=Capsule.Access.FREE).order_by("number").first()
    return ReadingProgress.objects.get_or_create(
        user=user, capsule=capsule, defaults={"position": 0.3, "furthest_position": 0.3}
    )[0]


def make_reader(book, *, verified=True, has_read=True, **fields):
    """A reader as the rules see them: a verified address, and a capsule of `book` opened."""
    user = UserFactory(verified=verified, **fields)
    if has_read:
        open_a_capsule(user, book)
    return user


def recount(book) -> dict:
    """The aggregate as a plain recount of visible reviews, to compare with BookRating."""
    ratings = list(Review.objects.filter(book=book, status=Review.Status.VISIBLE).values_list("rating", flat=True))
    return {
        "rating_count": len(ratings),
        "rating_sum": sum(ratings),
        **{f"stars_{n}": ratings.count(n) for n in STARS},
    }


def stored(book) -> dict:
    rating = BookRating.objects.filter(book=book).first() or BookRating(book=book)
    return {
        "rating_count": rating.rating_count,
        "rating_sum": rating.rating_sum,
        **{f"stars_{n}": rating.stars_count(n) for n in STARS},
    }


@pytest.fixture
def book(mini_book):
    return mini_book


@pytest.fixture
def author(book):
    """An eligible reader (verified, has opened a capsule) who writes the reviews under test."""
    return make_reader(book, name="Grace Hopper", email="grace@example.org")

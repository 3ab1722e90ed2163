"""The demo data: the original page's five reviews, by real demo accounts that obey the rules."""

import pytest
from allauth.account.models import EmailAddress
from django.core.management import call_command

from apps.demo.data import DEMO_READERS
from apps.reading.models import ReadingProgress
from apps.reviews import selectors
from apps.reviews.models import BookRating, Review
from tests.reviews.conftest import recount, stored

pytestmark = pytest.mark.django_db

# From the original landing page's sample reviews (ARCHITECTURE.md, "Demo data").
ORIGINAL = {
    "Aarav Mehta": (
        "AM",
        "last week",
        "A few sections moved fast for me, but re-reading with the figures open made everything land. "
        "Highly recommend.",
    ),
    "Daniel Okafor": (
        "DO",
        "2 months ago",
        "This is the resource I wish I had when I started. Clear mental models, zero fluff.",
    ),
    "Liam Chen": (
        "LC",
        "3 months ago",
        "Concise capsules I can finish over coffee, yet each one taught me something I actually use.",
    ),
    "Marcus Bell": (
        "MB",
        "5 months ago",
        "Rare mix of depth and readability. The worked examples are the clearest I have seen on this subject.",
    ),
    "Jonas Bergström": (
        "JB",
        "6 months ago",
        "Loved the from-first-principles approach. It rebuilt my intuition rather than just handing me formulas.",
    ),
}


@pytest.mark.slow
def test_load_demo_adds_the_five_original_reviews_by_readers_who_may_review(client):
    call_command("load_demo")
    call_command("load_demo")  # idempotent: still five, still the same aggregate

    reviews = Review.objects.select_related("user", "book")
    assert sorted(r.user.name for r in reviews) == sorted(ORIGINAL)
    for review in reviews:
        assert review.text == ORIGINAL[review.user.name][2]
        assert EmailAddress.objects.filter(user=review.user, verified=True).exists()
        assert ReadingProgress.objects.filter(user=review.user, capsule__book=review.book).exists()
        assert selectors.review_eligibility(review.user, review.book) is selectors.Eligibility.ALLOWED
    assert {r.user.email for r in reviews} == {account.email for account in DEMO_READERS}

    book = reviews[0].book
    assert stored(book) == recount(book)
    assert BookRating.objects.get(book=book).average_display == "4.8"  # what exists, not the original "1,204 readers"

    html = client.get("/").content.decode()
    for name, (initials, when, text) in ORIGINAL.items():
        assert f">{initials}</span>" in html and f">{name}</p>" in html and f">{when}</time>" in html and text in html
    assert "5 ratings" in html and "5 readers have opened the book" in html

from datetime import UTC, datetime, timedelta

import pytest

from apps.accounts.models import User
from apps.reviews.templatetags.reviews import initials, relative_date, reviewer_name, star_row, thousands

NOW = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "days, shown",
    [
        (0, "today"),
        (1, "yesterday"),
        (6, "6 days ago"),
        (7, "last week"),
        (13, "last week"),
        (14, "2 weeks ago"),
        (29, "4 weeks ago"),
        (30, "last month"),
        (60, "last month"),
        (62, "2 months ago"),
        (95, "3 months ago"),
        (185, "6 months ago"),
        (364, "11 months ago"),
        (365, "last year"),
        (800, "2 years ago"),
    ],
)
def test_relative_dates_read_like_the_original_page(days, shown):
    assert relative_date(NOW - timedelta(days=days), NOW) == shown


@pytest.mark.parametrize(
    "name, shown, letters",
    [
        ("Jonas Bergström", "Jonas Bergström", "JB"),
        ("ada", "ada", "A"),
        ("Mary Ann de la Cruz", "Mary Ann de la Cruz", "MC"),
        ("", "A reader", "AR"),
        ("   ", "A reader", "AR"),
        ("Émile Zola", "Émile Zola", "ÉZ"),
    ],
)
def test_names_and_initials(name, shown, letters):
    user = User(name=name, email="hidden@example.org")
    assert reviewer_name(user) == shown and initials(user) == letters


def test_star_rows_fill_fractions_and_numbers_group_thousands():
    assert star_row(4.8)["stars"] == pytest.approx([100, 100, 100, 100, 80])
    assert star_row(None)["stars"] == [0, 0, 0, 0, 0]
    assert thousands(1204) == "1,204" and thousands(None) == ""

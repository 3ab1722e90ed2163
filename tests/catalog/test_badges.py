"""Issue 17: the percentage badges (the book's figures, measured on an RTX A6000) and the judge's "book's
kernel" figures (an H200) disagreed side by side with no legend. Each page that shows them now says which
is which, in words a screen reader hears too."""

import re
from html import unescape

import pytest
from django.test import Client

from apps.catalog import badges
from apps.catalog.models import Capsule
from tests.submissions.conftest import make_exercise
from tests.subscriptions.visitors import make_visitor

pytestmark = pytest.mark.django_db

LEGEND = re.compile(r'<p class="badge-legend" id="badge-legend">(.*?)</p>', re.S)


@pytest.fixture
def badged(mini_book):
    Capsule.objects.filter(book=mini_book, number=2).update(badge="8.5%")
    Capsule.objects.filter(book=mini_book, number=3).update(badge="TC")
    return mini_book


@pytest.mark.parametrize(
    ("badge", "figure"), [("8.5%", True), ("93.7%", True), ("TC", False), ("", False), ("FP8", False)]
)
def test_a_percentage_badge_is_a_figure_and_a_tag_is_not(badge, figure):
    assert badges.is_figure_badge(badge) is figure


def test_the_contents_say_what_a_percentage_badge_is_and_where_it_was_measured(badged):
    page = Client().get("/").content.decode()
    legend = LEGEND.search(page).group(1)
    assert "book's published figures" in legend and "cuBLAS" in legend and "RTX A6000" in legend
    assert "judge" not in legend  # no judge figures on the landing page
    row = unescape(re.search(r'<span class="badge badge--figure"[^>]*>8\.5%(.*?)</span></span>', page, re.S).group(1))
    assert "of cuBLAS: the book's figure, measured on an NVIDIA RTX A6000" in row  # read out with the badge
    assert '<span class="badge">TC</span>' in page  # a topic tag stays a plain badge


def test_no_legend_where_no_badge_is_a_figure(mini_book):
    Capsule.objects.filter(book=mini_book, number=2).update(badge="SMEM")
    assert 'id="badge-legend"' not in Client().get("/").content.decode()


def test_the_capsule_page_names_the_gpu_beside_its_figure(badged):
    capsule = Capsule.objects.get(book=badged, number=2)
    page = Client().get(capsule.get_absolute_url()).content.decode()
    assert "the book's figure, on an NVIDIA RTX A6000" in page


def test_my_progress_tells_the_books_a6000_figures_from_the_judges_h200_ones(badged):
    reader = make_visitor("active")
    client = Client()
    client.force_login(reader)
    legend = LEGEND.search(client.get("/progress/").content.decode()).group(1)
    assert "RTX A6000" in legend and "H200" not in legend  # no ladder yet: nothing of the judge's to explain

    make_exercise(badged.capsules.get(number=2))
    page = client.get("/progress/").content.decode()
    legend = LEGEND.search(page).group(1)
    assert "RTX A6000" in legend and "this site's judge on an H200" in legend
    assert "Book's kernel" in page  # the ladder the legend explains is on the same page

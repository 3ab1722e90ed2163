import re

import pytest
from django.test import Client

from apps.catalog.models import Capsule
from apps.catalog.services import capsule_save
from tests.subscriptions.visitors import make_visitor


def search(kind, query):
    client = Client()
    visitor = make_visitor(kind)
    if visitor.is_authenticated:
        client.force_login(visitor)
    return client.get("/search/", {"q": query}).content.decode()


def test_everyone_finds_locked_capsules_by_their_public_title_and_summary(mini_book):
    page = search("anonymous", "tiling")
    assert 'href="/capsules/locked-two/">02 · Locked two: <mark>tiling</mark></a>' in page
    assert "A locked capsule about shared-memory <mark>tiling</mark>." in page


def test_words_only_in_a_locked_body_find_nothing_for_those_who_may_not_read_it(mini_book):
    assert "0 results" in search("free", "hide")
    page = search("active", "hide")
    assert "1 result " in page and "SENTINEL-LOCKED-PARAGRAPH" in page and "<mark>hide</mark>" in page


def test_free_bodies_are_searchable_by_everyone(mini_book):
    page = search("anonymous", "warps")
    assert 'href="/capsules/free-one/"' in page and "<mark>warps</mark>" in page


def test_snippets_are_escaped(mini_book):
    Capsule.objects.filter(slug="free-one").update(body_text="about warps <script>alert(1)</script> here")
    page = search("anonymous", "warps")
    assert "<mark>warps</mark>" in page and "<script>alert(1)" not in page


@pytest.mark.parametrize("query", ["", "   ", "&&&|!", "a" * 200])
def test_odd_queries_do_not_fail(mini_book, query):
    client = Client()
    assert client.get("/search/", {"q": query}).status_code == 200
    # Issue 20: longer than the cap is refused with the reason (tests/reading/test_search_limits.py).
    assert client.get("/search/", {"q": query + "a" * 201}).status_code == 400


# --- Issue 17: the same search on both databases (PostgreSQL's full-text search, SQLite's FTS5) ---
# These run on whichever database the suite has (DATABASE_URL); test_search_sqlite.py runs them on SQLite too.


def _hits(page: str) -> list[str]:
    return re.findall(r'<h2 class="search-result__title"><a href="/capsules/([\w-]+)/">', page)


def _snippets(page: str) -> list[str]:
    return re.findall(r'<p class="search-result__snippet">(.*?)</p>', page, re.S)


def test_words_are_stemmed_so_coalesced_finds_both_coalescing_capsules(mini_book):
    Capsule.objects.filter(slug="locked-three").update(summary="Coalescing warps, the last step.")
    page = search("anonymous", "coalesced")
    assert sorted(_hits(page)) == ["free-one", "locked-three"]
    assert "<mark>coalescing</mark> memory" in page and "<mark>Coalescing</mark> warps" in page


def test_a_stemmed_word_of_a_locked_body_is_found_only_by_readers_who_may_read_it(mini_book):
    assert _hits(search("free", "hiding")) == []
    page = search("active", "hiding")
    assert _hits(page) == ["locked-two"] and "<mark>hide</mark>" in page


def test_stop_words_do_not_have_to_appear(mini_book):
    # "which" is in no capsule of the mini book; PostgreSQL drops it from the query as a stop word.
    assert sorted(_hits(search("anonymous", "which warps"))) == ["free-one", "locked-three"]
    assert _hits(search("anonymous", "which")) == []


def test_phrases_or_and_negation(mini_book):
    assert _hits(search("anonymous", '"coalescing memory"')) == ["free-one"]
    assert _hits(search("anonymous", '"memory coalescing"')) == []
    assert sorted(_hits(search("anonymous", "coalescing or tiling"))) == ["free-one", "locked-three", "locked-two"]
    assert _hits(search("anonymous", "warps -step")) == ["free-one"]


LONG_BODY = (
    " ".join(f"filler{i:03d}" for i in range(150))
    + " the needles meet here "
    + " ".join(f"after{i:03d}" for i in range(150))
)


def test_snippets_are_cut_at_word_boundaries_with_the_match_marked(mini_book):
    Capsule.objects.filter(slug="free-one").update(body_text=LONG_BODY)
    (snippet,) = _snippets(search("anonymous", "needle"))
    assert "<mark>needles</mark>" in snippet
    plain = snippet.replace("<mark>", "").replace("</mark>", "")
    assert plain.startswith("…") and plain.endswith("…")  # the text goes on both sides
    words = plain.strip("… ").split()
    assert 8 <= len(words) <= 40
    assert set(words) <= set(LONG_BODY.split())  # no word cut in half at either end


def test_a_short_text_is_quoted_whole_without_ellipsis(mini_book):
    (snippet,) = _snippets(search("anonymous", "intensity"))
    assert snippet == (
        "Intro Everyone may read this free text about warps. Maths The <mark>intensity</mark> is "
        "2K/8 per element. Figure 1. A drawing of the tiles."
    )


def test_snippets_show_maths_as_text_not_latex(mini_book):
    """Issue 29: snippets showed the LaTeX source ("\\frac{2K}{8}", "\\times"); they show the maths as text now."""
    capsule = Capsule.objects.get(slug="free-one")
    capsule.body += (
        "\nThe throughput is $\\frac{2 M N K}{t} \\times 10^{-12}$ TFLOP/s, roughly $\\approx 50\\,\\text{TFLOP/s}$.\n"
    )
    capsule_save(capsule=capsule)
    (snippet,) = _snippets(search("anonymous", "throughput"))
    assert "\\" not in snippet and "frac" not in snippet and "text{" not in snippet
    assert "(2 M N K)/t × 10^(-12) TFLOP/s" in snippet and "≈ 50 TFLOP/s" in snippet
    assert _snippets(search("anonymous", "frac")) == []  # the LaTeX commands are not words of the text either


def test_a_match_only_in_the_summary_quotes_the_summary(mini_book):
    page = search("anonymous", "coalescing")
    assert _snippets(page) == ["The free capsule about <mark>coalescing</mark> memory."]


def test_markup_in_the_text_and_in_the_query_is_escaped(mini_book):
    Capsule.objects.filter(slug="free-one").update(body_text='needle <img src=x onerror="alert(1)"> & <b>bold</b>')
    (snippet,) = _snippets(search("anonymous", "needle"))
    assert snippet.startswith("<mark>needle</mark> ")
    # PostgreSQL's headline leaves tag-like text out, FTS5 quotes it: either way nothing is markup.
    assert not set(re.sub("</?mark>", "", snippet)) & set('<>"')
    page = search("anonymous", "needle <img src=y onerror=alert(2)>")
    assert "<img" not in page and "&lt;img src=y onerror=alert(2)&gt;" in page


@pytest.mark.parametrize(
    "query",
    ['warps"', "NEAR(warps", "warps AND", "OR", "-warps", "title:warps", "{body_text}: hide", "warps*", "^warps"],
)
def test_query_syntax_of_the_database_is_only_words(mini_book, query):
    client = Client()
    response = client.get("/search/", {"q": query})
    assert response.status_code == 200
    assert "SENTINEL-LOCKED" not in response.content.decode()


def test_the_locked_snippet_comes_from_the_summary_even_when_the_body_matches_better(mini_book):
    # "tiles" appears in the locked body (next to the sentinel) and, stemmed, in its summary.
    page = search("anonymous", "tiles tiles hide")
    assert _hits(page) == []  # "hide" is only in the locked body
    page = search("anonymous", "tiles")
    assert "locked-two" in _hits(page) and "SENTINEL" not in page
    assert "A locked capsule about shared-memory <mark>tiling</mark>." in _snippets(page)


def test_titles_are_marked_too(mini_book):
    Capsule.objects.filter(slug="locked-three").update(title="Warps & <em>tiles</em>")
    page = search("anonymous", "warp")
    assert 'href="/capsules/locked-three/">03 · <mark>Warps</mark> &amp; &lt;em&gt;tiles&lt;/em&gt;</a>' in page
    assert 'href="/capsules/free-one/">01 · Free one: welcome</a>' in page  # matched in its body only


@pytest.mark.parametrize("long_body", ["locked-two", "locked-three"])
def test_a_locked_body_does_not_even_move_its_capsule_in_the_ranking(mini_book, long_body):
    # Two locked capsules alike in public text: ranked alike (then in book order), whatever their bodies.
    Capsule.objects.filter(slug__in=["locked-two", "locked-three"]).update(
        title="Same title", summary="Coalescing loads.", body_text="short"
    )
    Capsule.objects.filter(slug=long_body).update(body_text="coalescing " + "filler " * 3000)
    assert [s for s in _hits(search("anonymous", "coalescing")) if s.startswith("locked")] == [
        "locked-two",
        "locked-three",
    ]

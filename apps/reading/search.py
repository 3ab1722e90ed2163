"""Full-text search of the published capsules, the same on both databases the site runs on.

PostgreSQL (production, tests) uses its own full-text search with the `english` configuration, on
stored, GIN-indexed vectors (apps/reading/fts_postgres.py);
SQLite (the `make run` default) uses its FTS5 index with the Porter stemmer (apps/reading/fts_sqlite.py).
Both stem ("coalesced" finds "coalescing"), rank titles above summaries above bodies, mark the
matched words with <mark> and quote whole words around them.

Access (ARCHITECTURE.md, "Paid content and access"): a capsule's title and summary are public, its body is not. The body
of a capsule is searched, and quoted, only where `readable_capsules(user)` holds it; every other
published capsule is matched and quoted on its title and summary alone, so neither the hits, their
order nor their snippets depend on locked text.

The reader's query is never handed to either database's query language as typed: it is parsed here
into words, "quoted phrases", `or` and `-excluded` terms (PostgreSQL's websearch syntax), and written
out again for each database from words only, so that no operator of FTS5 or tsquery can be injected.
"""

import re
from dataclasses import dataclass

from allauth.core.internal.ratelimit import get_ip
from django.conf import settings
from django.contrib.postgres.search import SearchHeadline, SearchQuery, SearchRank
from django.db import connection
from django.utils.html import escape

from apps.accounts.ratelimit import rate_allows
from apps.catalog.models import Capsule
from apps.reading.fts_postgres import SEARCH_DOCUMENT, SEARCH_PUBLIC, StoredVector
from apps.reading.fts_sqlite import FTS_TABLE, PUBLIC_FTS_TABLE
from apps.reading.policy import readable_capsules

SEARCH_RESULTS_LIMIT = 30
QUERY_MAX_CHARS = 200  # the search form refuses longer queries with a message; parse_query cuts them anyway
# Searches per client (a signed-in reader, else an address) and window in seconds: a person reading the
# book searches far less; a script hammering the full-text index is slowed to this.
SEARCH_RATE = (30, 60)
# About 25 words around the first match; PostgreSQL may join two fragments of a long body.
SNIPPET_WORDS = 25

# What ranks higher: a match in the title, then in the summary, then in the body (PostgreSQL's weights
# A, B and C are 1.0, 0.4 and 0.2 by default; FTS5's bm25 takes the same ratios per column).
_FTS_WEIGHTS = (5.0, 2.0, 1.0)

# Fields a search never needs of a capsule it may not quote: never loaded for those.
_BODY_FIELDS = ("body", "body_html", "body_text", "toc")

# English words that PostgreSQL's `english` configuration drops from queries and documents (its
# stop-word list: pronouns, articles, auxiliaries, conjunctions, common prepositions). FTS5 keeps
# every word, so a lone one of these is dropped from the SQLite query too: "which warps" then finds
# what PostgreSQL finds instead of nothing.
_STOP_WORDS_TEXT = """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


@dataclass(frozen=True)
class SearchHit:
    capsule: Capsule
    snippet: str  # escaped text with <mark> around matched words; safe to insert as HTML
    title_html: str  # the title, the same way
    readable: bool


# --- the reader's query ------------------------------------------------------------------------

_TERM = re.compile(r'(-?)"([^"]*)"?|(\S+)')
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class QueryGroup:
    """Phrases that must all appear, and phrases that must not (each phrase a tuple of words)."""

    required: tuple[tuple[str, ...], ...]
    excluded: tuple[tuple[str, ...], ...]


def parse_query(text: str) -> list[QueryGroup]:
    """The reader's query as alternatives (`or`) of groups; [] when it asks for nothing searchable.

    Like PostgreSQL's websearch syntax: words and "quoted phrases" are all required, `or` separates
    alternatives, a leading `-` excludes a word or phrase. A word is what \\w+ matches, so punctuation
    and operator characters never reach a database; a lone stop word is dropped (see STOP_WORDS); a
    group that excludes without requiring anything is dropped (FTS5 cannot express it)."""
    groups, required, excluded = [], [], []

    def close_group():
        if required:
            groups.append(QueryGroup(tuple(required), tuple(excluded)))
        required.clear()
        excluded.clear()

    for match in _TERM.finditer(" ".join(text.split())[:QUERY_MAX_CHARS]):
        minus, quoted, bare = match.groups()
        if bare is not None and bare.lower() == "or":
            close_group()
            continue
        if bare is not None and bare.startswith("-"):
            minus, bare = "-", bare[1:]
        words = tuple(w.lower() for w in _WORD.findall(quoted if bare is None else bare))
        if not words or (len(words) == 1 and words[0] in STOP_WORDS):
            continue
        (excluded if minus else required).append(words)
    close_group()
    return groups


def _websearch_text(groups: list[QueryGroup]) -> str:
    """The parsed query written back in websearch syntax from words only (PostgreSQL stems them)."""

    def phrase(words):
        return '"' + " ".join(words) + '"'

    return " or ".join(
        " ".join([*(phrase(p) for p in group.required), *("-" + phrase(p) for p in group.excluded)]) for group in groups
    )


def _fts5_expression(groups: list[QueryGroup]) -> str:
    """The parsed query as an FTS5 expression: every word inside a string, so it is only ever a
    term (FTS5 tokenizes and stems strings itself); operators and parentheses come from here."""

    def phrase(words):
        return '"' + " ".join(words) + '"'

    alternatives = []
    for group in groups:
        expression = "(" + " AND ".join(phrase(p) for p in group.required) + ")"
        if group.excluded:
            expression += " NOT (" + " OR ".join(phrase(p) for p in group.excluded) + ")"
        alternatives.append("(" + expression + ")")
    return " OR ".join(alternatives)


# --- snippets ----------------------------------------------------------------------------------

# The databases mark matches with these control characters (never in a capsule's text, which is
# rendered from Markdown); the snippet is escaped first and the markers become <mark> afterwards,
# so neither the text nor the query can inject markup.
_START, _STOP = "\x02", "\x03"
_ELLIPSIS = "…"
# Left out by a headline at either end, this many words are put back rather than replaced by "…".
_RESTORED_WORDS = 3


def _snippet_html(marked: str) -> str:
    text = " ".join(marked.split())
    # FTS5 puts its ellipsis right against the text; PostgreSQL's (ours) stands apart: the same on both.
    text = re.sub(f"^{_ELLIPSIS}(?=\\S)", f"{_ELLIPSIS} ", text)
    text = re.sub(f"(?<=\\S){_ELLIPSIS}$", f" {_ELLIPSIS}", text)
    return escape(text).replace(_START, "<mark>").replace(_STOP, "</mark>")


def _has_match(marked: str) -> bool:
    return _START in marked


def _with_ellipses(headline: str, source: str) -> str:
    """PostgreSQL's headline is whole words but says nothing of what it left out, and leaves out
    leading stop words and a final full stop: put back up to a few words it left at either end,
    and an ellipsis where more of the text goes on (FTS5's snippet does this itself)."""
    fragments = headline.split(f" {_ELLIPSIS} ")
    first = fragments[0].replace(_START, "").replace(_STOP, "")
    last = fragments[-1].replace(_START, "").replace(_STOP, "")
    start = source.find(first)
    end = source.rfind(last)
    if not first or start < 0 or end < 0:  # not expected; leave the headline as PostgreSQL gave it
        return headline
    head, tail = source[:start], source[end + len(last) :]
    before = f"{_ELLIPSIS} " if len(_WORD.findall(head)) > _RESTORED_WORDS else head.lstrip()
    after = f" {_ELLIPSIS}" if len(_WORD.findall(tail)) > _RESTORED_WORDS else tail.rstrip()
    return before + headline + after


def _choose_snippet(body: str | None, summary: str) -> str:
    """The body's snippet where the match is in the body, else the summary's (which may hold no
    match: the title matched). `body` is None for a capsule the searcher may not read."""
    if body is not None and _has_match(body):
        return _snippet_html(body)
    return _snippet_html(summary)


# --- the search --------------------------------------------------------------------------------


def search_rate() -> tuple[int, int]:
    """(searches, window in seconds): SEARCH_RATE, or settings.READING_SEARCH_RATE where set."""
    return getattr(settings, "READING_SEARCH_RATE", SEARCH_RATE)


def search_rate_allows(request) -> bool:
    """One more search for this client within search_rate(). Signed-in readers count on their own;
    others by address (allauth's get_ip, which knows the trusted proxies)."""
    limit, window_s = search_rate()
    user = request.user
    client = f"user:{user.pk}" if user.is_authenticated else f"ip:{get_ip(request)}"
    return rate_allows(f"search:{client}", limit=limit, window_s=window_s)


def capsule_search(user, query: str) -> list[SearchHit]:
    """Published capsules matching `query`, best first (at most SEARCH_RESULTS_LIMIT)."""
    groups = parse_query(query)
    if not groups:
        return []
    readable = readable_capsules(user)
    locked = Capsule.objects.published().exclude(pk__in=readable.values("pk"))
    if connection.vendor == "postgresql":
        hits = _search_postgres(readable, locked, groups)
    elif connection.vendor == "sqlite":
        hits = _search_sqlite(readable, locked, groups)
    else:
        raise NotImplementedError(f"search has no implementation for {connection.vendor}")
    return [hit for _, hit in sorted(hits, key=lambda pair: (pair[0], pair[1].capsule.number))][:SEARCH_RESULTS_LIMIT]


def _headline(field: str, search_query: SearchQuery) -> SearchHeadline:
    return SearchHeadline(
        field,
        search_query,
        config="english",
        start_sel=_START,
        stop_sel=_STOP,
        max_words=SNIPPET_WORDS,
        min_words=SNIPPET_WORDS // 2,
        max_fragments=2,
        fragment_delimiter=f" {_ELLIPSIS} ",
    )


def _title_headline(search_query: SearchQuery) -> SearchHeadline:
    """The whole title with its matches marked."""
    return SearchHeadline("title", search_query, config="english", start_sel=_START, stop_sel=_STOP, highlight_all=True)


def _search_postgres(readable, locked, groups) -> list[tuple[float, SearchHit]]:
    """(sort key, hit) pairs; the key is the negated rank, so that sorting puts the best first."""
    search_query = SearchQuery(_websearch_text(groups), search_type="websearch", config="english")
    # Stored and GIN-indexed (apps/reading/fts_postgres.py): the body's vector for readable capsules,
    # the title's and summary's alone for the others.
    public_vector = StoredVector(SEARCH_PUBLIC)
    full_vector = StoredVector(SEARCH_DOCUMENT)
    readable_hits = (
        readable.select_related("part")
        .alias(document=full_vector)
        .filter(document=search_query)
        .annotate(
            rank=SearchRank(full_vector, search_query),
            body_snippet=_headline("body_text", search_query),
            summary_snippet=_headline("summary", search_query),
            title_marked=_title_headline(search_query),
        )
        .order_by("-rank", "number")[:SEARCH_RESULTS_LIMIT]
    )
    locked_hits = (
        locked.select_related("part")
        .defer(*_BODY_FIELDS)
        .alias(document=public_vector)
        .filter(document=search_query)
        .annotate(
            rank=SearchRank(public_vector, search_query),
            summary_snippet=_headline("summary", search_query),
            title_marked=_title_headline(search_query),
        )
        .order_by("-rank", "number")[:SEARCH_RESULTS_LIMIT]
    )
    hits = []
    for capsule in readable_hits:
        snippet = _choose_snippet(
            _with_ellipses(capsule.body_snippet, capsule.body_text),
            _with_ellipses(capsule.summary_snippet, capsule.summary),
        )
        hits.append((-capsule.rank, SearchHit(capsule, snippet, _snippet_html(capsule.title_marked), True)))
    for capsule in locked_hits:
        snippet = _choose_snippet(None, _with_ellipses(capsule.summary_snippet, capsule.summary))
        hits.append((-capsule.rank, SearchHit(capsule, snippet, _snippet_html(capsule.title_marked), False)))
    return hits


def _fts5_matches(expression: str, capsules, *, with_body: bool) -> list[tuple[int, float, str | None, str, str]]:
    """(capsule id, bm25, body snippet or None, summary snippet, marked title) of the FTS5 matches
    among `capsules`.

    Without the body, the public index (title and summary only) is searched and ranks: neither the
    body's words nor its length count, and no snippet of it is asked for."""
    table = FTS_TABLE if with_body else PUBLIC_FTS_TABLE
    weights = ", ".join(str(w) for w in (_FTS_WEIGHTS if with_body else _FTS_WEIGHTS[:2]))
    ids_sql, ids_params = capsules.values("pk").query.sql_with_params()
    # Column numbers in both tables: 0 title, 1 summary, 2 body_text (the full index only).
    body_snippet = f"snippet({table}, 2, %s, %s, %s, {SNIPPET_WORDS})" if with_body else "NULL"
    sql = (
        f"SELECT rowid, bm25({table}, {weights}), {body_snippet}, "
        f"snippet({table}, 1, %s, %s, %s, {SNIPPET_WORDS}), highlight({table}, 0, %s, %s) "
        f"FROM {table} WHERE {table} MATCH %s AND rowid IN ({ids_sql}) "
        f"ORDER BY bm25({table}, {weights}) LIMIT {SEARCH_RESULTS_LIMIT}"
    )
    markers = [_START, _STOP, _ELLIPSIS]
    params = [*(markers if with_body else []), *markers, _START, _STOP, expression, *ids_params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _search_sqlite(readable, locked, groups) -> list[tuple[float, SearchHit]]:
    """(sort key, hit) pairs; bm25 is lower for better matches, so it sorts as it is."""
    expression = _fts5_expression(groups)
    readable_rows = _fts5_matches(expression, readable, with_body=True)
    locked_rows = _fts5_matches(expression, locked, with_body=False)
    # The text shown comes from the index; the rows only give the pages their links and parts.
    capsules = (
        Capsule.objects.select_related("part")
        .defer(*_BODY_FIELDS)
        .in_bulk([row[0] for row in readable_rows + locked_rows])
    )
    hits = []
    for rows, readable_now in ((readable_rows, True), (locked_rows, False)):
        for capsule_id, rank, body, summary, title in rows:
            if capsule_id in capsules:  # gone since the match: skip
                snippet, title_html = _choose_snippet(body, summary), _snippet_html(title)
                hits.append((rank, SearchHit(capsules[capsule_id], snippet, title_html, readable_now)))
    return hits

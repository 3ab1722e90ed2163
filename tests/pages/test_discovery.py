"""sitemap.xml, robots.txt, the Atom feed and the share pictures (issue 17): public text only, on SITE_URL."""

import struct
import xml.etree.ElementTree as ET

import pytest
from django.conf import settings
from django.test import Client

from apps.catalog.models import Capsule
from apps.pages import discovery
from tests.conftest import LOCKED_SENTINELS
from tests.subscriptions.visitors import client_for

SITEMAP_NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
ATOM_NS = {"a": "http://www.w3.org/2005/Atom"}


def _site(path: str) -> str:
    return settings.SITE_URL + path


def test_the_sitemap_lists_public_pages_and_published_capsules_on_the_site_address(mini_book):
    Capsule.objects.filter(slug="locked-three").update(status=Capsule.Status.DRAFT)
    response = Client().get("/sitemap.xml", HTTP_HOST="other-name.example.net")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/xml")
    root = ET.fromstring(response.content)
    urls = {u.findtext("s:loc", namespaces=SITEMAP_NS): u.findtext("s:lastmod", namespaces=SITEMAP_NS) for u in root}
    assert set(urls) == {
        _site("/"),
        _site("/pricing/"),
        _site("/reviews/"),
        _site("/capsules/free-one/"),
        _site("/capsules/locked-two/"),  # a locked capsule's page is public: its teaser
    }
    assert urls[_site("/capsules/locked-two/")].startswith(
        Capsule.objects.get(slug="locked-two").updated_at.strftime("%Y-%m-%d")
    )


def test_robots_txt_keeps_crawlers_off_private_pages_and_points_to_the_sitemap(db):
    response = Client().get("/robots.txt")
    assert response.status_code == 200 and response["Content-Type"] == "text/plain; charset=utf-8"
    lines = response.content.decode().splitlines()
    assert lines[0] == "User-agent: *"
    for path in ("/admin/", "/accounts/", "/billing/", "/search/", "/progress/", "/capsules/*/progress/"):
        assert f"Disallow: {path}" in lines
    assert "Disallow: /capsules/" not in lines and "Allow: /" in lines
    assert f"Sitemap: {_site('/sitemap.xml')}" in lines


def test_the_feed_is_atom_with_titles_and_public_summaries_only(mini_book):
    Capsule.objects.filter(slug="locked-three").update(status=Capsule.Status.DRAFT)
    response = Client().get("/feed/")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/atom+xml")
    body = response.content.decode()
    root = ET.fromstring(response.content)
    assert root.findtext("a:title", namespaces=ATOM_NS) == "Mini Book: new capsules"
    assert root.find("a:link[@rel='self']", ATOM_NS).get("href") == _site("/feed/")
    entries = {
        e.findtext("a:title", namespaces=ATOM_NS): (
            e.find("a:link", ATOM_NS).get("href"),
            e.findtext("a:summary", namespaces=ATOM_NS),
            {c.get("term") for c in e.findall("a:category", ATOM_NS)},
        )
        for e in root.findall("a:entry", ATOM_NS)
    }
    assert entries == {
        "01 · Free one: welcome": (
            _site("/capsules/free-one/"),
            "The free capsule about coalescing memory.",
            {"Start", "Free"},
        ),
        "02 · Locked two: tiling": (
            _site("/capsules/locked-two/"),
            "A locked capsule about shared-memory tiling.",
            {"Deep", "For subscribers"},
        ),
    }
    # No body, not even a free one's, and nothing of the locked one's.
    assert "Everyone may read" not in body and not any(s in body for s in LOCKED_SENTINELS)


def test_the_newest_changes_come_first_in_the_feed(mini_book):
    Capsule.objects.get(slug="free-one").save()  # edited last
    root = ET.fromstring(Client().get("/feed/").content)
    titles = [e.findtext("a:title", namespaces=ATOM_NS) for e in root.findall("a:entry", ATOM_NS)]
    assert titles[0] == "01 · Free one: welcome" and len(titles) == 3


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _head(page: str) -> str:
    return page[: page.index("</head>")]


def test_the_landing_page_shares_the_book_picture_and_a_capsule_its_part_picture(mini_book):
    client = client_for("active")
    landing = _head(client.get("/").content.decode())
    assert '<meta property="og:image" content="https://kernel.example.com/share/book.png">' in landing
    assert '<meta name="twitter:card" content="summary_large_image">' in landing
    assert '<link rel="alternate" type="application/atom+xml"' in landing
    capsule = _head(client.get("/capsules/locked-two/").content.decode())
    assert '<meta property="og:image" content="https://kernel.example.com/share/parts/1.png">' in capsule
    assert '<meta property="og:image:alt" content="Mini Book, part 1: Deep">' in capsule
    for url in ("/share/book.png", "/share/parts/1.png", "/share/parts/0.png"):
        response = Client().get(url)
        assert response.status_code == 200 and response["Content-Type"] == "image/png"
        assert _png_size(response.content) == (1200, 630)
        assert "public" in response["Cache-Control"] and response["ETag"]
    assert Client().get("/share/parts/7.png").status_code == 404


def test_the_pictures_are_drawn_from_public_text(mini_book, monkeypatch):
    cards = []

    def drawing(card):
        cards.append(card)
        return b"\x89PNG\r\n\x1a\n"

    monkeypatch.setattr(discovery, "share_image_png", drawing)
    Client().get("/share/book.png")
    Client().get("/share/parts/1.png")
    book, part = cards
    assert (book.eyebrow, book.title, book.text, book.footer) == (
        "Test Press · an online book",
        "Mini Book",
        "A tiny book for tests.",
        "3 capsules in 2 parts · Ada Tester",
    )
    assert (part.eyebrow, part.title, part.text, part.footer, part.lit_tile) == (
        "Mini Book · Part 1",
        "Deep",
        "The deep end.",
        "2 capsules, 0 free · Ada Tester",
        1,
    )


@pytest.mark.parametrize("title", ["", "x", "A title far too long " * 20])
def test_any_title_and_text_fit_the_picture(title):
    from apps.catalog.share_image import ShareCard, share_image_png

    png = share_image_png(ShareCard(eyebrow=title, title=title, text=title * 3, footer=title, lit_tile=8))
    assert _png_size(png) == (1200, 630)


def test_a_summary_is_text_to_feed_readers_not_markup(mini_book):
    Capsule.objects.filter(slug="free-one").update(summary="When a<b & c>d: <script>x</script>")
    root = ET.fromstring(Client().get("/feed/").content)
    summaries = [e.find("a:summary", ATOM_NS) for e in root.findall("a:entry", ATOM_NS)]
    (summary,) = [s for s in summaries if "When" in s.text]
    assert summary.get("type") == "html"
    assert summary.text == "When a&lt;b &amp; c&gt;d: &lt;script&gt;x&lt;/script&gt;"  # HTML that shows the text

"""What crawlers, feed readers and link previews get: sitemap.xml, robots.txt, an Atom feed of
capsules, and the share pictures (og:image) of the book and of each part.

Public text only (ARCHITECTURE.md, "Paid content and access"): titles, summaries, part descriptions and counts, which
are shown on locked capsules' pages to everyone; never a capsule's body, figures or exercise. Every
absolute URL is on the site's one address (SITE_URL, config/site.py), not on whatever host name a
crawler used, so the sitemap, the feed and the picture links agree with each other everywhere.
"""

import hashlib
from urllib.parse import urlsplit

from django.contrib.sitemaps import Sitemap
from django.contrib.syndication.views import Feed
from django.http import Http404, HttpResponse
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed
from django.utils.html import escape
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from apps.catalog import selectors as catalog
from apps.catalog.models import Capsule
from apps.catalog.share_image import ShareCard, share_image_png
from config.shared_cache import shared_get, shared_set
from config.site import absolute_url

FEED_ITEMS = 30
# Crawlers and link previews may keep these a while; they change only when the book does.
public_for_an_hour = cache_control(public=True, max_age=3600)


# --- sitemap.xml ---------------------------------------------------------------------------------


class _OnSiteUrl(Sitemap):
    """URLs on SITE_URL: Django would otherwise take the domain of the Site row (example.com)."""

    def get_protocol(self, protocol=None):
        return urlsplit(absolute_url("/")).scheme

    def get_domain(self, site=None):
        return urlsplit(absolute_url("/")).netloc


class PageSitemap(_OnSiteUrl):
    """The public pages that are not capsules."""

    def items(self):
        return ["pages:landing", "subscriptions:pricing", "reviews:review-list"]

    def location(self, item):
        return reverse(item)


class CapsuleSitemap(_OnSiteUrl):
    """Every published capsule, free or locked: a locked capsule's page is public (title, summary,
    outline and how to subscribe); its body is served only to readers with access."""

    def items(self):
        return Capsule.objects.published().in_reading_order().only("slug", "updated_at")

    def lastmod(self, capsule):
        return capsule.updated_at


SITEMAPS = {"pages": PageSitemap, "capsules": CapsuleSitemap}


# --- robots.txt ----------------------------------------------------------------------------------

# Pages for one reader (account, progress, billing), endpoints, search results and downloads are of
# no use in an index; everything else may be crawled.
_NOT_FOR_CRAWLERS = (
    "/admin/",
    "/accounts/",
    "/billing/",
    "/stripe/",
    "/search/",
    "/progress/",
    "/capsules/*/progress/",
    "/capsules/*/position/",
    "/capsules/*/complete/",
    "/epub/",
    "/book.epub",
    "/health/",
)


@require_GET
@public_for_an_hour
def robots_txt(request):
    lines = ["User-agent: *", *(f"Disallow: {path}" for path in _NOT_FOR_CRAWLERS), "Allow: /", ""]
    lines.append(f"Sitemap: {absolute_url(reverse('pages:sitemap'))}")
    return HttpResponse("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")


# --- the Atom feed -------------------------------------------------------------------------------


class CapsuleFeed(Feed):
    """The newest and latest changed capsules, with their public summaries (never their bodies)."""

    feed_type = Atom1Feed

    def get_object(self, request, *args, **kwargs):
        return catalog.book_get()

    def title(self, book):
        return f"{book.title}: new capsules"

    def subtitle(self, book):
        return book.subtitle or book.blurb

    def link(self, book):
        return absolute_url(reverse("pages:landing"))

    def feed_url(self, book):
        return absolute_url(reverse("pages:feed"))

    def author_name(self, book):
        return book.author

    def items(self, book):
        return (
            Capsule.objects.published()
            .filter(book=book)
            .select_related("part")
            .defer("body", "body_html", "body_text", "toc")  # never needed here: kept off the server's hands
            .order_by("-updated_at", "-number")[:FEED_ITEMS]
        )

    def item_title(self, capsule):
        return f"{capsule.number:02d} · {capsule.title}"

    def item_description(self, capsule):
        # Atom's summary is written as type="html": the plain-text summary escaped as HTML once here
        # (and once more as XML by the generator), so a "<" in it is text to a feed reader, not a tag.
        return escape(capsule.summary)

    def item_link(self, capsule):
        return absolute_url(capsule.get_absolute_url())

    def item_updateddate(self, capsule):
        return capsule.updated_at

    def item_categories(self, capsule):
        return [capsule.part.title, "Free" if capsule.is_free else "For subscribers"]


capsule_feed = public_for_an_hour(CapsuleFeed())


# --- share pictures (og:image) -------------------------------------------------------------------


def _png_response(card: ShareCard) -> HttpResponse:
    # Drawing takes tens of milliseconds: keep the PNG, keyed by everything drawn on it.
    key = "share-png:" + hashlib.sha256(repr(card).encode()).hexdigest()
    png = shared_get(key)
    if png is None:
        png = share_image_png(card)
        shared_set(key, png, timeout=7 * 24 * 3600)
    response = HttpResponse(png, content_type="image/png")
    response["ETag"] = '"' + hashlib.sha256(png).hexdigest()[:32] + '"'
    return response


def _capsule_count(count: int) -> str:
    return f"{count} capsule{'s' if count != 1 else ''}"


@require_GET
@public_for_an_hour
def share_image_book(request):
    book = catalog.book_get()
    parts = catalog.book_parts_with_capsules(book)
    capsules = sum(len(part.published_capsules) for part in parts)
    card = ShareCard(
        eyebrow=" · ".join(filter(None, [book.publisher, "an online book"])),
        title=book.title,
        text=book.subtitle or book.blurb,
        footer=f"{_capsule_count(capsules)} in {len(parts)} parts · {book.author}",
    )
    return _png_response(card)


@require_GET
@public_for_an_hour
def share_image_part(request, number: int):
    book = catalog.book_get()
    part = next((p for p in catalog.book_parts_with_capsules(book) if p.number == number), None)
    if part is None:
        raise Http404("No such part")
    free = sum(1 for capsule in part.published_capsules if capsule.is_free)
    card = ShareCard(
        eyebrow=f"{book.title} · Part {part.number}",
        title=part.title,
        text=part.description,
        footer=f"{_capsule_count(len(part.published_capsules))}, {free} free · {book.author}",
        lit_tile=part.number % 9,
    )
    return _png_response(card)

"""The book as an EPUB 3 file, built from the same rendered HTML as the reader.

Parts become sections, capsules chapters; figures are embedded as files, maths stays MathML (with
its LaTeX in `alttext`), code keeps the Pygments spans with an e-ink friendly stylesheet, and
footnotes get EPUB note semantics. ebooklib writes the package (OPF, navigation document, NCX);
the content documents are ours: rendered from templates/reading/epub_*.html, with each capsule's
stored `body_html` converted to namespaced XHTML and checked to be well-formed XML.

This module reads no access rules: it packs exactly the capsules it is given. Which capsules go into
which edition is decided by apps.reading.selectors.epub_sources, through the access policy.
"""

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import lxml.html
from django.conf import settings
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve
from ebooklib import epub as ebook
from lxml import etree
from pygments.formatters import HtmlFormatter

from apps.catalog.models import Book, Capsule, Figure, Part
from apps.catalog.reading_time import reading_minutes

XHTML_NS = "http://www.w3.org/1999/xhtml"
MATHML_NS = "http://www.w3.org/1998/Math/MathML"
EPUB_NS = "http://www.idpf.org/2007/ops"
XHTML_MEDIA_TYPE = "application/xhtml+xml"

# Bump when the produced file changes for the same content: every cached EPUB is then rebuilt.
FORMAT_VERSION = 1

_ATTRIBUTE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_KEPT_SCHEMES = {"http", "https", "mailto"}


class EpubError(Exception):
    """The book cannot be packed as an EPUB (content the EPUB cannot carry, or invalid XHTML)."""


@dataclass(frozen=True)
class Chapter:
    capsule: Capsule
    figures: list[Figure]

    @property
    def file_name(self) -> str:
        return chapter_file_name(self.capsule)


@dataclass(frozen=True)
class Section:
    part: Part
    chapters: list[Chapter]

    @property
    def file_name(self) -> str:
        return f"part-{self.part.number:02d}.xhtml"


@dataclass(frozen=True)
class EpubSources:
    """Everything one edition contains, loaded by apps.reading.selectors.epub_sources."""

    book: Book
    sample: bool
    site_url: str  # https://host, for links that leave the book
    sections: list[Section]
    # The sample's last page lists what it leaves out: public titles only, never bodies.
    left_out: list[tuple[Part, list[Capsule]]] = field(default_factory=list)
    pricing_url: str = ""

    @property
    def chapters(self) -> list[Chapter]:
        return [chapter for section in self.sections for chapter in section.chapters]

    @property
    def identifier(self) -> str:
        edition = "sample" if self.sample else "full"
        return uuid.uuid5(uuid.NAMESPACE_URL, f"{self.site_url}/books/{self.book.slug}/{edition}").urn


def chapter_file_name(capsule: Capsule) -> str:
    return f"capsule-{capsule.number:02d}.xhtml"


def figure_href(capsule: Capsule, figure: Figure) -> str:
    # Figure names are unique only within a capsule; the number keeps them apart in the book.
    return f"figures/{capsule.number:02d}/{figure.name}"


# --- Stylesheet --------------------------------------------------------------------------------
# E-ink first: black on the reader's own paper colour, no backgrounds to grey out, and code
# highlighted with Pygments' black-and-white style (bold keywords, italic comments) so syntax
# survives without colour. Sizes in em so the reader's font setting wins.
_BASE_CSS = """
html { -epub-hyphens: auto; hyphens: auto; }
body { margin: 0 0.5em; line-height: 1.45; }
h1, h2, h3, h4 { line-height: 1.2; page-break-after: avoid; break-after: avoid; hyphens: none; }
h1 { font-size: 1.6em; margin: 0.5em 0 0.8em; }
h2 { font-size: 1.3em; margin: 1.4em 0 0.5em; }
h3 { font-size: 1.1em; margin: 1.2em 0 0.4em; }
p { margin: 0 0 0.8em; }
a { color: inherit; text-decoration: underline; }
.kicker, .meta { font-size: 0.85em; margin: 0 0 0.3em; }
.chapter-number { font-weight: normal; }
pre { font-family: monospace; font-size: 0.8em; line-height: 1.3; white-space: pre-wrap; word-wrap: break-word;
      border-left: 2px solid currentColor; padding: 0.2em 0 0.2em 0.6em; margin: 0 0 1em; page-break-inside: avoid; }
code { font-family: monospace; font-size: 0.9em; }
pre code { font-size: 1em; }
blockquote { margin: 0 0 1em 1em; padding-left: 0.6em; border-left: 1px solid currentColor; }
figure { margin: 1em 0; text-align: center; page-break-inside: avoid; break-inside: avoid; }
figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.85em; margin-top: 0.4em; text-align: left; }
.figure-label { font-weight: bold; }
table { border-collapse: collapse; margin: 0 0 1em; font-size: 0.9em; }
th, td { border: 1px solid currentColor; padding: 0.2em 0.4em; }
math[display="block"] { display: block; margin: 0.8em 0; }
sup { line-height: 0; }
hr.footnotes-sep { border: 0; border-top: 1px solid currentColor; width: 30%; margin: 2em 0 1em; }
.footnotes { font-size: 0.85em; }
.cover { text-align: center; margin-top: 20%; }
.cover-title { font-size: 2.2em; margin-bottom: 0.4em; }
.cover-subtitle { font-size: 1.2em; font-style: italic; margin-bottom: 2em; }
.cover-author { font-size: 1.2em; font-weight: bold; }
.cover-edition { margin-top: 2em; font-weight: bold; }
.part-page { margin-top: 15%; }
.contents-list, .left-out { padding-left: 1.2em; }
"""


_TOKEN_RULE = re.compile(r"^pre code \.[a-z0-9]+ \{ (?P<declarations>[^}]*) \}")


def stylesheet() -> str:
    # Only the token rules that set weight or style: Pygments' background, line-number and
    # error colours would print as grey boxes on e-ink and fight a reader's night mode.
    rules = [
        line.split(" /*")[0]
        for line in HtmlFormatter(style="bw").get_style_defs("pre code").splitlines()
        if (match := _TOKEN_RULE.match(line))
        and all(d.strip().startswith("font-") for d in match["declarations"].split(";") if d.strip())
    ]
    return (
        _BASE_CSS.lstrip()
        + "\n/* Code: Pygments 'bw' (bold keywords, italic comments and strings) */\n"
        + "\n".join(rules)
        + "\n"
    )


# --- Capsule HTML -> XHTML ---------------------------------------------------------------------


class _Links:
    """Rewrites the reader's URLs for the EPUB: figures to the embedded files, links to capsules in
    this EPUB to their chapter file, everything else on the site to an absolute address."""

    def __init__(self, sources: EpubSources):
        self.site_url = sources.site_url
        self.chapters_by_slug = {chapter.capsule.slug: chapter for chapter in sources.chapters}

    def figure_src(self, chapter: Chapter, src: str) -> str:
        for figure in chapter.figures:
            if src == figure.get_absolute_url():
                return figure_href(chapter.capsule, figure)
        raise EpubError(f"capsule {chapter.capsule.number:02d}: image {src!r} is not one of its figures")

    def href(self, chapter: Chapter, href: str) -> str:
        if href.startswith("#"):
            return href
        if urlsplit(href).scheme in _KEPT_SCHEMES:
            absolute = href
        else:
            absolute = urljoin(self.site_url + chapter.capsule.get_absolute_url(), href)
        parts = urlsplit(absolute)
        if f"{parts.scheme}://{parts.netloc}" == self.site_url:
            target = self._chapter_for_path(parts.path)
            if target is not None:
                return target.file_name + (f"#{parts.fragment}" if parts.fragment else "")
        return absolute

    def _chapter_for_path(self, path: str) -> Chapter | None:
        try:
            match = resolve(path)
        except Resolver404:
            return None
        if match.view_name != "reading:capsule":
            return None
        return self.chapters_by_slug.get(match.kwargs.get("slug"))


def _note_semantics(source, attributes: dict) -> None:
    """markdown-it's footnotes, marked up the way e-readers show them (pop-up notes)."""
    classes = set((source.get("class") or "").split())
    parent = source.getparent()
    if source.tag == "a" and parent is not None and "footnote-ref" in (parent.get("class") or "").split():
        attributes[f"{{{EPUB_NS}}}type"] = "noteref"
        attributes["role"] = "doc-noteref"
    elif source.tag == "section" and "footnotes" in classes:
        attributes[f"{{{EPUB_NS}}}type"] = "endnotes"
        attributes["role"] = "doc-endnotes"
    elif source.tag == "li" and "footnote-item" in classes:
        attributes[f"{{{EPUB_NS}}}type"] = "endnote"
    elif source.tag == "a" and "footnote-backref" in classes:
        attributes["role"] = "doc-backlink"


def _copy_children(source, target, *, in_math: bool, chapter: Chapter, links: _Links) -> None:
    for node in source:
        if not isinstance(node.tag, str):  # comments, processing instructions
            continue
        tag = node.tag.lower()
        math = in_math or tag == "math"
        attributes: dict[str, str] = {}
        for name, value in node.attrib.items():
            name = name.lower()
            # `xmlns` becomes the element's namespace; lazy loading means nothing in a package.
            if name in ("xmlns", "loading") or not _ATTRIBUTE_NAME.match(name):
                continue
            if tag == "img" and name == "src":
                value = links.figure_src(chapter, value)
            elif tag == "a" and name == "href":
                value = links.href(chapter, value)
            attributes[name] = value
        if not math:
            _note_semantics(node, attributes)
        namespace = MATHML_NS if math else XHTML_NS
        element = etree.SubElement(
            target, f"{{{namespace}}}{tag}", attributes, nsmap={None: MATHML_NS} if tag == "math" else None
        )
        element.text = node.text
        element.tail = node.tail
        _copy_children(node, element, in_math=math, chapter=chapter, links=links)


def capsule_body_into(slot, chapter: Chapter, links: _Links) -> None:
    """Fill `slot` (an XHTML element) with the capsule's stored reader HTML, as XHTML.

    The stored HTML was sanitised by the content pipeline (nh3): it is parsed as HTML (void tags,
    character references) and rebuilt element by element in the XHTML and MathML namespaces."""
    wrapper = lxml.html.fragment_fromstring(chapter.capsule.body_html, create_parent="div")
    slot.text = wrapper.text
    _copy_children(wrapper, slot, in_math=False, chapter=chapter, links=links)


# --- Documents ---------------------------------------------------------------------------------


def _parse_document(markup: str, name: str):
    try:
        return etree.fromstring(markup.encode("utf-8"), parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as error:
        raise EpubError(f"{name} is not well-formed XHTML: {error}") from error


def _serialise(root) -> bytes:
    return etree.tostring(root.getroottree(), encoding="utf-8", xml_declaration=True, doctype="<!DOCTYPE html>")


def _document(template: str, context: dict, name: str) -> bytes:
    return _serialise(_parse_document(render_to_string(template, context), name))


def chapter_document(chapter: Chapter, sources: EpubSources, links: _Links) -> bytes:
    capsule = chapter.capsule
    name = chapter.file_name
    root = _parse_document(
        render_to_string("reading/epub_chapter.html", {"book": sources.book, "capsule": capsule}), name
    )
    if capsule.body_html:
        slot = root.find(f".//{{{XHTML_NS}}}div[@id='capsule-body']")
        capsule_body_into(slot, chapter, links)
    return _serialise(root)


def _has_maths(document: bytes) -> bool:
    return etree.fromstring(document).find(f".//{{{MATHML_NS}}}math") is not None


# --- Cover image -------------------------------------------------------------------------------

SVG_NS = "http://www.w3.org/2000/svg"


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def cover_svg(book: Book, *, sample: bool) -> bytes:
    """The cover image reading systems show in their library: black on white (e-ink), the same
    title, subtitle and author as the cover page; text nodes, so it stays sharp at any size."""
    svg = etree.Element(
        f"{{{SVG_NS}}}svg",
        {"viewBox": "0 0 600 900", "width": "600", "height": "900", "role": "img"},
        nsmap={None: SVG_NS},
    )
    etree.SubElement(
        svg, f"{{{SVG_NS}}}title"
    ).text = f"{book.title}{': ' + book.subtitle if book.subtitle else ''}, by {book.author}"
    etree.SubElement(svg, f"{{{SVG_NS}}}rect", {"width": "600", "height": "900", "fill": "#ffffff"})
    etree.SubElement(
        svg,
        f"{{{SVG_NS}}}rect",
        {
            "x": "30",
            "y": "30",
            "width": "540",
            "height": "840",
            "fill": "none",
            "stroke": "#000000",
            "stroke-width": "4",
        },
    )

    def lines(texts: list[str], *, y: float, size: int, weight: str = "normal", style: str = "normal") -> float:
        for text in texts:
            node = etree.SubElement(
                svg,
                f"{{{SVG_NS}}}text",
                {
                    "x": "300",
                    "y": f"{y:.0f}",
                    "text-anchor": "middle",
                    "font-family": "Georgia, serif",
                    "font-size": str(size),
                    "font-weight": weight,
                    "font-style": style,
                    "fill": "#000000",
                },
            )
            node.text = text
            y += size * 1.25
        return y

    y = lines(_wrap(book.title, 16), y=230, size=64, weight="bold")
    if book.subtitle:
        lines(_wrap(book.subtitle, 30), y=y + 40, size=30, style="italic")
    lines([book.author], y=740, size=34, weight="bold")
    if sample:
        lines(["Free sample"], y=810, size=28)
    return etree.tostring(svg, encoding="utf-8", xml_declaration=True)


# --- Package -----------------------------------------------------------------------------------


def _content_item(uid: str, file_name: str, content: bytes, *, title: str = "") -> ebook.EpubItem:
    item = ebook.EpubItem(uid=uid, file_name=file_name, media_type=XHTML_MEDIA_TYPE, content=content)
    # The manifest must declare MathML (and inline SVG, which we never use: figures are files).
    item.properties = ["mathml"] if _has_maths(content) else []
    item.title = title
    return item


def _metadata(package: ebook.EpubBook, sources: EpubSources, modified: datetime) -> None:
    book = sources.book
    title = f"{book.title} (free sample)" if sources.sample else book.title
    package.set_identifier(sources.identifier)
    package.set_title(title)
    package.set_language(book.language or "en")
    package.add_author(book.author)
    description = " ".join(part for part in (book.subtitle, book.blurb, _edition_numbers(sources)) if part)
    package.add_metadata("DC", "description", description)
    if book.publisher:
        package.add_metadata("DC", "publisher", book.publisher)
    package.add_metadata("DC", "date", modified.strftime("%Y-%m-%d"))
    package.add_metadata("DC", "source", sources.site_url + "/")
    # Accessibility metadata (EPUB Accessibility 1.1): what a reading system may rely on.
    for prop, value in (
        ("schema:accessMode", "textual"),
        ("schema:accessMode", "visual"),
        ("schema:accessModeSufficient", "textual"),
        ("schema:accessibilityFeature", "MathML"),
        ("schema:accessibilityFeature", "alternativeText"),
        ("schema:accessibilityFeature", "tableOfContents"),
        ("schema:accessibilityFeature", "structuralNavigation"),
        ("schema:accessibilityHazard", "none"),
        (
            "schema:accessibilitySummary",
            "Text with MathML maths (LaTeX kept as alternative text), described SVG figures and a navigable "
            "table of contents.",
        ),
    ):
        package.add_metadata(None, "meta", value, {"property": prop})


def _edition_numbers(sources: EpubSources) -> str:
    """This edition in numbers, counted from the chapters it holds (as the landing page counts the book)."""
    capsules = [chapter.capsule for chapter in sources.chapters]
    words = sum(capsule.words for capsule in capsules)
    figures = sum(len(chapter.figures) for chapter in sources.chapters)
    drafts = sum(1 for capsule in capsules if capsule.is_draft)
    wpm = settings.READING_WORDS_PER_MINUTE
    return (
        f"{len(capsules)} capsules{f' ({drafts} in draft)' if drafts else ''}, {figures} figures, {words:,} words: "
        f"about {reading_minutes(words) if words else 0} minutes of reading at {wpm} words a minute."
    )


def write_epub(sources: EpubSources, path: Path, *, modified: datetime) -> None:
    """Write the edition described by `sources` to `path` (the caller makes the write atomic)."""
    if not sources.chapters and not sources.sample:
        raise EpubError("the book has no published capsules")
    package = ebook.EpubBook()
    _metadata(package, sources, modified)
    links = _Links(sources)
    context = {"book": sources.book, "sample": sources.sample}

    style = ebook.EpubItem(
        uid="style", file_name="style/book.css", media_type="text/css", content=stylesheet().encode()
    )
    package.add_item(style)

    cover_image = ebook.EpubItem(
        uid="cover-image",
        file_name="cover.svg",
        media_type="image/svg+xml",
        content=cover_svg(sources.book, sample=sources.sample),
    )
    cover_image.properties = ["cover-image"]
    package.add_item(cover_image)
    package.add_metadata(None, "meta", "", {"name": "cover", "content": "cover-image"})  # for EPUB 2 reading systems
    cover = _content_item(
        "cover", "cover.xhtml", _document("reading/epub_cover.html", context, "cover.xhtml"), title="Cover"
    )
    package.add_item(cover)
    nav = ebook.EpubNav(title="Contents")
    nav.add_link(href="style/book.css", rel="stylesheet", type="text/css")
    package.add_item(nav)
    package.add_item(ebook.EpubNcx())

    spine: list = [cover, nav]
    toc: list = []
    for section in sources.sections:
        part_item = _content_item(
            f"part-{section.part.number:02d}",
            section.file_name,
            _document(
                "reading/epub_part.html",
                {**context, "part": section.part, "chapters": section.chapters},
                section.file_name,
            ),
            title=section.part.title,
        )
        package.add_item(part_item)
        spine.append(part_item)
        entries = []
        for chapter in section.chapters:
            capsule = chapter.capsule
            uid = f"capsule-{capsule.number:02d}"
            # A draft says so in the contents too, not only on its first page.
            title = f"{capsule.title} (draft)" if capsule.is_draft else capsule.title
            item = _content_item(uid, chapter.file_name, chapter_document(chapter, sources, links), title=title)
            package.add_item(item)
            spine.append(item)
            entries.append(ebook.Link(chapter.file_name, f"{capsule.number:02d} · {title}", f"toc-{uid}"))
            for figure in chapter.figures:
                package.add_item(
                    ebook.EpubItem(
                        uid=f"figure-{capsule.number:02d}-{figure.number}",
                        file_name=figure_href(capsule, figure),
                        media_type="image/svg+xml",
                        content=figure.svg.encode("utf-8"),
                    )
                )
        label = f"Part {section.part.number:02d} · {section.part.title}"
        toc.append((ebook.Section(label, href=section.file_name), entries))

    if sources.sample:
        more_context = {
            **context,
            "left_out": sources.left_out,
            "pricing_url": sources.pricing_url,
            "included": len(sources.chapters),
        }
        more = _content_item(
            "get-the-rest",
            "get-the-rest.xhtml",
            _document("reading/epub_more.html", more_context, "get-the-rest.xhtml"),
            title="Read the whole book",
        )
        package.add_item(more)
        spine.append(more)
        toc.append(ebook.Link(more.file_name, "Read the whole book", "toc-get-the-rest"))

    package.toc = toc
    package.spine = spine
    # A sample of a book without free capsules still opens: cover, contents and how to get the rest.
    start = sources.sections[0].file_name if sources.sections else spine[-1].file_name
    package.guide = [
        {"href": cover.file_name, "title": "Cover", "type": "cover"},
        {"href": nav.file_name, "title": "Contents", "type": "toc"},
        {"href": start, "title": "Start of the book", "type": "text"},
    ]
    ebook.write_epub(str(path), package, {"mtime": modified, "epub3_pages": False, "raise_exceptions": True})

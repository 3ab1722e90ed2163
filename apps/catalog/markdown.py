"""Capsule Markdown to safe HTML: the one content pipeline for the reader, search and the EPUB.

markdown-it in its `js-default` preset (raw HTML is escaped, never passed through), with
footnotes, `{attrs}`, heading anchors, `$maths$` rendered on the server as MathML (the LaTeX kept
as `alttext` for screen readers and e-readers), code highlighted by Pygments, and an image alone in
its paragraph promoted to a numbered <figure>. The result is sanitised once more with nh3 against
an explicit allowlist, so a bug in any plugin still cannot emit script.
"""

import functools
import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import nh3
from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.attrs import attrs_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from apps.catalog.math_text import latex_as_text
from apps.catalog.measurements import Measurement

FIGURE_SRC = re.compile(r"^figures/(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*\.svg)$")


class ContentError(ValueError):
    """A capsule's Markdown cannot be rendered; `line` is 1-based within the Markdown body."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class FigureRef:
    name: str
    number: int
    caption: str
    line: int


@dataclass
class Rendered:
    html: str
    text: str
    toc: list[dict] = field(default_factory=list)
    figures: list[FigureRef] = field(default_factory=list)


MATHML_TAGS = {
    "math",
    "semantics",
    "annotation",
    "mrow",
    "mi",
    "mn",
    "mo",
    "ms",
    "mtext",
    "mspace",
    "msup",
    "msub",
    "msubsup",
    "mfrac",
    "msqrt",
    "mroot",
    "mstyle",
    "mpadded",
    "mphantom",
    "menclose",
    "mtable",
    "mtr",
    "mtd",
    "munder",
    "mover",
    "munderover",
    "merror",
}
HTML_TAGS = {
    "p",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "a",
    "em",
    "strong",
    "code",
    "pre",
    "span",
    "ul",
    "ol",
    "li",
    "blockquote",
    "hr",
    "br",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "figure",
    "figcaption",
    "img",
    "sup",
    "sub",
    "section",
    "div",
    "s",
    "del",
}
MATHML_ATTRIBUTES = {
    "xmlns",
    "display",
    "alttext",
    "mathvariant",
    "stretchy",
    "fence",
    "separator",
    "lspace",
    "rspace",
    "columnalign",
    "columnspacing",
    "rowspacing",
    "accent",
    "accentunder",
    "movablelimits",
    "width",
    "minsize",
    "maxsize",
    "symmetric",
    "form",
    "linethickness",
    "notation",
    "encoding",
    "largeop",
    "displaystyle",
    "scriptlevel",
}
ALLOWED_ATTRIBUTES = {
    **{tag: set(MATHML_ATTRIBUTES) for tag in MATHML_TAGS},
    "a": {"href", "id", "class", "title"},
    "img": {"src", "alt", "width", "height", "loading", "class"},
    "h2": {"id"},
    "h3": {"id"},
    "h4": {"id"},
    "h5": {"id"},
    "h6": {"id"},
    "li": {"id", "class"},
    "ol": {"class", "start"},
    "ul": {"class"},
    "sup": {"id", "class"},
    "section": {"class"},
    "div": {"class"},
    "span": {"class", "title"},
    "code": {"class"},
    "pre": {"class"},
    "figure": {"id", "class", "style"},  # style: --figure-legible-width only (render_markdown's filter)
    "figcaption": {"class"},
    "hr": {"class"},
    "th": {"style"},
    "td": {"style"},
}


def _highlight(code: str, lang: str, _attrs) -> str:
    return _highlighted(code, lang)


# Highlighting and maths conversion are pure and take most of a render: a book import renders each capsule twice
# (read_book checks it, capsule_render stores it) and _check_maths converts every formula before the render does.
# Memoised, the second conversion of the same text is free, and so is re-importing an unchanged book in one process.
@functools.lru_cache(maxsize=4096)
def _highlighted(code: str, lang: str) -> str:
    try:
        lexer = get_lexer_by_name(lang or "text")
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    # nowrap: markdown-it supplies the <pre><code class="language-x"> around the spans.
    return highlight(code, lexer, HtmlFormatter(nowrap=True))


def highlight_lines(code: str, lang: str) -> list[str]:
    """`code` highlighted as the book's code blocks are (same lexers, same token classes), one HTML string a
    line, for listings that number their lines (a submission's source). Lines are split on newlines only, as
    the compiler counts them, and leading or trailing blank lines are kept so the numbers stay true; the
    formatter closes its spans at each line end, so every line is balanced HTML on its own."""
    try:
        lexer = get_lexer_by_name(lang or "text", stripnl=False, ensurenl=False)
    except ClassNotFound:
        lexer = get_lexer_by_name("text", stripnl=False, ensurenl=False)
    html = highlight(code.replace("\r\n", "\n").replace("\r", "\n"), lexer, HtmlFormatter(nowrap=True))
    lines = html.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another
    return lines


@functools.lru_cache(maxsize=16384)
def _converted(latex: str, display: str) -> str:
    return latex_to_mathml(latex, display=display)


def _mathml(latex: str, *, display: bool) -> str:
    mathml = _converted(latex, "block" if display else "inline")
    # latex2mathml has no alttext option; the LaTeX is the accessible (and e-reader) fallback.
    return mathml.replace("<math ", f'<math alttext="{html.escape(latex.strip(), quote=True)}" ', 1)


def _build_parser() -> MarkdownIt:
    md = MarkdownIt("js-default", {"highlight": _highlight})
    md.use(footnote_plugin).use(attrs_plugin).use(dollarmath_plugin, allow_digits=False, double_inline=True)
    md.use(anchors_plugin, min_level=2, max_level=3)
    md.add_render_rule(
        "math_inline", lambda self, tokens, idx, options, env: _mathml(tokens[idx].content, display=False)
    )
    md.add_render_rule(
        "math_inline_double", lambda self, tokens, idx, options, env: _mathml(tokens[idx].content, display=True)
    )
    md.add_render_rule(
        "math_block",
        # In a box of its own: a formula wider than the column scrolls sideways in it, with a cue (reader.css).
        lambda self, tokens, idx, options, env: (
            f'<div class="math-block">{_mathml(tokens[idx].content, display=True)}</div>\n'
        ),
    )
    md.add_render_rule("figure", _render_figure)
    md.inline.ruler.before("escape", "measurement", _measurement_reference)
    md.add_render_rule("measurement", _render_measurement)
    return md


# A measured figure cited from the book's measurements.yaml (apps.catalog.measurements): `{{m:KEY}}` is its value
# and unit, `{{m:KEY:bare}}` the number alone. An inline rule, so code spans, fenced code and maths, which other
# rules consume first, never see one; a reference in maths is refused by _check_measurements.
MEASUREMENT_REFERENCE = re.compile(r"\{\{m:(?P<key>[a-z0-9_]+(?:\.[a-z0-9_]+)*)(?P<bare>:bare)?\}\}")


def _measurement_reference(state, silent: bool) -> bool:
    if not state.src.startswith("{{m:", state.pos):
        return False
    match = MEASUREMENT_REFERENCE.match(state.src, state.pos)
    if not match:
        return False
    if not silent:
        key, bare = match["key"], bool(match["bare"])
        found = (state.env.get("measurements") or {}).get(key)
        token = state.push("measurement", "", 0)
        # The content is the text the reference stands for, so a figure's caption (its image's children) has it.
        token.content = found.text(bare=bare) if found else match[0]
        token.meta = {"key": key, "found": found}
    state.pos = match.end()
    return True


def _render_measurement(self, tokens, idx, options, env) -> str:
    found: Measurement = tokens[idx].meta["found"]
    note = f"Measured on the {found.gpu}, {found.date}"
    return f'<span class="measured" title="{html.escape(note)}">{html.escape(tokens[idx].content)}</span>'


def _check_measurements(tokens: list[Token]) -> None:
    """Every reference names a key of the measurements file; none sits in maths, where it is never filled in."""
    line = 0
    for token in tokens:
        if token.map:
            line = token.map[0] + 1
        for candidate in [token, *(token.children or [])]:
            for child in [candidate, *(candidate.children or [])]:
                if child.type == "measurement" and child.meta["found"] is None:
                    raise ContentError(
                        f"unknown measurement {child.meta['key']!r}: not a key of measurements.yaml", line
                    )
                if child.type.startswith("math_") and "{{m:" in child.content:
                    raise ContentError(
                        "a measurement reference inside maths is not filled in: write the number there", line
                    )


def _render_figure(self, tokens, idx, options, env) -> str:
    meta = tokens[idx].meta
    size: FigureSize | None = meta.get("size")
    # The drawing's size as attributes, so that its box is kept before it loads (a jump to a footnote lands where
    # it should on a cold load); the width at which its smallest text is 10 px, never shown narrower (reader.css).
    dimensions = f' width="{size.width}" height="{size.height}"' if size else ""
    legible = f' style="--figure-legible-width: {size.legible_width}px"' if size and size.legible_width else ""
    return (
        f'<figure id="figure-{meta["number"]}"{legible}>'
        f'<img src="{html.escape(meta["src"])}" alt="{html.escape(meta["caption"])}"{dimensions} loading="lazy">'
        f'<figcaption><span class="figure-label">Figure {meta["number"]}.</span> '
        f"{html.escape(meta['caption'])}</figcaption>"
        "</figure>\n"
    )


_PARSER = _build_parser()


def _check_maths(tokens: list[Token]) -> None:
    """Convert every formula once up front, so bad LaTeX is reported with its line."""
    line = 0
    for token in tokens:
        if token.map:
            line = token.map[0] + 1
        candidates = [token] + list(token.children or [])
        for candidate in candidates:
            if candidate.type.startswith("math_"):
                try:
                    _converted(candidate.content, "block" if candidate.type != "math_inline" else "inline")
                except Exception as error:  # latex2mathml raises plain exceptions of several kinds
                    raise ContentError(
                        f"cannot render the maths {candidate.content.strip()[:60]!r}: {error}", line
                    ) from error


@dataclass(frozen=True)
class FigureSize:
    width: int  # the drawing's own size in CSS pixels: its width and height attributes, else its viewBox
    height: int
    legible_width: int  # the width at which its smallest text is LEGIBLE_TEXT_PX; 0 when it has no sized text


LEGIBLE_TEXT_PX = 10
_SVG_ROOT = re.compile(r"<svg\b[^>]*>", re.S)
_LENGTH = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(px)?\s*$")
_FONT_SIZE = re.compile(r"font-size\s*(?:=\s*[\"']|:)\s*([0-9]*\.?[0-9]+)(?:px)?(?![\w%.])")  # em, %: relative


def _root_attribute(root: str, name: str) -> str | None:
    found = re.search(rf"\s{name}\s*=\s*([\"'])(.*?)\1", root, re.S)
    return found.group(2) if found else None


def svg_size(svg: str) -> FigureSize | None:
    """An SVG figure's size from its root element (width and height in pixels, else the viewBox), and the width at
    which its smallest font size (attributes and styles, in the drawing's units) reads at LEGIBLE_TEXT_PX. None
    when the root states no usable size."""
    root = _SVG_ROOT.search(svg)
    if root is None:
        return None
    box = (_root_attribute(root.group(0), "viewBox") or "").replace(",", " ").split()
    try:
        box_width, box_height = (float(box[2]), float(box[3])) if len(box) == 4 else (0.0, 0.0)
    except ValueError:
        box_width = box_height = 0.0
    sizes = [_LENGTH.match(_root_attribute(root.group(0), name) or "") for name in ("width", "height")]
    if all(sizes):
        width, height = (float(size.group(1)) for size in sizes)
    else:
        width, height = box_width, box_height
    if width <= 0 or height <= 0:
        return None
    fonts = [float(size) for size in _FONT_SIZE.findall(svg) if float(size) > 0]
    units = box_width or width  # the drawing's units across its width
    legible = round(units * LEGIBLE_TEXT_PX / min(fonts)) if fonts else 0
    return FigureSize(width=round(width), height=round(height), legible_width=legible)


def _promote_figures(
    tokens: list[Token], figure_url: Callable[[str], str], figure_svg: Callable[[str], str | None] | None = None
) -> tuple[list[FigureRef], list[Token]]:
    """An image alone in a paragraph becomes a numbered figure; only figures/NAME.svg may be used."""
    for token in tokens:
        for child in token.children or []:
            src = child.attrGet("src") or "" if child.type == "image" else None
            if src is not None and not FIGURE_SRC.match(src):
                line = token.map[0] + 1 if token.map else None
                raise ContentError(f"image {src!r}: figures must be figures/NAME.svg files of the book", line)
    figures: list[FigureRef] = []
    result: list[Token] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        line = token.map[0] + 1 if token.map else 0
        is_lone_image = (
            token.type == "paragraph_open"
            and i + 2 < len(tokens)
            and tokens[i + 1].type == "inline"
            and len(tokens[i + 1].children or []) == 1
            and tokens[i + 1].children[0].type == "image"
        )
        if is_lone_image:
            image = tokens[i + 1].children[0]
            name = FIGURE_SRC.match(image.attrGet("src")).group("name")
            caption = "".join(child.content for child in image.children or []).strip()
            if not caption:
                raise ContentError(f"figure {name} needs a caption: ![Caption.](figures/{name})", line)
            ref = FigureRef(name=name, number=len(figures) + 1, caption=caption, line=line)
            figures.append(ref)
            figure = Token("figure", "", 0, map=token.map, block=True)
            svg = figure_svg(name) if figure_svg else None
            figure.meta = {
                "number": ref.number,
                "caption": caption,
                "src": figure_url(name),
                "size": svg_size(svg) if svg else None,
            }
            result.append(figure)
            i += 3
            continue
        result.append(token)
        i += 1
    return figures, result


def _table_of_contents(tokens: list[Token]) -> list[dict]:
    toc = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag in ("h2", "h3"):
            toc.append({"level": int(token.tag[1]), "id": token.attrGet("id"), "title": tokens[i + 1].content})
    return toc


def _plain_text(safe_html: str) -> str:
    """Text for search, its snippets and the word count: tags dropped, maths as plain text from its LaTeX (search
    snippets showed `\\frac{...}` itself: apps.catalog.math_text)."""
    text = re.sub(
        r'<math[^>]*alttext="([^"]*)"[^>]*>.*?</math>',
        lambda m: f" {html.escape(latex_as_text(html.unescape(m.group(1))))} ",
        safe_html,
        flags=re.S,
    )
    text = re.sub(r"<[^>]+>", " ", text)
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


def prose_text(safe_html: str) -> str:
    """The text a reader reads as prose: the rendered HTML's text (maths as plain text, as `_plain_text`) without
    its code listings (every <pre> block). Inline `code` inside a sentence stays; it is part of the sentence."""
    return _plain_text(re.sub(r"<pre\b.*?</pre>", " ", safe_html, flags=re.S))


def render_markdown(
    source: str,
    *,
    figure_url: Callable[[str], str],
    measurements: Mapping[str, Measurement] | None = None,
    figure_svg: Callable[[str], str | None] | None = None,
) -> Rendered:
    """`measurements`: the book's measured figures by key, which `{{m:KEY}}` references cite (none: a reference
    is an error). `figure_svg`: a figure's SVG text by file name, which sizes its <img> (svg_size)."""
    env: dict = {"measurements": measurements or {}}
    tokens = _PARSER.parse(source, env)
    _check_measurements(tokens)
    _check_maths(tokens)
    figures, tokens = _promote_figures(tokens, figure_url, figure_svg)
    raw_html = _PARSER.renderer.render(tokens, _PARSER.options, env)
    safe_html = nh3.clean(
        raw_html,
        tags=HTML_TAGS | MATHML_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
        filter_style_properties={"text-align", "--figure-legible-width"},
    )
    return Rendered(html=safe_html, text=_plain_text(safe_html), toc=_table_of_contents(tokens), figures=figures)

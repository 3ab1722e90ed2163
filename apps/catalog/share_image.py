"""The picture that a link to the book or to one of its parts shows when shared (og:image).

A 1200x630 PNG (the size and format every link preview accepts; many ignore SVG, so the site's SVG
logo cannot be used as it is) drawn here with Pillow from public text only: the book's or part's
title, subtitle or description, and counts. The drawing on the right is the site's logo (static/img/
logo.svg: a chip with pins holding tiles), redrawn from the same geometry at 10x with a 3x3 grid of
tiles, in which a part's own tile is lit: the book shows the logo's own 2x2 pattern.

The font is the one Pillow ships (load_default with a size, FreeType in every Pillow wheel), so the
picture looks the same on every machine without system fonts.
"""

import io
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 1200, 630
# The site's dark theme (static/css/site.css): background, text, muted text, accent, highlight.
_BG, _SURFACE = (20, 22, 26), (36, 40, 48)
_TEXT, _MUTED = (233, 230, 223), (170, 165, 155)
_ACCENT, _AMBER = (98, 210, 162), (255, 180, 84)
_MARGIN = 72
_TEXT_RIGHT = 760  # the text column ends here; the drawing is to its right


@dataclass(frozen=True)
class ShareCard:
    eyebrow: str  # a short line above the title: the book's name for a part, the publisher for the book
    title: str
    text: str  # subtitle or description; wrapped and shortened to fit
    footer: str  # counts and author
    lit_tile: int | None = None  # 0-8: the part's tile in the drawing; None for the book


def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def _wrap(draw: ImageDraw.ImageDraw, text: str, font, width: int, max_lines: int) -> list[str]:
    """Greedy word wrap to `width` pixels; the last line ends in an ellipsis if text was left over."""
    lines, line = [], ""
    words = text.split()
    for word in words:
        candidate = f"{line} {word}".strip()
        if draw.textlength(candidate, font=font) <= width or not line:
            line = candidate
            continue
        lines.append(line)
        line = word
        if len(lines) == max_lines:
            last = lines[-1]
            while last and draw.textlength(last + " …", font=font) > width:
                last = last.rsplit(" ", 1)[0] if " " in last else last[:-1]
            lines[-1] = last + " …"
            return lines
    if line:
        lines.append(line)
    return lines[:max_lines] or [""]


def _draw_chip(draw: ImageDraw.ImageDraw, left: int, top: int, lit_tile: int | None) -> None:
    """logo.svg's chip (viewBox 32) at `scale` pixels per unit: pins, body, tiles."""
    scale = 11
    line = scale  # the logo's strokes are 2 units; 1 unit reads better at this size

    def xy(x, y):
        return left + x * scale, top + y * scale

    for at in (11, 16, 21):  # three pins on each of the four sides
        for start, end in (((at, 2.5), (at, 5.5)), ((at, 26.5), (at, 29.5))):
            draw.line([xy(*start), xy(*end)], fill=_ACCENT, width=line)  # top, bottom
            draw.line([xy(*start[::-1]), xy(*end[::-1])], fill=_ACCENT, width=line)  # left, right
    draw.rounded_rectangle([xy(6, 6), xy(26, 26)], radius=int(3.5 * scale), outline=_ACCENT, width=line)
    dim = tuple(round(c * 0.35 + b * 0.65) for c, b in zip(_ACCENT, _BG, strict=True))
    if lit_tile is None:  # the logo's own four tiles
        tiles = [((9.5, 9.5), _ACCENT), ((17, 9.5), dim), ((9.5, 17), dim), ((17, 17), _AMBER)]
        size = 5.5
    else:
        size, gap = 4.5, 1.25
        tiles = []
        for index in range(9):
            row, column = divmod(index, 3)
            x, y = 8 + column * (size + gap), 8 + row * (size + gap)
            tiles.append(((x, y), _AMBER if index == lit_tile else (_ACCENT if index < lit_tile else dim)))
    for (x, y), colour in tiles:
        draw.rounded_rectangle([xy(x, y), xy(x + size, y + size)], radius=scale, fill=colour)


def share_image_png(card: ShareCard) -> bytes:
    image = Image.new("RGB", (WIDTH, HEIGHT), _BG)
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, WIDTH, 10], fill=_ACCENT)
    draw.rectangle([0, HEIGHT - 84, WIDTH, HEIGHT], fill=_SURFACE)

    width = _TEXT_RIGHT - _MARGIN
    y = 84
    eyebrow_font = _font(30)
    draw.text((_MARGIN, y), _wrap(draw, card.eyebrow, eyebrow_font, width, 1)[0], font=eyebrow_font, fill=_ACCENT)
    y += 58
    # The title as large as fits in three lines.
    for size in (68, 60, 52, 46):
        title_font = _font(size)
        title_lines = _wrap(draw, card.title, title_font, width, 3)
        if " …" not in title_lines[-1]:
            break
    for title_line in title_lines:
        draw.text((_MARGIN, y), title_line, font=title_font, fill=_TEXT)
        y += int(title_font.size * 1.18)
    y += 18
    text_font = _font(30)
    room = max(1, (HEIGHT - 84 - 36 - y) // 40)
    for text_line in _wrap(draw, card.text, text_font, width, min(room, 4)) if card.text else []:
        draw.text((_MARGIN, y), text_line, font=text_font, fill=_MUTED)
        y += 40
    footer_font = _font(28)
    footer = _wrap(draw, card.footer, footer_font, WIDTH - 2 * _MARGIN, 1)[0]
    draw.text((_MARGIN, HEIGHT - 84 + 26), footer, font=footer_font, fill=_TEXT)

    _draw_chip(draw, left=_TEXT_RIGHT + 64, top=(HEIGHT - 84 - 32 * 11) // 2 + 4, lit_tile=card.lit_tile)

    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()

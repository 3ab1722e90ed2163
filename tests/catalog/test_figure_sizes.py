"""Issue 44: each figure's <img> carries the drawing's width and height (its box is kept before it loads, so a jump to
a footnote lands on a cold load) and the width at which its smallest text reads at 10 px; display maths sits in a box
of its own that scrolls sideways."""

import re

import pytest

from apps.catalog.markdown import FigureSize, render_markdown, svg_size
from apps.catalog.models import Capsule

DRAWING = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 860 430" role="img"><title>t</title>{}</svg>'


@pytest.mark.parametrize(
    "svg, size",
    [
        (DRAWING.format('<text font-size="8">a</text><text font-size="12">b</text>'), FigureSize(860, 430, 1075)),
        (DRAWING.format("<style>text { font-size: 12px } .s { font-size: 0.8em }</style>"), FigureSize(860, 430, 717)),
        (DRAWING.format('<text style="font-family: sans-serif; font-size:10px">a</text>'), FigureSize(860, 430, 860)),
        (DRAWING.format(""), FigureSize(860, 430, 0)),  # no sized text: no minimum
        (
            '<svg width="430px" height="215" viewBox="0 0 860 430"><text font-size="20">a</text></svg>',
            FigureSize(430, 215, 430),
        ),
        ('<svg width="100%" viewBox="0,0,600,300"></svg>', FigureSize(600, 300, 0)),  # relative: the viewBox
        ("<svg><text>a</text></svg>", None),
    ],
)
def test_a_figures_size_and_legible_width_come_from_its_svg(svg, size):
    assert svg_size(svg) == size


def test_a_figure_img_has_width_height_and_its_legible_width():
    drawings = {"a.svg": DRAWING.format('<text font-size="8">a</text>')}
    html = render_markdown(
        "![A drawing.](figures/a.svg)\n\n![Another.](figures/b.svg)\n",
        figure_url=lambda name: f"/fig/{name}",
        figure_svg=drawings.get,
    ).html
    assert (
        '<figure id="figure-1" style="--figure-legible-width:1075px">'
        '<img src="/fig/a.svg" alt="A drawing." width="860" height="430" loading="lazy">'
    ) in html
    assert '<figure id="figure-2"><img src="/fig/b.svg" alt="Another." loading="lazy">' in html  # unknown: unsized


def test_no_other_style_gets_through_a_figure():
    html = render_markdown("![A *drawing*.](figures/a.svg)\n", figure_url=lambda name: name).html
    assert "style=" not in html
    smuggled = render_markdown(
        "![x](figures/a.svg)\n", figure_url=lambda name: name, figure_svg=lambda name: DRAWING.format("")
    ).html
    assert "style" not in smuggled  # no text, no minimum: nothing to say


def test_display_maths_sits_in_a_box_of_its_own():
    html = render_markdown("Text.\n\n$$\nC = \\alpha A B + \\beta C\n$$\n", figure_url=lambda name: name).html
    assert re.search(r'<div class="math-block"><math alttext="C = [^"]*"[^>]* display="block"', html)


def test_imported_figures_are_sized_and_an_admin_edit_keeps_the_sizes(mini_book):
    from apps.catalog.services import capsule_save

    capsule = Capsule.objects.get(book=mini_book, number=1)
    figure = capsule.figures.order_by("number").first()
    size = svg_size(figure.svg)
    sized = f'width="{size.width}" height="{size.height}"'
    assert size and sized in capsule.body_html
    capsule.body += "\n\nOne more sentence.\n"
    capsule_save(capsule=capsule)  # an edit in admin renders with the stored figures
    assert sized in Capsule.objects.get(pk=capsule.pk).body_html


def test_render_capsules_sizes_what_an_older_pipeline_stored_and_keeps_the_revision(mini_book):
    from io import StringIO

    from django.core.management import call_command

    capsule = Capsule.objects.get(book=mini_book, number=1)
    sized = capsule.body_html
    old = re.sub(r' width="\d+" height="\d+"| style="[^"]*"', "", sized)
    Capsule.objects.filter(pk=capsule.pk).update(body_html=old)
    out = StringIO()
    call_command("render_capsules", stdout=out)
    assert out.getvalue().strip() == "1 capsule rendered again"
    fresh = Capsule.objects.get(pk=capsule.pk)
    assert fresh.body_html == sized and fresh.revision == capsule.revision
    call_command("render_capsules", stdout=out)
    assert out.getvalue().strip().endswith("0 capsules rendered again")

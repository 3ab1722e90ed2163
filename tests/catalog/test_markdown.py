import pytest

from apps.catalog.markdown import ContentError, render_markdown


def render(source):
    return render_markdown(source, figure_url=lambda name: f"/fig/{name}")


def test_maths_becomes_mathml_with_the_latex_as_alt_text():
    html = render("Intensity $\\frac{2K}{8}$ here.\n\n$$\nC = \\alpha A B\n$$\n").html
    assert '<math alttext="\\frac{2K}{8}"' in html and "<mfrac>" in html
    assert 'display="block"' in html and "<mi>α</mi>" in html


def test_code_is_highlighted_inside_a_language_block():
    html = render("```cuda\n__global__ void k(float* a) {}\n```\n").html
    assert '<pre><code class="language-cuda">' in html
    assert '<span class="kr">__global__</span>' in html


def test_headings_get_anchors_and_a_table_of_contents():
    rendered = render("## First part\n\ntext\n\n### A detail\n\n#### Not listed\n")
    assert '<h2 id="first-part">' in rendered.html
    assert rendered.toc == [
        {"level": 2, "id": "first-part", "title": "First part"},
        {"level": 3, "id": "a-detail", "title": "A detail"},
    ]


def test_lone_images_become_numbered_figures_with_captions():
    rendered = render("![First drawing.](figures/a.svg)\n\ntext\n\n![Second drawing.](figures/b.svg)\n")
    assert [(f.name, f.number, f.caption) for f in rendered.figures] == [
        ("a.svg", 1, "First drawing."),
        ("b.svg", 2, "Second drawing."),
    ]
    assert '<figure id="figure-2"><img src="/fig/b.svg" alt="Second drawing."' in rendered.html
    assert "Figure 2.</span> Second drawing.</figcaption>" in rendered.html


def test_footnotes_render_as_a_linked_list():
    html = render("A claim[^1].\n\n[^1]: The source.\n").html
    assert 'href="#fn1"' in html and '<li id="fn1"' in html


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        "text <img src=x onerror=alert(1)>",
        "[click](javascript:alert(1))",
        '<a href="https://x.org" onclick="steal()">x</a>',
    ],
)
def test_raw_html_and_script_urls_are_never_emitted(source):
    tags = _tags(render(source).html)
    assert [tag for tag, _ in tags] == ["p"] or [tag for tag, _ in tags] == ["p", "a"]
    for _, attributes in tags:
        assert not any(name.startswith("on") for name in attributes)
        assert not attributes.get("href", "").startswith("javascript")


def _tags(html):
    from html.parser import HTMLParser

    found = []

    class Collector(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))

    Collector().feed(html)
    return found


def test_images_other_than_book_figures_are_refused():
    with pytest.raises(ContentError, match="figures must be"):
        render("text\n\n![x](https://evil.example/track.png)\n")


def test_a_figure_needs_a_caption():
    with pytest.raises(ContentError, match="needs a caption"):
        render("![](figures/a.svg)\n")


def test_bad_latex_is_reported_with_its_line():
    with pytest.raises(ContentError) as error:
        render("ok\n\nstill ok\n\n$\\frac{1}{$ broken\n")
    assert error.value.line == 5


def test_plain_text_for_search_keeps_words_and_maths_as_text_but_no_tags():
    text = render("## Tiles\n\nShared *memory* with $a^2$ and $\\frac{a}{b_{i}} \\le \\alpha$.\n").text
    assert text == "Tiles Shared memory with a^2 and a/b_i ≤ α ."


def test_highlight_lines_keeps_the_compilers_line_numbers_and_balanced_escaped_lines():
    """Issue 17: a submission's source is highlighted as the book's code, one line at a time."""
    from apps.catalog.markdown import highlight_lines

    source = "\n\n/* a comment\n   over </span><script>x()</script> lines */\nfloat k;\r\nint j;\n"
    lines = highlight_lines(source, "cuda")
    assert len(lines) == 6  # the two blank lines first are kept: line 5 is still `float k;`
    assert lines[:2] == ["", ""]
    assert '<span class="kt">float</span>' in lines[4] and '<span class="kt">int</span>' in lines[5]
    assert "<script>" not in "".join(lines) and "&lt;/span&gt;&lt;script&gt;" in lines[3]
    for line in lines:  # each line opens and closes its own spans: safe to wrap one by one
        assert line.count("<span") == line.count("</span>")

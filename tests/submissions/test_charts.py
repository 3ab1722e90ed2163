"""The server-drawn SVG charts: well-formed XML, named for assistive technology, scaled by the data,
and escaping whatever text they are given."""

import xml.etree.ElementTree as ET

import pytest

from apps.submissions.charts import Bar, Point, bar_chart, line_chart, nice_ceiling

SVG = "{http://www.w3.org/2000/svg}"


def parse(chart: str, *, narrow: bool = False) -> ET.Element:
    """The wide drawing (or the narrow one) of a chart, which comes as both in a `.chart-pair`."""
    pair = ET.fromstring(str(chart))  # raises on anything that is not well-formed XML
    assert pair.tag == "div" and pair.get("class") == "chart-pair"
    wide, small = list(pair)
    assert wide.tag == small.tag == f"{SVG}svg"
    return small if narrow else wide


def bars_of(root) -> list[ET.Element]:
    return [r for r in root.iter(f"{SVG}rect") if "chart__bar" in r.get("class", "")]


def texts(root) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def test_a_bar_chart_is_an_image_named_by_its_title_and_desc():
    root = parse(
        bar_chart(
            [Bar("01 naive", 1.0), Bar("You (best)", 3.2, highlight=True)],
            chart_id="c1",
            title="Ladder",
            desc="On H200.",
        )
    )
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "c1-title c1-desc"
    assert root.find(f"{SVG}title").get("id") == "c1-title" and root.find(f"{SVG}title").text == "Ladder"
    desc = root.find(f"{SVG}desc")
    assert desc.get("id") == "c1-desc"
    assert desc.text == "On H200. 01 naive: 1.00%; You (best): 3.20%"  # the figures, for screen readers
    assert "01 naive" in texts(root) and "3.20%" in texts(root)  # every value is also written as text


def test_bar_lengths_follow_the_values_and_the_axis_follows_the_largest():
    root = parse(bar_chart([Bar("a", 10.0), Bar("b", 40.0), Bar("c", 20.0)], chart_id="c", title="t"))
    widths = [float(r.get("width")) for r in bars_of(root)]
    assert widths[1] == pytest.approx(4 * widths[0]) and widths[2] == pytest.approx(2 * widths[0])
    assert "50%" in texts(root)  # a round axis end above 40
    # Ten times the values: the same picture on an axis ten times longer.
    bigger = parse(bar_chart([Bar("a", 100.0), Bar("b", 400.0), Bar("c", 200.0)], chart_id="c", title="t"))
    assert [float(r.get("width")) for r in bars_of(bigger)] == pytest.approx(widths)
    assert "500%" in texts(bigger)


def test_more_rows_make_a_taller_chart_and_a_missing_value_draws_no_bar():
    short = parse(bar_chart([Bar("a", 1.0)], chart_id="c", title="t"))
    tall = parse(bar_chart([Bar("a", 1.0), Bar("b", None), Bar("c", 2.0), Bar("d", 3.0)], chart_id="c", title="t"))
    assert float(tall.get("height")) > float(short.get("height"))
    assert tall.get("viewBox").split()[3] == tall.get("height")
    assert len(bars_of(tall)) == 3 and "no result" in texts(tall)


def test_the_hundred_percent_line_only_when_in_range():
    def has_reference(svg):
        return any("chart__reference" in (e.get("class") or "") for e in parse(svg).iter())

    assert not has_reference(bar_chart([Bar("a", 9.4)], chart_id="c", title="t"))
    assert has_reference(bar_chart([Bar("a", 93.0)], chart_id="c", title="t"))


def test_labels_and_ids_are_escaped():
    evil = '</text><script>alert("x")</script>&'
    svg = bar_chart([Bar(evil, 5.0, note="<b>flagged</b>")], chart_id='x"><script>', title=evil, desc=evil)
    assert "<script>" not in svg
    root = parse(svg)
    assert root.find(f"{SVG}title").text == evil  # the reader sees the text, the browser runs nothing
    assert not list(root.iter(f"{SVG}script")) and not list(root.iter("script"))
    line = line_chart([Point(evil, 2.0), Point("b", None)], chart_id="h", title=evil)
    assert "<script>" not in line
    assert not list(parse(line).iter(f"{SVG}script"))


def test_the_history_puts_later_and_faster_submissions_right_and_higher():
    root = parse(
        line_chart([Point("1", 1.0), Point("2", None), Point("3", 4.0), Point("4", 2.0)], chart_id="h", title="History")
    )
    dots = [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{SVG}circle")]
    assert len(dots) == 3  # the failed one is a cross, not a dot
    assert dots[0][0] < dots[1][0] < dots[2][0]
    assert dots[1][1] < dots[2][1] < dots[0][1]  # SVG's y grows downwards: higher value, smaller y
    misses = [p for p in root.iter(f"{SVG}path") if "chart__miss" in p.get("class", "")]
    assert len(misses) == 1
    assert root.find(f"{SVG}polyline").get("points").count(",") == 3
    assert "best 4.00%" in texts(root)
    assert "2: did not pass" in root.find(f"{SVG}desc").text


def test_the_history_axis_scales_with_the_data():
    low = parse(line_chart([Point("a", 0.8), Point("b", 1.6)], chart_id="h", title="t"))
    high = parse(line_chart([Point("a", 40.0), Point("b", 80.0)], chart_id="h", title="t"))
    assert "2%" in texts(low) and "100%" in texts(high)
    # Same proportions, so the same drawing on a different axis.
    assert [c.get("cy") for c in low.iter(f"{SVG}circle")] == [c.get("cy") for c in high.iter(f"{SVG}circle")]


def test_empty_charts_still_parse_and_say_so():
    assert "No figures yet" in texts(parse(bar_chart([], chart_id="e", title="t")))
    assert "No finished submissions yet" in texts(parse(line_chart([], chart_id="e", title="t")))
    single = parse(line_chart([Point("only", 3.0)], chart_id="s", title="t"))
    assert len(list(single.iter(f"{SVG}circle"))) == 1


@pytest.mark.parametrize(
    ("value", "expected"), [(0.8, 1), (1.6, 2), (2.2, 2.5), (9.4, 10), (40, 50), (93, 100), (120, 200), (0, 1)]
)
def test_nice_ceiling(value, expected):
    assert nice_ceiling(value) == expected


def _view_width(root) -> float:
    return float(root.get("viewBox").split()[2])


@pytest.mark.parametrize("draw", ["bars", "line"])
def test_the_narrow_drawing_keeps_its_labels_legible_in_a_phones_card(draw):
    """Issue 29: scaled into a phone's card (about 300 px) the wide drawing's labels were about 5 px high. The narrow
    one, shown below 34rem (static/css/submissions.css), is drawn for such boxes: its text is 10 px or more from a
    265 px box on, while the wide one's reaches 10 px only at the 34rem (544 px) where it takes over."""
    chart = (
        bar_chart(
            [Bar("08 warptiling (the longest rung name)", 93.7), Bar("You (best)", 3.2, highlight=True)],
            chart_id="c",
            title="t",
        )
        if draw == "bars"
        else line_chart([Point("1", 1.0), Point("2", 4.0)], chart_id="c", title="t")
    )
    wide, narrow = parse(chart), parse(chart, narrow=True)
    assert "chart--wide" in wide.get("class") and "chart--narrow" in narrow.get("class")
    assert narrow.get("aria-labelledby") != wide.get("aria-labelledby")  # ids stay unique in the page
    font = float(narrow.get("font-size"))
    assert font * 265 / _view_width(narrow) >= 10
    assert font * 544 / _view_width(wide) >= 10
    # The same figures in both drawings; the narrow one has room for longer labels (44 characters, against 32).
    figures = [sorted(t for t in texts(root) if t.endswith("%")) for root in (wide, narrow)]
    assert figures[0] == figures[1] and figures[0]
    if draw == "bars":
        assert "08 warptiling (the longest rung name)" in texts(narrow)
    assert narrow.find(f"{SVG}desc").text == wide.find(f"{SVG}desc").text

"""Issue 43: the kernel's point on the roofline of the GPU that judged it, drawn from the result alone (flops,
bytes_moved, tflops, baseline_tflops and the worker's ceilings): the chart's geometry, its caption in words, no
chart for results without ceilings, and the report page that shows it to its owner."""

import math
import xml.etree.ElementTree as ET

import pytest

from apps.submissions import selectors, services
from apps.submissions.charts import Roofline, RooflineShape, roofline_caption, roofline_chart, roofline_geometry
from kernels.results import Ceilings
from tests.submissions.test_views import (  # noqa: F401  (fixtures)
    client_for,
    judge_result,
    judged,
    locked_exercise,
    make_submission,
    subscriber,
)
from tests.subscriptions.visitors import make_visitor

SVG = "{http://www.w3.org/2000/svg}"
H200 = Ceilings(copy_gbps=4000.0, fp32_tflops=60.0, method="test")  # ridge: 1000 x 60 / 4000 = 15 FLOP/byte


def judged_with_ceilings(user, exercise, pct: float = 1.25, ceilings: Ceilings | None = H200):
    """As test_views.judged, with the worker's ceilings in the result (the schema every new result has)."""
    submission = make_submission(user, exercise)
    services.submission_compile(submission_id=submission.pk)
    attempt = services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu0@test")
    result = judge_result(pct)
    result.ceilings = ceilings
    assert services.submission_gpu_record(submission_id=submission.pk, attempt=attempt, result=result)
    submission.refresh_from_db()
    return submission


def drawings(chart) -> list[ET.Element]:
    pair = ET.fromstring(str(chart))
    assert pair.get("class") == "chart-pair"
    return list(pair)


def roofline(*shapes: RooflineShape, roof: float | None = 60.0) -> Roofline:
    return Roofline(copy_gbps=4000.0, roof_tflops=roof, roof_label="FP32", shapes=shapes, baseline="cuBLAS")


GEMM = RooflineShape("M=4096 N=4096 K=4096", intensity=682.67, tflops=24.6, baseline_tflops=50.0, headline=True)
STREAM = RooflineShape("rows=8192 cols=8192", intensity=0.625, tflops=2.0, baseline_tflops=2.2, headline=True)


def test_the_ridge_is_the_compute_roof_over_the_copy_bandwidth():
    assert roofline(GEMM).ridge == pytest.approx(15.0)  # 60 TFLOP/s / 4000 GB/s, in FLOP/byte
    assert roofline(GEMM).attainable(1.0) == pytest.approx(4.0)  # left of the ridge: intensity x bandwidth
    assert roofline(GEMM).attainable(1000.0) == pytest.approx(60.0)  # right of it: the flat roof
    assert roofline(GEMM, roof=None).ridge is None


@pytest.mark.parametrize("narrow", [False, True])
def test_points_and_the_ridge_land_at_their_log_positions(narrow):
    shapes = (
        RooflineShape("small", intensity=170.67, tflops=3.0, baseline_tflops=20.0),
        GEMM,
    )
    chart = roofline(*shapes)
    g = roofline_geometry(chart, narrow=narrow)
    svg = drawings(roofline_chart(chart, chart_id="r", title="Roofline"))[1 if narrow else 0]
    # The axes are whole decades, linear in log10: one decade is the same distance anywhere.
    assert g.x(10.0**g.x_lo) == pytest.approx(g.left) and g.x(10.0**g.x_hi) == pytest.approx(g.left + g.plot_w)
    assert g.y(10.0**g.y_lo) == pytest.approx(g.top + g.plot_h) and g.y(10.0**g.y_hi) == pytest.approx(g.top)
    decade = g.plot_w / (g.x_hi - g.x_lo)
    assert g.x(100.0) - g.x(10.0) == pytest.approx(decade)
    # Each dot is at log10(intensity) across and log10(TFLOP/s) up; each square at the baseline's TFLOP/s.
    dots = [c for c in svg.iter(f"{SVG}circle") if c.get("class") == "chart__dot" and c.find(f"{SVG}title") is not None]
    assert len(dots) == 2
    for dot, shape in zip(dots, shapes, strict=True):
        assert float(dot.get("cx")) == pytest.approx(g.x(shape.intensity), abs=0.06)
        assert float(dot.get("cy")) == pytest.approx(g.y(shape.tflops), abs=0.06)
        frac = (math.log10(shape.intensity) - g.x_lo) / (g.x_hi - g.x_lo)
        assert float(dot.get("cx")) == pytest.approx(g.left + frac * g.plot_w, abs=0.06)
    squares = [r for r in svg.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    for square, shape in zip(squares, shapes, strict=True):
        centre = float(square.get("y")) + float(square.get("height")) / 2
        assert centre == pytest.approx(g.y(shape.baseline_tflops), abs=0.1)
    # The ridge: marked where the roofs meet, at 60 / 4000 x 1000 = 15 FLOP/byte and 60 TFLOP/s.
    ridge, legend = [c for c in svg.iter(f"{SVG}circle") if c.get("class") == "chart__ridge"]
    assert float(legend.get("cy")) > g.top + g.plot_h  # the second is the legend's, below the plot
    assert float(ridge.get("cx")) == pytest.approx(g.x(15.0), abs=0.06)
    assert float(ridge.get("cy")) == pytest.approx(g.y(60.0), abs=0.06)
    roofs = [line for line in svg.iter(f"{SVG}line") if line.get("class") == "chart__roof"]
    memory, compute = roofs
    assert float(memory.get("x2")) == pytest.approx(g.x(15.0), abs=0.06)  # the memory roof ends at the ridge
    assert float(compute.get("x1")) == pytest.approx(g.x(15.0), abs=0.06)  # and the flat roof starts there
    assert float(compute.get("y1")) == pytest.approx(g.y(60.0), abs=0.06)
    # The memory roof's slope is one decade of TFLOP/s per decade of intensity (x 4000 GB/s).
    x1, y1, x2, y2 = (float(memory.get(a)) for a in ("x1", "y1", "x2", "y2"))
    up_per_decade = g.plot_h / (g.y_hi - g.y_lo)
    assert (y1 - y2) / up_per_decade == pytest.approx((x2 - x1) / decade, rel=1e-3)


def test_the_chart_is_named_described_labelled_and_escaped():
    chart = Roofline(copy_gbps=4000.0, roof_tflops=60.0, roof_label="FP32", shapes=(GEMM,), baseline="<b>lib</b>")
    for svg in drawings(roofline_chart(chart, chart_id="r1", title="On the <H200>", desc="Both axes log.")):
        cid = svg.find(f"{SVG}title").get("id").removesuffix("-title")
        assert svg.get("role") == "img" and svg.get("aria-labelledby") == f"{cid}-title {cid}-desc"
        assert svg.find(f"{SVG}title").text == "On the <H200>"
        desc = svg.find(f"{SVG}desc").text
        assert "ridge at 15.0 FLOP/byte" in desc and "4,000 GB/s" in desc and "683 FLOP/byte" in desc
        texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
        assert "you 24.6" in texts and "<b>lib</b> 50.0" in texts  # the headline's two points, labelled
        assert "FP32 60.0 TFLOP/s" in texts and "copy 4,000 GB/s" in texts and "ridge at 15.0 FLOP/byte" in texts
        assert not any(el.get("style") for el in svg.iter())  # colours come from CSS classes (the CSP)
        assert all(el.get("font-size") is None for el in svg.iter(f"{SVG}text"))  # every label at the chart's 13


def test_the_caption_says_compute_bound_right_of_the_ridge():
    caption = roofline_caption(roofline(GEMM))
    assert caption.startswith("At 683 FLOP/byte (M=4096 N=4096 K=4096) this kernel is compute-bound")
    assert "it reaches 41% of the FP32 roof (60.0 TFLOP/s)" in caption  # 24.6 / 60
    assert "cuBLAS reaches 83% of the same roof." in caption
    tiny = RooflineShape("M=4096 N=4096 K=4096", intensity=512.0, tflops=0.0004, baseline_tflops=50.0, headline=True)
    assert "it reaches under 0.01% of the FP32 roof" in roofline_caption(roofline(tiny))


def test_the_caption_says_memory_bound_left_of_the_ridge():
    caption = roofline_caption(roofline(STREAM))
    assert caption.startswith("At 0.625 FLOP/byte (rows=8192 cols=8192) this kernel is memory-bound")
    assert "left of the ridge at 15.0 FLOP/byte" in caption
    assert "it reaches 80% of the memory roof (4,000 GB/s of measured copy bandwidth: 2.50 TFLOP/s" in caption
    # Without a compute ceiling there is no ridge: every intensity is under the memory roof alone.
    assert "memory-bound; it reaches" in roofline_caption(roofline(GEMM, roof=None))


def test_a_result_without_ceilings_has_no_roofline(locked_exercise, subscriber):
    older = judged(subscriber, locked_exercise, pct=1.25)  # the schema before ceilings were recorded
    assert older.result.get("ceilings") is None
    assert selectors.roofline_of(older) is None
    body = client_for(subscriber).get(f"/submissions/{older.public_id}/").content.decode()
    assert "Timing" in body and "On the roofline" not in body and "chart--roofline" not in body


def test_a_failed_submission_has_no_roofline(locked_exercise, subscriber):
    failed = judged(subscriber, locked_exercise, passed=False)
    failed.result["ceilings"] = H200.to_dict()
    assert selectors.roofline_of(failed) is None


def test_the_roofline_comes_from_the_result_and_the_problems_compute_unit(locked_exercise, subscriber):
    submission = judged_with_ceilings(subscriber, locked_exercise, pct=1.25)
    chart = selectors.roofline_of(submission)
    assert chart.copy_gbps == 4000.0 and chart.roof_tflops == 60.0 and chart.roof_label == "FP32"  # sgemm: fp32
    (shape,) = chart.shapes
    assert shape.intensity == pytest.approx(2 * 4096**3 / (4 * 4096 * 4096 * 4))  # flops / bytes_moved
    assert shape.tflops == pytest.approx(0.625) and shape.baseline_tflops == 50.0 and shape.headline


def test_the_report_shows_the_roofline_to_its_owner_and_staff_only(locked_exercise, subscriber):
    submission = judged_with_ceilings(subscriber, locked_exercise, pct=1.25)
    url = f"/submissions/{submission.public_id}/"
    body = client_for(subscriber).get(url).content.decode()
    assert "On the roofline" in body and 'class="chart chart--roofline chart--wide"' in body
    assert "this kernel is compute-bound" in body and "it reaches 1.0% of the FP32 roof" in body
    assert "NVIDIA H200 that judged it" in body
    assert "ridge at 15.0 FLOP/byte" in body
    assert client_for(make_visitor("staff")).get(url).status_code == 200
    assert client_for(make_visitor("active")).get(url).status_code == 404  # as the rest of the report
    # The polled fragment carries it too, once finished.
    polled = client_for(subscriber).get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "chart--roofline" in polled

"""Problems measured in GB/s beside GEMM's TFLOP/s (issue 14): the headline figures a result keeps, and the
pages that show them: the exercise panel, the report, the leaderboard and the ladders of "my progress".

A memory-bound problem (softmax here, compared with PyTorch) reports GB/s and is graded first by % of roofline
(bytes moved over the measured copy bandwidth); GEMM keeps TFLOP/s and % of cuBLAS. Results are built from the
judge's own dataclasses (kernels.results) and recorded through the real services, as a GPU worker records them.
"""

import importlib
import json
import re
from pathlib import Path

import pytest
from django.apps import apps as django_apps
from django.test import Client
from django.utils import timezone

from apps.catalog.models import Capsule
from apps.submissions import services
from apps.submissions.models import Exercise, ReferenceResult, Submission
from kernels.results import BenchResult, JudgeResult, Telemetry, TimingStats, Verdict
from tests.subscriptions.visitors import make_visitor

KERNELS = Path(__file__).resolve().parents[2] / "kernels"
SOFTMAX_SOURCE = (KERNELS / "problems" / "softmax" / "example.cu").read_text()
SGEMM_SOURCE = (KERNELS / "reference" / "01_naive.cu").read_text()
SOFTMAX_BASELINE = "PyTorch torch.softmax (dim = 1)"
COPY_GBPS = 4000.0  # the measured copy bandwidth: the roofline of a memory-bound problem
FIXTURE = Path(__file__).resolve().parents[2] / "apps" / "submissions" / "fixtures" / "reference_ladder_h200.json"


def _timing(median_ms: float) -> TimingStats:
    return TimingStats(
        samples=12,
        median_ms=median_ms,
        q25_ms=median_ms * 0.99,
        q75_ms=median_ms * 1.01,
        min_ms=median_ms * 0.98,
        mean_ms=median_ms,
        rel_std_err=0.002,
    )


def memory_bench(sizes: dict, *, roofline: float, baseline: float, bytes_moved: int, flops: int) -> BenchResult:
    """A GB/s benchmark as the judge reports it: `roofline` and `baseline` are the candidate's percentages."""
    gbps = COPY_GBPS * roofline / 100
    median_ms = bytes_moved / (gbps * 1e9) * 1e3
    baseline_ms = median_ms * baseline / 100
    return BenchResult(
        sizes=sizes,
        candidate=_timing(median_ms),
        baseline=_timing(baseline_ms),
        baseline_name=SOFTMAX_BASELINE,
        pct_of_baseline=baseline,
        tflops=flops / (median_ms * 1e-3) / 1e12,
        gbps=gbps,
        baseline_tflops=flops / (baseline_ms * 1e-3) / 1e12,
        roofline_tflops=bytes_moved and flops / bytes_moved * COPY_GBPS / 1e3,
        pct_of_roofline=roofline,
        rounds_checked=11,
        max_rel_err=1e-7,
        flops=flops,
        bytes_moved=bytes_moved,
        unit="GB/s",
        baseline_gbps=bytes_moved / (baseline_ms * 1e-3) / 1e9,
        roofline_gbps=COPY_GBPS,
    )


def softmax_result(roofline: float, baseline: float) -> JudgeResult:
    """Two benchmark shapes: 4096 x 4096 moves the most bytes (the headline); the other is given more FLOPs
    (made up) and other figures, so that a headline picked by FLOPs would show."""
    return JudgeResult(
        verdict=Verdict.ACCEPTED,
        message="Correct at every shape; timed.",
        problem="softmax",
        benchmarks=[
            memory_bench(
                {"rows": 32, "cols": 131072}, roofline=11.0, baseline=12.0, bytes_moved=8 * 32 * 131072, flops=10**12
            ),
            memory_bench(
                {"rows": 4096, "cols": 4096},
                roofline=roofline,
                baseline=baseline,
                bytes_moved=8 * 4096 * 4096,
                flops=5 * 4096 * 4096,
            ),
        ],
        telemetry=Telemetry(gpu_name="NVIDIA H200"),
    )


def sgemm_result(pct_baseline: float, pct_roofline: float) -> JudgeResult:
    tflops = 50.0 * pct_baseline / 100
    flops = 2 * 4096**3
    median_ms = flops / (tflops * 1e12) * 1e3
    return JudgeResult(
        verdict=Verdict.ACCEPTED,
        message="Correct at every shape; timed.",
        problem="sgemm",
        benchmarks=[
            BenchResult(
                sizes={"M": 4096, "N": 4096, "K": 4096},
                candidate=_timing(median_ms),
                baseline=_timing(median_ms * pct_baseline / 100),
                baseline_name="cuBLAS SGEMM",
                pct_of_baseline=pct_baseline,
                tflops=tflops,
                gbps=4 * 4 * 4096 * 4096 / (median_ms * 1e-3) / 1e9,
                baseline_tflops=50.0,
                roofline_tflops=60.0,
                pct_of_roofline=pct_roofline,
                rounds_checked=11,
                max_rel_err=1e-7,
                flops=flops,
                bytes_moved=4 * 4 * 4096 * 4096,
            )
        ],
        telemetry=Telemetry(gpu_name="NVIDIA H200"),
    )


def recorded(user, exercise, result: JudgeResult, source: str) -> Submission:
    """Compiled by NVRTC (the real compile stage), then the GPU stage's services record `result`."""
    submission = services.submission_create(user=user, exercise=exercise, source=source)
    services.submission_compile(submission_id=submission.pk)
    attempt = services.submission_gpu_start(submission_id=submission.pk, worker_name="gpu0@test")
    assert attempt is not None
    assert services.submission_gpu_record(submission_id=submission.pk, attempt=attempt, result=result)
    submission.refresh_from_db()
    return submission


def softmax_judged(user, exercise, roofline: float, baseline: float) -> Submission:
    return recorded(user, exercise, softmax_result(roofline, baseline), SOFTMAX_SOURCE)


def sgemm_judged(user, exercise, pct_baseline: float, pct_roofline: float) -> Submission:
    return recorded(user, exercise, sgemm_result(pct_baseline, pct_roofline), SGEMM_SOURCE)


def add_capsule(mini_book, number: int, slug: str, title: str) -> Capsule:
    template = mini_book.capsules.get(slug="locked-three")
    return Capsule.objects.create(
        book=mini_book, part=template.part, number=number, slug=slug, title=title, summary="s", access="locked"
    )


def add_exercise(capsule, problem: str, **fields) -> Exercise:
    return Exercise.objects.create(
        capsule=capsule,
        problem=problem,
        title=fields.pop("title", f"Write {problem}"),
        statement="s",
        starter_source=SOFTMAX_SOURCE if problem == "softmax" else SGEMM_SOURCE,
        **fields,
    )


def rung(problem: str, step: str, result: JudgeResult, title: str = "") -> ReferenceResult:
    return services.reference_result_store(
        problem=problem, gpu_kind="h200", step=step, title=title or step, result=result.to_dict()
    )


@pytest.fixture
def subscriber(db):
    return make_visitor("active", name="Sub Scriber")


@pytest.fixture
def sgemm_exercise(mini_book):
    return add_exercise(mini_book.capsules.get(slug="locked-two"), "sgemm", title="Naive SGEMM")


@pytest.fixture
def softmax_exercise(mini_book):
    return add_exercise(
        mini_book.capsules.get(slug="locked-three"),
        "softmax",
        title="Online softmax",
        reference_step="softmax/02_online_cached.cu",
    )


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- What a result keeps --------------------------------------------------------------------------


def test_a_gbps_result_keeps_the_figures_of_its_largest_shape_by_bytes(softmax_exercise, subscriber):
    submission = softmax_judged(subscriber, softmax_exercise, roofline=81.5, baseline=104.0)
    assert submission.status == "passed" and submission.unit == "GB/s"
    assert submission.pct_of_roofline == 81.5 and submission.pct_of_baseline == 104.0  # not the 11% / 12% shape
    assert submission.gbps == pytest.approx(COPY_GBPS * 0.815)
    assert submission.throughput == submission.gbps and submission.grade == 81.5
    assert submission.time_ms == pytest.approx(8 * 4096 * 4096 / (submission.gbps * 1e9) * 1e3)


def test_a_tflops_result_keeps_its_roofline_and_gbps_too(sgemm_exercise, subscriber):
    submission = sgemm_judged(subscriber, sgemm_exercise, pct_baseline=40.0, pct_roofline=33.3)
    assert submission.unit == "TFLOP/s" and submission.tflops == 20.0 and submission.gbps > 0
    assert submission.pct_of_baseline == 40.0 and submission.pct_of_roofline == 33.3
    assert submission.throughput == 20.0 and submission.grade == 40.0


def test_results_stored_before_gbps_existed_read_as_tflops(db):
    """The judge's JSON before GB/s problems: no `unit`, `gbps`, `baseline_gbps` or `roofline_gbps` keys."""
    old = sgemm_result(60.0, 50.0).to_dict()
    for bench in old["benchmarks"]:
        for key in ("unit", "gbps", "baseline_gbps", "roofline_gbps"):
            del bench[key]
    stored = services.reference_result_store(
        problem="sgemm", gpu_kind="h200", step="01_old.cu", title="Old", result=old
    )
    assert (stored.unit, stored.gbps, stored.tflops, stored.pct_of_baseline) == ("TFLOP/s", None, 30.0, 60.0)
    assert stored.pct_of_roofline == 50.0 and stored.throughput == 30.0


def test_the_demo_ladder_loads_with_roofline_and_gbps_from_its_results(db):
    assert services.reference_results_load(path=FIXTURE) == 45
    rows = json.loads(FIXTURE.read_text())["results"]
    for row in rows:
        benchmarks = row["result"]["benchmarks"]
        # The headline: the largest shape, by bytes for GB/s problems (softmax has two), by FLOPs for the rest.
        by_bytes = benchmarks[0].get("unit") == "GB/s"  # results judged before GB/s existed have no unit
        bench = max(benchmarks, key=lambda b: b["bytes_moved"] if by_bytes else b["flops"])
        stored = ReferenceResult.objects.get(problem=row["problem"], step=row["step"])
        assert stored.unit == (
            "GB/s" if row["problem"] not in ("sgemm", "hgemm", "bf16_gemm", "attention") else "TFLOP/s"
        )
        assert stored.gbps == bench["gbps"] and stored.pct_of_roofline == bench["pct_of_roofline"]
        assert stored.tflops == bench["tflops"] and stored.pct_of_baseline == bench["pct_of_baseline"]


def test_the_migration_fills_rows_judged_before_it(softmax_exercise, sgemm_exercise, subscriber):
    migration = importlib.import_module("apps.submissions.migrations.0004_headline_roofline_gbps_unit")
    softmax = softmax_judged(subscriber, softmax_exercise, roofline=70.0, baseline=90.0)
    sgemm = sgemm_judged(subscriber, sgemm_exercise, pct_baseline=40.0, pct_roofline=33.0)
    Submission.objects.update(pct_of_roofline=None, gbps=None, unit="TFLOP/s")  # as the migration finds them
    migration.fill_from_results(django_apps, None)
    softmax.refresh_from_db()
    sgemm.refresh_from_db()
    assert (softmax.unit, softmax.pct_of_roofline, softmax.gbps) == ("GB/s", 70.0, COPY_GBPS * 0.7)
    assert (sgemm.unit, sgemm.pct_of_roofline) == ("TFLOP/s", 33.0) and sgemm.gbps > 0


# --- The exercise panel, the report ---------------------------------------------------------------


def test_the_exercise_panel_of_a_gbps_problem_speaks_gbps_roofline_and_its_baseline(softmax_exercise, subscriber):
    softmax_judged(subscriber, softmax_exercise, roofline=40.0, baseline=50.0)
    latest = softmax_judged(subscriber, softmax_exercise, roofline=81.5, baseline=104.0)
    rung("softmax", "02_online_cached.cu", softmax_result(88.0, 110.0), title="Online, cached row")
    body = client_for(subscriber).get("/capsules/locked-three/progress/").content.decode()
    figures = re.search(r'<ul class="stats stats--cards submission-figures".*?</ul>', body, re.S).group(0)
    assert re.search(r"81\.5%</strong> of roofline</li>\s*<li><strong>104%</strong> of PyTorch", figures)
    assert f"<strong>{latest.gbps:,.0f}</strong> GB/s" in figures and "TFLOP/s" not in figures
    assert '% of roofline</th><th scope="col" class="num">% of PyTorch</th>' in body  # the submissions table
    assert "Your submissions to Online softmax: % of roofline" in body  # the history chart is in % of roofline
    assert "Percent of the roofline" in body and "Online, cached row: 88.0%" in body  # the ladder chart
    assert "timed against PyTorch" in body
    assert "cuBLAS" not in body


def test_the_report_of_a_gbps_submission_shows_gbps_per_shape_and_the_baseline_by_name(softmax_exercise, subscriber):
    submission = softmax_judged(subscriber, softmax_exercise, roofline=81.5, baseline=104.0)
    body = client_for(subscriber).get(f"/submissions/{submission.public_id}/").content.decode()
    assert '<th scope="col" class="num">% of PyTorch</th><th scope="col" class="num">GB/s</th>' in body
    assert (
        f'<td class="num">{COPY_GBPS * 0.815:,.0f}</td>' in body
        and f'<td class="num">{COPY_GBPS * 0.11:,.0f}</td>' in body
    )
    assert "rows=4096 cols=4096" in body  # the problem's order of sizes, not the database's
    assert f"{SOFTMAX_BASELINE} timed in the same rounds" in body
    assert f"roofline {COPY_GBPS:,.0f} GB/s" in body
    assert "cuBLAS" not in body and "TFLOP/s" not in body


def test_the_report_of_a_gemm_submission_still_speaks_cublas_and_tflops(sgemm_exercise, subscriber):
    submission = sgemm_judged(subscriber, sgemm_exercise, pct_baseline=40.0, pct_roofline=33.3)
    body = client_for(subscriber).get(f"/submissions/{submission.public_id}/").content.decode()
    assert re.search(r"40\.0%</strong> of cuBLAS</li>\s*<li><strong>33\.3%</strong> of roofline", body)
    assert "<strong>20.0</strong> TFLOP/s" in body and "roofline 60.0 TFLOP/s" in body
    assert '<th scope="col" class="num">% of cuBLAS</th><th scope="col" class="num">TFLOP/s</th>' in body


# --- Leaderboards ---------------------------------------------------------------------------------


def test_a_gbps_leaderboard_ranks_by_roofline_and_says_so(softmax_exercise, subscriber):
    # Ranked by % of baseline these would come out the other way round.
    softmax_judged(make_visitor("active", name="Ada"), softmax_exercise, roofline=60.0, baseline=120.0)
    softmax_judged(make_visitor("active", name="Bo"), softmax_exercise, roofline=85.0, baseline=95.0)
    reader = make_visitor("active", name="Cy")
    softmax_judged(reader, softmax_exercise, roofline=70.0, baseline=99.0)
    softmax_judged(reader, softmax_exercise, roofline=65.0, baseline=130.0)  # not Cy's best by roofline
    body = client_for(subscriber).get("/capsules/locked-three/leaderboard/").content.decode()
    ranks = re.findall(r'<td class="num">(\d+)</td>\s*<td>([^<]*)', body)
    assert [name.strip() for _, name in ranks] == ["Bo", "Cy", "Ada"]
    assert "ranked by <strong>% of roofline</strong>" in body and "with % of PyTorch beside it" in body
    assert re.search(r'aria-sort="descending">% of roofline</th>', body)
    assert '<td class="num"><strong>70.0%</strong></td>\n        <td class="num">99.0%</td>' in body
    assert "130%" not in body and "cuBLAS" not in body
    assert f'<td class="num">{COPY_GBPS * 0.85:,.0f}</td>' in body


def test_a_gemm_leaderboard_ranks_by_cublas_and_says_so(sgemm_exercise, subscriber):
    sgemm_judged(make_visitor("active", name="Ada"), sgemm_exercise, pct_baseline=50.0, pct_roofline=90.0)
    sgemm_judged(make_visitor("active", name="Bo"), sgemm_exercise, pct_baseline=80.0, pct_roofline=10.0)
    body = client_for(subscriber).get("/capsules/locked-two/leaderboard/").content.decode()
    ranks = re.findall(r'<td class="num">(\d+)</td>\s*<td>([^<]*)', body)
    assert [name.strip() for _, name in ranks] == ["Bo", "Ada"]
    assert "ranked by <strong>% of cuBLAS</strong>" in body and "with % of roofline beside it" in body
    assert re.search(r'aria-sort="descending">% of cuBLAS</th>', body)
    assert '<td class="num">40.0</td>' in body  # Bo's TFLOP/s


# --- "My progress": one ladder per problem family ---------------------------------------------------


def test_my_progress_has_a_ladder_per_family_in_book_order_with_units_and_roofline(
    mini_book, sgemm_exercise, softmax_exercise, subscriber
):
    hgemm = add_exercise(add_capsule(mini_book, 4, "wmma", "WMMA"), "hgemm", title="WMMA")
    add_exercise(add_capsule(mini_book, 5, "scan", "Scans"), "prefix_sum", title="Scan")
    softmax_judged(subscriber, softmax_exercise, roofline=81.5, baseline=104.0)
    softmax_judged(subscriber, softmax_exercise, roofline=60.0, baseline=120.0)  # better % of PyTorch, not the best
    rung("softmax", "02_online_cached.cu", softmax_result(88.0, 110.0))
    rung("softmax", "01_naive.cu", softmax_result(30.0, 40.0))
    body = client_for(subscriber).get("/progress/").content.decode()

    # GEMM (sgemm on capsule 2, hgemm on capsule 4) is one ladder, where the book first reaches it; then softmax
    # (capsule 3), then prefix_sum (capsule 5).
    headings = re.findall(r'<h2 id="([\w-]+)-ladder-heading" class="card__title">([^<]*)</h2>', body)
    assert headings == [
        ("gemm", "Your GEMM ladder on H200"),
        ("softmax", "Your softmax ladder on H200"),
        ("prefix_sum", "Your prefix_sum ladder on H200"),
    ]
    gemm = re.search(r'class="card problem-ladder gemm-ladder.*?</section>', body, re.S).group(0)
    assert "Locked two" in gemm and "WMMA" in gemm and hgemm.problem in gemm
    assert "% of cuBLAS</th>" in gemm and "TFLOP/s</th>" in gemm and "GB/s" not in gemm

    softmax = re.search(r'class="card problem-ladder softmax-ladder.*?</section>', body, re.S).group(0)
    assert '<th scope="col" class="num">GB/s</th><th scope="col" class="num">% of PyTorch</th>' in softmax
    row = r"<tr>\s*<td[^>]*><a href=\"/capsules/locked-three/progress/#exercise\">.*?</tr>"
    best_row = re.search(row, softmax, re.S)
    cells = re.findall(r'<td class="num"[^>]*>(.*?)</td>', best_row.group(0))
    # Your best (by roofline: the 81.5% one), then the book's kernel for the step (02, not 01), then the count.
    assert cells == [
        f"{COPY_GBPS * 0.815:,.0f}",
        "104%",
        "<strong>81.5%</strong>",
        f"{COPY_GBPS * 0.88:,.0f}",
        "110%",
        "88.0%",
        "2",
    ]
    assert "Your best % of roofline per softmax capsule on H200" in softmax  # the chart: % of roofline, book's tick
    assert 'class="chart__marker"' in softmax and "kernel 88.0%" in softmax
    assert "ranked by % of roofline" in softmax
    assert "TFLOP/s" not in softmax and "cuBLAS" not in softmax

    scans = re.search(r'class="card problem-ladder prefix_sum-ladder.*?</section>', body, re.S).group(0)
    assert "% of PyTorch</th>" in scans and "<svg" not in scans  # nothing submitted yet: no chart


def test_my_progress_takes_the_same_queries_however_many_exercises(
    mini_book, sgemm_exercise, softmax_exercise, subscriber, django_assert_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(subscriber)
    softmax_judged(subscriber, softmax_exercise, roofline=50.0, baseline=60.0)
    client.get("/progress/")  # warm: session, user
    with CaptureQueriesContext(connection) as few:
        client.get("/progress/")
    for number, problem in ((4, "hgemm"), (5, "prefix_sum"), (6, "softmax"), (7, "transpose"), (8, "gemv")):
        capsule = add_capsule(mini_book, number, f"extra-{number}", f"Extra {number}")
        add_exercise(capsule, problem, reference_step="02_step.cu")
        ReferenceResult.objects.create(
            problem=problem,
            gpu_kind="h200",
            step="02_step.cu",
            title="t",
            verdict="accepted",
            measured_at=timezone.now(),
        )
    sgemm_judged(subscriber, sgemm_exercise, pct_baseline=40.0, pct_roofline=30.0)
    softmax_judged(subscriber, softmax_exercise, roofline=70.0, baseline=80.0)
    with django_assert_num_queries(len(few)):
        body = client.get("/progress/").content.decode()
    assert body.count('class="card problem-ladder') == 5  # gemm, softmax (twice), prefix_sum, transpose, gemv


def test_the_hopper_bf16_gemm_climbs_the_gemm_ladder_and_softmax_its_own():
    from apps.submissions.selectors import problem_family

    assert [problem_family(p) for p in ("sgemm", "hgemm", "bf16_gemm", "softmax")] == [
        "gemm",
        "gemm",
        "gemm",
        "softmax",
    ]

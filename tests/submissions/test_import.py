"""Exercises imported with the book: the `exercise:` block of a capsule's front matter (content/README.md)."""

import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from apps.catalog.content_files import ImportFileError
from apps.catalog.services import book_import
from apps.submissions.models import Exercise, ReferenceResult
from tests.conftest import MINI_BOOK

KERNELS = Path(__file__).resolve().parents[2] / "kernels"

EXERCISE = """exercise:
  problem: sgemm
  title: "Coalesce it"
  starter: reference/01_naive.cu
  gpu_time_limit_s: 90
  statement: |
    Change the **mapping**.
"""


@pytest.fixture
def book(tmp_path):
    folder = tmp_path / "mini"
    shutil.copytree(MINI_BOOK, folder)
    return folder


def with_exercise(folder: Path, number: int, block: str) -> Path:
    path = next((folder / "capsules").glob(f"{number:02d}-*.md"))
    text = path.read_text()
    end = text.index("\n---\n", 4)
    path.write_text(text[: end + 1] + block + text[end + 1 :])
    return path


@pytest.mark.slow
def test_the_demo_attaches_the_exercises_of_the_issue_and_the_ladder_measured_on_an_h200(db):
    call_command("load_demo")
    exercises = {e.capsule.number: e for e in Exercise.objects.select_related("capsule")}
    assert exercises[29].problem == "vector_add" and exercises[29].capsule.title == "Your first kernel, end to end"
    assert {n for n, e in exercises.items() if e.problem == "sgemm"} == set(range(32, 41))
    assert {n for n, e in exercises.items() if e.problem == "hgemm"} == {44, 45, 46}
    # Kernel 1 starts from the naive rung itself, Kernel k from rung k-1; double buffering from the warptiled one.
    reference = sorted((KERNELS / "reference").glob("0*.cu"))
    assert exercises[32].starter_source == reference[0].read_text()
    for k in range(2, 9):
        assert exercises[31 + k].starter_name == reference[k - 2].name
        assert exercises[31 + k].starter_source == reference[k - 2].read_text()
    assert exercises[40].starter_name == "08_warptiling.cu"
    # The book's own kernel for each step: rung k on Kernel k, 09 on double buffering, 10-12 on tensor cores.
    assert [exercises[n].reference_step[:2] for n in (32, 39, 40, 44, 45, 46)] == ["01", "08", "09", "10", "11", "12"]
    assert exercises[29].reference_step == ""
    assert exercises[29].starter_source == (KERNELS / "problems" / "vector_add" / "example.cu").read_text()
    assert exercises[46].arch == "sm_90a" and exercises[32].arch == "sm_90"
    assert all(e.statement_html.startswith("<p>") and e.is_open and e.gpu_time_limit_s > 0 for e in exercises.values())
    assert exercises[32].capsule.title == "Kernel 1: Naive"
    ladder = {(r.problem, r.step): r for r in ReferenceResult.objects.filter(gpu_kind="h200")}
    assert len(ladder) == 45 and all(r.verdict == "accepted" and r.gpu_name == "NVIDIA H200" for r in ladder.values())
    sgemm = lambda step: ladder["sgemm", step]  # noqa: E731
    assert 0.5 < sgemm("01_naive.cu").pct_of_baseline < 2 < 80 < sgemm("08_warptiling.cu").pct_of_baseline < 100
    assert ladder["hgemm", "12_hgemm_wgmma.cu"].tflops > 100
    # Issue 14's rungs, measured in GB/s: the best of each problem beside its naive starter.
    assert ladder["softmax", "04_register_rows.cu"].gbps > 3000 > 2000 > ladder["rmsnorm", "01_naive.cu"].gbps
    assert {problem for problem, _ in ladder} >= {"transpose", "reduce_sum", "prefix_sum", "gemv", "fp8_quant"}
    # Issue 15's: the Hopper BF16 GEMM, TMA and wgmma far above the naive rung.
    assert ladder["bf16_gemm", "04_cluster_persistent.cu"].tflops > 500 > 10 > ladder["bf16_gemm", "01_naive.cu"].tflops
    # Issue 16's: attention on Hopper far above the naive three kernels; paged decode near the copy bandwidth.
    assert ladder["attention", "04_wgmma_tma.cu"].tflops > 500 > 100 > ladder["attention", "01_naive.cu"].tflops
    paged = lambda step: ladder["paged_decode", step].pct_of_roofline  # noqa: E731
    assert paged("03_page_ring.cu") > 90 > paged("02_split_kv.cu") > 70 > 10 > paged("01_naive.cu")
    call_command("load_demo")  # again: nothing doubles
    assert ReferenceResult.objects.count() == 45 and Exercise.objects.count() == 34
    # Issue 14: an exercise on each capsule of its table, from the naive rung, with the book's best rung beside
    # (and issue 16's paged decode on 55).
    ladders = ("vector_add", "sgemm", "hgemm", "bf16_gemm", "attention")
    beyond_gemm = {n: e.problem for n, e in exercises.items() if e.problem not in ladders}
    assert beyond_gemm == {
        19: "transpose", 26: "transpose", 27: "reduce_sum", 30: "prefix_sum", 31: "prefix_sum", 47: "gemv",
        48: "swiglu", 49: "softmax", 50: "rmsnorm", 55: "paged_decode", 56: "fp8_quant", 57: "swiglu", 58: "gemv",
    }  # fmt: skip
    assert all(exercises[n].starter_name == "01_naive.cu" for n in beyond_gemm)
    assert exercises[50].starter_source == (KERNELS / "reference" / "rmsnorm" / "01_naive.cu").read_text()
    # Issue 15: the Hopper capsules climb the bf16_gemm ladder, each from the previous rung, for sm_90a (wgmma,
    # setmaxnreg and multicast exist only there), with the book's best rung beside.
    bf16 = sorted((KERNELS / "reference" / "bf16_gemm").glob("0*.cu"))
    assert {n for n, e in exercises.items() if e.problem == "bf16_gemm"} == {59, 60, 61, 67}
    for n, starter in zip((59, 60, 61), bf16[:3], strict=True):
        assert exercises[n].starter_name == starter.name and exercises[n].starter_source == starter.read_text()
        assert exercises[n].reference_step == "bf16_gemm/04_cluster_persistent.cu" and exercises[n].arch == "sm_90a"
    assert exercises[61].starter_name == "03_warp_specialized.cu"
    # Issue 46: capsule 67's exercise is written for Triton: the book's kernel for it is the Triton rung (the editor's
    # Triton text is the problem's own Triton starter; the exercise's starter stays the naive CUDA rung).
    assert exercises[67].reference_step == "bf16_gemm/triton_01_tiled_dot.py" and exercises[67].arch == "sm_90a"
    assert exercises[67].starter_name == "01_naive.cu" and "Triton" in exercises[67].statement
    # Issue 16: the attention capsules climb the attention ladder (51 and 52 from the naive three-kernel plan, 53
    # from the fused rung, 54 from the FA2 rung for sm_90a), the book's best rung beside; decode from its naive rung.
    attention = {n: e for n, e in exercises.items() if e.problem == "attention"}
    assert {n: e.starter_name for n, e in attention.items()} == {
        51: "01_naive.cu", 52: "01_naive.cu", 53: "02_fused_online.cu", 54: "03_fa2.cu",
    }  # fmt: skip
    assert attention[53].starter_source == (KERNELS / "reference" / "attention" / "02_fused_online.cu").read_text()
    assert all(e.reference_step == "attention/04_wgmma_tma.cu" for e in attention.values())
    assert attention[54].arch == "sm_90a" and attention[53].arch == "sm_90" and attention[51].gpu_time_limit_s == 300
    assert exercises[55].reference_step == "paged_decode/03_page_ring.cu"
    assert exercises[55].starter_source == (KERNELS / "reference" / "paged_decode" / "01_naive.cu").read_text()


def test_import_creates_updates_and_closes_exercises_idempotently(db, book):
    path = with_exercise(book, 1, EXERCISE)
    report = book_import(folder=book)
    exercise = Exercise.objects.get()
    assert report.related["exercise"] == ["created 01 sgemm"]
    assert (
        exercise.title == "Coalesce it" and exercise.gpu_time_limit_s == 90 and exercise.starter_name == "01_naive.cu"
    )
    assert "<strong>mapping</strong>" in exercise.statement_html

    assert book_import(folder=book).related["exercise"] == []  # unchanged: nothing to do

    path.write_text(path.read_text().replace("gpu_time_limit_s: 90", "gpu_time_limit_s: 30"))
    assert book_import(folder=book).related["exercise"] == ["updated 01 sgemm"]
    assert Exercise.objects.get().gpu_time_limit_s == 30

    path.write_text(path.read_text().replace(EXERCISE.replace("90", "30"), ""))
    assert book_import(folder=book).related["exercise"] == ["closed 01 sgemm"]
    assert Exercise.objects.get().is_open is False  # kept, with its submissions


def test_the_import_command_lists_exercise_changes(db, book, capsys):
    with_exercise(book, 1, EXERCISE)
    call_command("import_book", str(book))
    out = capsys.readouterr().out
    assert "exercise    created 01 sgemm" in out and "1 exercise change(s)" in out
    call_command("import_book", str(book))
    assert "0 exercise change(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "change, message",
    [
        (("problem: sgemm", "problem: fft"), "problem 'fft' is not one of"),
        (("reference/01_naive.cu", "reference/../../config/settings/base.py"), "must be a .cu file inside"),
        (("reference/01_naive.cu", "reference/99_missing.cu"), "starter file not found"),
        (("gpu_time_limit_s: 90", "gpu_time_limit_s: 0"), "gpu_time_limit_s must be"),
        (("  starter:", "  arch: sm_70\n  starter:"), "arch 'sm_70' is not one of"),
        (('  title: "Coalesce it"\n', ""), "missing required field(s): title"),
        (("  starter:", "  reference: example\n  starter:"), "reference 'example' must name a rung of the ladder"),
        (("  starter:", "  reference: reference/99_missing.cu\n  starter:"), "reference file not found"),
        # Issue 46: a reference may be a Triton rung, a starter may not (the editor's Triton text is the problem's).
        (("reference/01_naive.cu", "reference/bf16_gemm/triton_01_tiled_dot.py"), "must be a .cu file inside"),
        (
            ("  starter:", "  reference: reference/../problems/vector_add/example_triton.py\n  starter:"),
            "must be a .cu or .py file inside reference/",
        ),
        (("  starter:", "  reference: reference/autotune.py\n  starter:"), "a Triton rung's name is triton_NN_name.py"),
    ],
)
def test_a_bad_exercise_fails_the_import_with_its_file_and_changes_nothing(db, book, change, message):
    path = with_exercise(book, 1, EXERCISE.replace(*change))
    with pytest.raises(ImportFileError) as caught:
        book_import(folder=book)
    assert message in str(caught.value) and str(path) in str(caught.value)
    assert not Exercise.objects.exists()


def test_an_exercise_may_name_a_triton_rung_as_the_books_kernel(db, book):
    block = EXERCISE.replace("  starter:", "  reference: reference/softmax/triton_01_rows.py\n  starter:")
    with_exercise(book, 1, block.replace("problem: sgemm", "problem: softmax"))
    book_import(folder=book)
    assert Exercise.objects.get().reference_step == "softmax/triton_01_rows.py"


def test_a_starter_without_a_launch_plan_is_refused(db, book):
    (book / "exercises").mkdir()
    (book / "exercises" / "plain.cu").write_text("__global__ void k() {}\n")
    with_exercise(book, 1, EXERCISE.replace("reference/01_naive.cu", "exercises/plain.cu"))
    with pytest.raises(ImportFileError, match="no valid launch plan"):
        book_import(folder=book)

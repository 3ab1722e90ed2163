"""Choosing the baseline among the library's ways (kernels/baselines.py), on the CPU: the fastest median wins,
choices survive the trip to the parent and back, a handed choice is used without timing anything, and one that
names a way this version no longer offers is made again. The timing itself runs on the GPU (`python -m kernels
selftest --baselines-only`)."""

import contextlib
from types import SimpleNamespace

import pytest

from kernels import baselines, problems
from kernels.baselines import Candidate, Choice, Chosen


def test_the_fastest_median_wins_and_a_tie_goes_to_the_first_listed():
    assert baselines.fastest({"cuBLAS GemmEx": 0.187, "cuBLASLt #1": 0.180, "PyTorch addmm": 0.181}) == "cuBLASLt #1"
    assert baselines.fastest({"a": 1.0, "b": 1.0}) == "a"


def test_a_choice_survives_the_trip_through_the_setup_answer():
    choice = Choice("cuBLASLt #2", {"cuBLASLt #2": 1.3586, "cuBLAS GemmEx": 1.3955}, {"cuBLASLt #9": "refused"})
    chosen = Chosen()
    chosen.keep({"bf16_gemm:K=8192,M=8192,N=8192": choice.to_dict()})
    assert chosen.choices["bf16_gemm:K=8192,M=8192,N=8192"] == choice
    assert Chosen().to_dict() == {}


def test_a_problem_with_one_way_needs_no_timing():
    softmax = problems.load("softmax")
    shape = softmax.benchmarks[0]
    way, choice = Chosen().get(softmax, shape.sizes, shape.seed, ctx=None)  # no GPU: nothing may be timed
    assert way.run is softmax.module().baseline
    assert choice.name == softmax.baseline_name and choice.tried_ms == {}


def fake_problem(ways: list[Candidate]):
    module = SimpleNamespace(baseline_candidates=lambda sizes: ways)
    return SimpleNamespace(name="fake", module=lambda: module, baseline_name="fake baseline")


def test_a_handed_choice_is_used_as_it_is_and_a_stale_name_is_chosen_again(monkeypatch):
    ways = [Candidate("way A", lambda *a: None), Candidate("way B", lambda *a: None)]
    problem, sizes = fake_problem(ways), {"N": 8}
    key = baselines.key(problem, sizes)
    made = []
    monkeypatch.setattr(baselines, "choose", lambda *a: made.append(a) or Choice("way A", {"way A": 1.0}))

    chosen = Chosen()
    chosen.keep({key: {"name": "way B", "tried_ms": {"way A": 2.0, "way B": 1.0}}})
    way, choice = chosen.get(problem, sizes, 1, ctx=None)
    assert way is ways[1] and choice.tried_ms["way B"] == 1.0 and made == []

    chosen.keep({key: {"name": "cuBLASLt matmul (heuristic's #3 of 3)"}})  # the library now offers fewer
    way, _ = chosen.get(problem, sizes, 1, ctx=None)
    assert way is ways[0] and len(made) == 1
    assert chosen.choices[key].name == "way A"  # kept for the next shape's lookup


def test_the_gemm_and_attention_problems_list_their_ways_and_say_so():
    # Each problem whose baseline is the fastest of several ways lists them and says so in its baseline line
    # (their reference modules load cuBLAS, so their text is read here, not imported).
    for name in ("sgemm", "hgemm", "bf16_gemm", "attention"):
        problem = problems.load(name)
        assert "def baseline_candidates(" in (problems.PROBLEMS_DIR / name / "reference.py").read_text(), name
        assert "fastest" in problem.baseline_name, name


def test_a_problem_whose_ways_cannot_run_here_does_not_stop_the_others_from_being_chosen(monkeypatch):
    def no_torch(sizes):
        raise ImportError("No module named 'torch'")

    broken = SimpleNamespace(
        name="broken",
        module=lambda: SimpleNamespace(baseline_candidates=no_torch),
        benchmarks=[SimpleNamespace(sizes={"N": 1}, seed=1)],
    )
    ways = [Candidate("way A", lambda *a: None), Candidate("way B", lambda *a: None)]
    fine = fake_problem(ways)
    fine.benchmarks = [SimpleNamespace(sizes={"N": 8}, seed=2)]
    monkeypatch.setattr(baselines, "choose", lambda *a: Choice("way B", {"way A": 2.0, "way B": 1.0}))

    chosen = Chosen()
    chosen.choose_all([broken, fine], ctx=None)
    assert list(chosen.choices) == [baselines.key(fine, {"N": 8})]


def test_a_known_way_is_the_handed_one_and_an_unknown_shape_is_never_chosen_in_passing(monkeypatch):
    """What a spare warms at the benchmark shapes (checks.warm_baseline): only ways it was handed; choosing would
    time the library, alone on the device, which a spare's setup must not do."""
    ways = [Candidate("way A", lambda *a: None), Candidate("way B", lambda *a: None)]
    problem = fake_problem(ways)
    monkeypatch.setattr(baselines, "choose", lambda *a: pytest.fail("chose in passing"))
    chosen = Chosen()
    chosen.keep({baselines.key(problem, {"N": 8}): {"name": "way B", "tried_ms": {"way B": 1.0}}})
    assert chosen.known(problem, {"N": 8}) is ways[1]
    assert chosen.known(problem, {"N": 16}) is None
    chosen.keep({baselines.key(problem, {"N": 8}): {"name": "a way this version no longer has"}})
    assert chosen.known(problem, {"N": 8}) is None


def test_only_attention_warms_its_baseline_at_the_benchmark_shapes():
    """cuDNN's SDPA builds a graph per shape (1.9 s of four shapes in every attention job on the H100); the other
    libraries' first calls are short, and warming them would only spend a spare's setup."""
    assert [name for name in problems.available() if problems.load(name).warm_baseline] == ["attention"]


def test_a_spare_warms_with_the_librarys_arrays_only_and_a_failing_shape_is_skipped(monkeypatch):
    """checks.warm_baseline: the way gets the problem's inputs and outputs (no workspace: attention's is 4-8 GiB, and
    every spare would hold one at once), each shape in its own locked step; a shape whose call fails (memory, the
    library) is named in the answer and the next shapes are still warmed: an optimisation never fails a spare."""
    from kernels import checks

    calls = []

    def run(arrays, out, sizes, params, ctx):
        calls.append((sorted(arrays), out, sizes["N"]))
        if sizes["N"] == 8:
            raise MemoryError("out of memory allocating 8 GiB")

    way = Candidate("way A", run)
    problem = fake_problem([way])
    problem.benchmarks = [SimpleNamespace(sizes={"N": 8}, seed=1), SimpleNamespace(sizes={"N": 16}, seed=2)]
    problem.outputs, problem.output, problem.params = ("O",), "O", {}
    chosen = Chosen()
    for shape in problem.benchmarks:
        chosen.keep({baselines.key(problem, shape.sizes): {"name": "way A", "tried_ms": {"way A": 1.0}}})
    made = lambda problem, sizes, seed, layout_seed: {"X": f"x{sizes['N']}", "O": f"o{sizes['N']}"}  # noqa: E731
    monkeypatch.setattr(checks, "make_inputs", made)
    freed = []
    monkeypatch.setattr(
        checks,
        "cp",
        SimpleNamespace(
            cuda=SimpleNamespace(Device=lambda: SimpleNamespace(synchronize=lambda: None)),
            get_default_memory_pool=lambda: SimpleNamespace(free_all_blocks=lambda: freed.append(1)),
        ),
    )
    steps = []

    def step(name, locked=True):
        steps.append((name, locked))
        return contextlib.nullcontext()

    skipped = checks.warm_baseline(problem, SimpleNamespace(baselines=chosen), step=step)
    assert calls == [(["O", "X"], "o8", 8), (["O", "X"], "o16", 16)]
    assert skipped == ["N=8: MemoryError: out of memory allocating 8 GiB"]
    assert steps == [("baseline at the benchmark shapes", True)] * 2 and len(freed) == 2

"""The sweep tool's file format (kernels/tools/sweep.py), on the CPU: placeholders filled in code and plan, a
value no placeholder uses refused (a typo would judge the defaults twice), duplicate names refused; variants
chosen by name, several sweep files in one run, the deadline's rows."""

from types import SimpleNamespace

import pytest

from kernels.tools import sweep

TEMPLATE = """// a kernel
/* @plan
[[launch]]
kernel = "k<${ROWS}>"
grid = ["cdiv(N, ${ROWS})"]
block = [${THREADS}]
*/
template <int R> __global__ void k(const float* x, float* y, int n) {}
// $$ stays a dollar
"""


def write(tmp_path, spec: str, template: str = TEMPLATE):
    (tmp_path / "t.cu").write_text(template)
    path = tmp_path / "sweep.toml"
    path.write_text('problem = "vector_add"\ntemplate = "t.cu"\n' + spec)
    return path


def test_variants_fill_the_template_from_their_values_over_the_defaults(tmp_path):
    spec, variants = sweep.load(
        write(
            tmp_path,
            '[defaults]\nROWS = 4\nTHREADS = 256\n[[variants]]\nname = "a"\n[[variants]]\nname = "b"\nROWS = 8\n',
        )
    )
    assert spec["problem"] == "vector_add"
    assert [v.name for v in variants] == ["a", "b"]
    assert 'kernel = "k<4>"' in variants[0].source and "block = [256]" in variants[0].source
    assert 'grid = ["cdiv(N, 8)"]' in variants[1].source
    assert "// $ stays a dollar" in variants[1].source


def test_a_value_that_no_placeholder_uses_is_refused(tmp_path):
    path = write(tmp_path, '[defaults]\nROWS = 4\nTHREADS = 256\n[[variants]]\nname = "a"\nROWSS = 8\n')
    with pytest.raises(ValueError, match="ROWSS"):
        sweep.load(path)


def test_two_variants_with_one_name_are_refused(tmp_path):
    path = write(tmp_path, '[defaults]\nROWS = 4\nTHREADS = 256\n[[variants]]\nname = "a"\n[[variants]]\nname = "a"\n')
    with pytest.raises(ValueError, match="two variants"):
        sweep.load(path)


def test_every_sweep_in_the_repository_loads():
    from pathlib import Path

    specs = sorted(Path(sweep.__file__).parents[1].glob("reference/**/sweep*.toml")) + sorted(
        Path(sweep.__file__).parents[1].glob("reference/sweeps/*.toml")
    )
    assert len(specs) >= 6
    for spec in specs:
        _, variants = sweep.load(spec)
        assert variants, spec


def test_a_sweep_file_may_set_its_time_budget(tmp_path):
    _, variants = sweep.load(write(tmp_path, "time_budget = 4\n[defaults]\nROWS = 4\nTHREADS = 256\n"))
    assert [(v.name, v.time_budget_s) for v in variants] == [("defaults", 4.0)]
    _, variants = sweep.load(write(tmp_path, "[defaults]\nROWS = 4\nTHREADS = 256\n"))
    assert variants[0].time_budget_s == sweep.DEFAULT_TIME_BUDGET_S


def test_named_variants_are_chosen_in_the_files_order_and_an_unknown_name_is_refused(tmp_path):
    spec = "[defaults]\nROWS = 4\nTHREADS = 256\n" + "".join(f'[[variants]]\nname = "{n}"\n' for n in "abc")
    path = write(tmp_path, spec)
    assert [v.name for v in sweep.select(str(path))] == ["a", "b", "c"]
    assert [v.name for v in sweep.select(f"{path}:c,a")] == ["a", "c"]
    with pytest.raises(ValueError, match="'d'"):
        sweep.select(f"{path}:a,d")


def test_every_sweep_named_on_the_command_line_is_compiled_and_reported_by_problem(tmp_path, capsys):
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir(), second.mkdir()
    code = sweep.main(
        [
            "--compile-only",
            f"{write(first, VECTOR_ADD, VECTOR_ADD_TEMPLATE)}:fine",
            str(write(second, BROKEN, VECTOR_ADD_TEMPLATE)),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1  # one variant did not compile
    assert "vector_add: compiled 1 of 2 variants" in out
    assert "vector_add/fine: compiled" in out and "vector_add/broken: compile_error" in out
    assert "vector_add/slow" not in out  # not named on the command line


def test_a_variant_the_deadline_skipped_says_so_below_the_judged_ones(tmp_path):
    _, variants = sweep.load(write(tmp_path, VECTOR_ADD, VECTOR_ADD_TEMPLATE))
    compiled = sweep.compile_all(variants[:1])
    rows = sweep.table(variants[:1], compiled, [None])
    assert rows[-1] == f"| fine | - | - | {sweep.NOT_JUDGED} |"


VECTOR_ADD_TEMPLATE = """/* @plan
[[launch]]
kernel = "vector_add"
grid = ["cdiv(N, 256)"]
block = [256]
*/
extern "C" __global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i] ${TAIL}
}
"""
VECTOR_ADD = '[defaults]\nTAIL = ";"\n[[variants]]\nname = "fine"\n[[variants]]\nname = "slow"\n'
BROKEN = '[defaults]\nTAIL = ";"\n[[variants]]\nname = "broken"\nTAIL = "+ undefined_name;"\n'


def test_variants_rank_by_their_share_of_the_roofline_not_of_a_noisy_baseline():
    def result(*shapes):
        return SimpleNamespace(benchmarks=[SimpleNamespace(pct_of_roofline=r, pct_of_baseline=b) for r, b in shapes])

    # gemv on the H200 (2026-12-05): the slower variant read the higher % of its baseline
    slower, faster = result((75.4, 454.4), (73.5, 406.0)), result((80.9, 230.4), (80.0, 164.1))
    assert sweep.score(faster) > sweep.score(slower)


def test_a_variant_may_be_a_whole_file_judged_as_it_is(tmp_path):
    (tmp_path / "rung.cu").write_text("// the rung itself: ${NOT_A_PLACEHOLDER} stays as written\n")
    path = write(tmp_path, '[defaults]\nROWS = 4\nTHREADS = 256\n[[variants]]\nname = "rung"\nfile = "rung.cu"\n')
    (variant,) = sweep.select(str(path))
    assert variant.source == "// the rung itself: ${NOT_A_PLACEHOLDER} stays as written\n"
    path = write(
        tmp_path, '[defaults]\nROWS = 4\nTHREADS = 256\n[[variants]]\nname = "r"\nfile = "rung.cu"\nROWS = 8\n'
    )
    with pytest.raises(ValueError, match="sets no placeholders"):
        sweep.load(path)

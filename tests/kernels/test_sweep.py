"""The sweep tool's file format (kernels/tools/sweep.py), on the CPU: placeholders filled in code and plan, a
value no placeholder uses refused (a typo would judge the defaults twice), duplicate names refused."""

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


def write(tmp_path, spec: str):
    (tmp_path / "t.cu").write_text(TEMPLATE)
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
